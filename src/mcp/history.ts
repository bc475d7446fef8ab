/**
 * get_history (history.md, 6): the changes of a project, a node or an agent, newest first, as
 * GET /history answers them. Read-only; taking changes back is mutate's `revert`. Its arguments
 * are written compactly (the tool list is held to 3,500 tokens); the route checks each call.
 */
import { Type } from '@sinclair/typebox'

export const HistoryArgs = Type.Object({
  projectId: Type.String(),
  nodeId: Type.Optional(Type.String()),
  agent: Type.Optional(Type.String()),
  userId: Type.Optional(Type.String()),
  via: Type.Optional(Type.Union(['api', 'mcp', 'app', 'workflow', 'cli'].map((v) => Type.Literal(v)))),
  requestId: Type.Optional(Type.String()),
  since: Type.Optional(Type.String()),
  until: Type.Optional(Type.String()),
  after: Type.Optional(Type.String()),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
})

export const HISTORY_TOOL = {
  name: 'get_history',
  description: 'Who changed what, newest first, with changeIds for mutate revert. GET /history.',
  method: 'GET' as const,
  path: '/history',
  schema: HistoryArgs,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  outputSchema: { type: 'object', properties: { changes: { type: 'array' } }, required: ['changes'] },
}
