import { type Static, Type } from '@sinclair/typebox'
import { action, IntegerText, ProjectId, ruled } from '../http/action-schema'
import { typedParams } from '../http/typed-params'
import { CLAIM_TOKEN_MAX } from '../ports/claim-token'

export const READY_LIMIT = { default: 20, max: 100 } as const

/** GET /ready's query string with its messages (docs/agents.md), checked after the access check (checkInput). */
export const ReadyQuery = Type.Object(
  {
    projectId: Type.String(),
    iteration: Type.Optional(Type.String({ description: 'only the work items of this iteration (by name)' })),
    limit: Type.Optional(
      IntegerText(
        1,
        READY_LIMIT.max,
        `limit must be an integer from 1 to ${READY_LIMIT.max}`,
        `at most this many items, 1 to ${READY_LIMIT.max} (default ${READY_LIMIT.default})`,
      ),
    ),
  },
  { additionalProperties: false },
)
/** GET /ready parameters, typed, as OpenAPI documents them. */
export const ReadyParams = typedParams(ReadyQuery)

// ---- the input of the claim actions (POST /mutate, docs/agents.md), with docs/reference/mutate.md's messages ----

const LeaseSeconds = ruled(
  Type.Integer({ minimum: 30, maximum: 86_400, description: 'how long the claim lasts unless renewed, 30 to 86400 seconds (default 900)' }),
  'leaseSeconds must be an integer from 30 to 86400',
)
export const ClaimBody = action(
  'claim',
  {
    projectId: ProjectId,
    agent: ruled(
      Type.String({
        minLength: 1,
        maxLength: 100,
        pattern: '\\S',
        description: 'who works on it, 1 to 100 characters (e.g. claude-code@laptop)',
      }),
      'agent is required: a name of 1 to 100 characters (e.g. claude-code@laptop)',
    ),
    nodeIds: Type.Optional(
      ruled(
        Type.Array(Type.String({ minLength: 1 }), {
          minItems: 1,
          maxItems: 100,
          description: 'claim exactly these work items, all or none',
        }),
        'nodeIds must be a non-empty array of node ids (at most 100)',
      ),
    ),
    count: Type.Optional(
      ruled(
        Type.Integer({ minimum: 1, maximum: 20, description: 'without nodeIds: claim up to this many ready items (default 1)' }),
        'count must be an integer from 1 to 20',
      ),
    ),
    leaseSeconds: Type.Optional(LeaseSeconds),
  },
  'Claim work items for an agent: the listed nodeIds (all or none), or up to count ready items in GET /ready order, one per approach first.',
)
export const RenewClaimBody = action(
  'renewClaim',
  {
    projectId: ProjectId,
    claimToken: ruled(Type.String({ minLength: 1, maxLength: CLAIM_TOKEN_MAX }), 'claimToken is required'),
    leaseSeconds: Type.Optional(LeaseSeconds),
  },
  'Extend a live claim by leaseSeconds from now.',
)
export const ReleaseClaimBody = action(
  'releaseClaim',
  { projectId: ProjectId, claimToken: ruled(Type.String({ minLength: 1, maxLength: CLAIM_TOKEN_MAX }), 'claimToken is required') },
  'End a live claim; the item is ready again for others.',
)

export type ClaimBody = Static<typeof ClaimBody>
export type RenewClaimBody = Static<typeof RenewClaimBody>
export type ReleaseClaimBody = Static<typeof ReleaseClaimBody>
