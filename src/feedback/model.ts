import { type Static, Type } from '@sinclair/typebox'
import { RefusalError } from '../errors'
import { refined, ruled } from '../http/action-schema'

export const FEEDBACK_KINDS = ['feature_request', 'friction', 'bug', 'note'] as const

/** POST /feedback body, typed, as OpenAPI documents it; FeedbackInput is what is checked. */
export const FeedbackBody = Type.Object({
  kind: Type.Union(FEEDBACK_KINDS.map((k) => Type.Literal(k))),
  summary: Type.String({ minLength: 1, maxLength: 200, description: '1 to 200 characters' }),
  details: Type.Optional(Type.String({ maxLength: 5000, description: 'up to 5000 characters' })),
  context: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'JSON object up to 4 KB' })),
  projectId: Type.Optional(Type.String()),
})

/** docs/reference/account.md's refusal of a feedback field: its own error code, in words. */
const bad = (code: string, message: string) => () => new RefusalError(400, code, { message })

/** The most bytes `context` may take, written as JSON (docs/reference/account.md). */
export const MAX_CONTEXT_BYTES = 4096
const contextBytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v)).length
const isObject = (v: unknown) => !!v && typeof v === 'object' && !Array.isArray(v)

/**
 * The body as the service checks it (checkInput, src/http/action-schema.ts), field by field in
 * this order, each with its error code; null counts as absent for the optional fields.
 */
export const FeedbackInput = Type.Object(
  {
    kind: ruled(
      Type.Union(FEEDBACK_KINDS.map((k) => Type.Literal(k))),
      bad('invalid_kind', `kind must be one of: ${FEEDBACK_KINDS.join(', ')}`),
    ),
    summary: ruled(
      Type.String({ pattern: '\\S', maxLength: 200 }),
      bad('invalid_summary', 'summary must be a string of 1 to 200 characters'),
    ),
    details: Type.Optional(
      ruled(
        Type.Union([Type.String({ maxLength: 5000 }), Type.Null()]),
        bad('invalid_details', 'details must be a string of at most 5000 characters'),
      ),
    ),
    context: Type.Optional(
      refined(
        ruled(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]), (v) =>
          isObject(v)
            ? bad('invalid_context', `context must be at most ${MAX_CONTEXT_BYTES / 1024} KB of JSON`)()
            : bad('invalid_context', 'context must be a JSON object')(),
        ),
        (v) => v === null || contextBytes(v) <= MAX_CONTEXT_BYTES,
      ),
    ),
    projectId: Type.Optional(ruled(Type.Union([Type.String(), Type.Null()]), bad('invalid_projectId', 'projectId must be a string'))),
  },
  { additionalProperties: true },
)
export type FeedbackInput = Static<typeof FeedbackInput>
