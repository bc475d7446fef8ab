import { Type } from '@sinclair/typebox'

/** GET /ready parameters, typed (the MCP tool publishes this one; the route takes its query-string form). */
export const ReadyParams = Type.Object({
  projectId: Type.String(),
  iteration: Type.Optional(Type.String({ description: 'only the work items of this iteration (by name)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'at most this many items, 1 to 100 (default 20)' })),
})
