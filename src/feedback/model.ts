import { Type } from '@sinclair/typebox'

export const FEEDBACK_KINDS = ['feature_request', 'friction', 'bug', 'note'] as const

/** POST /feedback body, typed; the route checks it loosely (asLoose) so each field gets its own error code. */
export const FeedbackBody = Type.Object({
  kind: Type.Union(FEEDBACK_KINDS.map((k) => Type.Literal(k))),
  summary: Type.String({ minLength: 1, maxLength: 200, description: '1 to 200 characters' }),
  details: Type.Optional(Type.String({ maxLength: 5000, description: 'up to 5000 characters' })),
  context: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'JSON object up to 4 KB' })),
  projectId: Type.Optional(Type.String()),
})
