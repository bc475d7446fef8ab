/**
 * Proposals (live.md §5): what is stored, what the API answers, and GET /proposals' query. The
 * bodies of the four /mutate actions name batch entries, so they live with the batch
 * (src/mutate/model.ts).
 */
import { type Static, Type } from '@sinclair/typebox'
import { IntegerText, refined, ruled } from '../http/action-schema'

export const PROPOSAL_STATUSES = ['open', 'applied', 'rejected', 'withdrawn'] as const
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number]

/** A proposal's mutations: as a batch's, but at most this many. */
export const MAX_PROPOSAL_MUTATIONS = 500
export const MAX_TITLE = 200
export const MAX_NOTE = 2000
export const MAX_REASON = 2000

/** GET /proposals: a page holds at most this many. */
export const MAX_LIMIT = 100
export const DEFAULT_LIMIT = 20

/** A proposal id as Arbor hands them out. */
export const PROPOSAL_ID = /^prp_[0-9A-Za-z]{1,64}$/

/** A row of `proposals` (sql/migrations/0024-proposals.sql). */
export interface ProposalRow {
  seq: string | number
  id: string
  project_id: string
  status: ProposalStatus
  title: string
  note: string | null
  actor: Record<string, unknown>
  created_at: Date | string
  mutations: unknown[]
  preview: { changes: unknown[] }
  base_revs: Record<string, string>
  closed_by: Record<string, unknown> | null
  closed_at: Date | string | null
  reason: string | null
  change_ids: string[] | null
}

/** GET /proposals' query values (strings), checked after the access check. */
export const ProposalsQuery = Type.Object(
  {
    projectId: Type.String(),
    status: Type.Optional(
      ruled(Type.Union(PROPOSAL_STATUSES.map((s) => Type.Literal(s))), `status must be one of ${PROPOSAL_STATUSES.join(', ')}`),
    ),
    after: Type.Optional(
      refined(
        ruled(Type.String(), {
          message: 'after must be the next value of a previous page of GET /proposals',
          tip: 'Omit after to read from the newest proposal.',
        }),
        (s) => PROPOSAL_ID.test(s),
      ),
    ),
    limit: Type.Optional(IntegerText(1, MAX_LIMIT, `limit must be an integer from 1 to ${MAX_LIMIT}`)),
  },
  { additionalProperties: false },
)
export type ProposalsQuery = Static<typeof ProposalsQuery>

const Actor = Type.Object(
  {
    userId: Type.Union([Type.String(), Type.Null()]),
    userName: Type.Union([Type.String(), Type.Null()]),
    keyId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    agent: Type.Optional(Type.String()),
    via: Type.String(),
  },
  { description: "history.md's actor" },
)
const PlannedChange = Type.Object(
  {
    target: Type.Object({ kind: Type.String(), id: Type.String(), type: Type.Optional(Type.String()) }),
    action: Type.String({ description: 'add, update, delete; addIteration' }),
    before: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    after: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
  },
  { additionalProperties: true },
)

/** A proposal as every answer shows it. */
export const ProposalOut = Type.Object(
  {
    proposalId: Type.String(),
    projectId: Type.String(),
    status: Type.String({ description: PROPOSAL_STATUSES.join(', ') }),
    title: Type.String(),
    note: Type.Optional(Type.String()),
    actor: Actor,
    createdAt: Type.String({ description: 'ISO 8601 UTC' }),
    mutations: Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'the batch entries, as sent' }),
    preview: Type.Object(
      {
        changes: Type.Array(PlannedChange, {
          description: "what applying it would do, in history.md's change shape (an added node's target.id: the id it would get)",
        }),
      },
      { additionalProperties: true },
    ),
    baseRevs: Type.Record(Type.String(), Type.String(), {
      description: 'node id → the rev it had when proposed; checked as ifRev when applied',
    }),
    appliedBy: Type.Optional(Actor),
    appliedAt: Type.Optional(Type.String()),
    changeIds: Type.Optional(Type.Array(Type.String(), { description: 'the changes applying it recorded (GET /history)' })),
    rejectedBy: Type.Optional(Actor),
    rejectedAt: Type.Optional(Type.String()),
    reason: Type.Optional(Type.String()),
    withdrawnAt: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
)
export type ProposalView = Static<typeof ProposalOut>

const Conflict = Type.Object(
  {
    target: Type.Object({ kind: Type.String(), id: Type.String() }),
    field: Type.String(),
    yours: Type.Unknown({ description: "the proposal's value" }),
    theirs: Type.Unknown({ description: 'the value now' }),
    changeId: Type.Union([Type.String(), Type.Null()]),
    actor: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    at: Type.Union([Type.String(), Type.Null()]),
  },
  { description: "live.md §1's conflict: a field the proposal sets that changed after its baseRevs" },
)

/** A proposal as GET /proposals/:proposalId answers it: with its conflicts now. */
export const ProposalReadOut = Type.Object(
  {
    ...ProposalOut.properties,
    conflicts: Type.Array(Conflict, { description: 'fields changed since it was proposed: applying it answers 409 unless force' }),
    problem: Type.Optional(
      Type.Object(
        { status: Type.Integer(), error: Type.String(), message: Type.String() },
        { description: 'why it cannot be applied as it stands (a batch rule it breaks now); preview is then the one it was made with' },
      ),
    ),
  },
  { additionalProperties: true },
)

/** GET /proposals/:proposalId's answer (live.md §5). */
export interface ProposalRead {
  proposal: Static<typeof ProposalReadOut>
  _meta?: Record<string, unknown>
}
