/**
 * The body of POST /mutate: the batch's own schema, and every action's body by name (each
 * owned by its module: src/nodes/input.ts, src/iterations/model.ts, src/projects/model.ts,
 * src/work/model.ts), combined into MutateBody for OpenAPI and importable without any service
 * (the MCP server reuses them). The messages come from src/http/action-schema.ts.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { RevertBody } from '../history/model'
import { action, discriminated, NodeId, PREFIX_ITEMS, ProjectId, refined, ruled } from '../http/action-schema'
import {
  AddIterationBody,
  DeleteIterationBody,
  IterationOut,
  NewIteration,
  ReorderIterationsBody,
  UpdateIterationBody,
} from '../iterations/model'
import { AddBody, ClassifyBody, DeleteBody, nodeFor, RestoreBody, UpdateBody } from '../nodes/input'
import { NodeOut } from '../nodes/model'
import type { ActionName } from '../ports/actions'
import { AddProjectBody, RenameProjectBody } from '../projects/model'
import { MAX_NOTE, MAX_PROPOSAL_MUTATIONS, MAX_REASON, MAX_TITLE, ProposalOut } from '../proposals/model'
import { ClaimBody, ReleaseClaimBody, RenewClaimBody } from '../work/model'

/** the actions a batch's entry may name (a misspelt one fails tsc) */
const BATCH_ACTIONS = ['add', 'update', 'delete', 'addIteration'] as const satisfies readonly ActionName[]
export const MAX_BATCH = 1000
const ENTRY_PROJECT = "entries carry no projectId of their own (the batch's projectId applies)"
const entry = <A extends string, P extends Record<string, TSchema>>(name: A, properties: P) =>
  Type.Object(
    {
      action: Type.Literal(name),
      projectId: Type.Optional(
        ruled(Type.String({ description: "entries carry no projectId of their own; if sent, the batch's" }), ENTRY_PROJECT),
      ),
      ...properties,
    },
    { title: `batch ${name}` },
  )
export const BatchEntry = discriminated(
  ruled(
    Type.Union([
      entry('add', { node: nodeFor(true) }),
      entry('update', {
        nodeId: NodeId(),
        data: UpdateBody.properties.data,
        parentId: UpdateBody.properties.parentId,
        claimToken: UpdateBody.properties.claimToken,
        ifRev: UpdateBody.properties.ifRev,
        force: UpdateBody.properties.force,
      }),
      entry('delete', { nodeId: NodeId(), claimToken: DeleteBody.properties.claimToken, ifRev: DeleteBody.properties.ifRev }),
      entry('addIteration', { iteration: NewIteration }),
    ]),
    `action must be one of: ${BATCH_ACTIONS.join(', ')}`,
  ),
  'action',
)
/** A batch's `mutations` (a proposal's too): 1 to `max` entries, each checked as a batch's, with docs/reference/mutate.md's messages. */
const Mutations = (max: number, per: 'batch' | 'proposal', asWhat: string) =>
  Object.assign(
    ruled(Type.Array(BatchEntry, { minItems: 1, maxItems: max }), (value) =>
      Array.isArray(value) && value.length > max
        ? `mutations has ${value.length} entries; at most ${max} are allowed per ${per}`
        : `mutations is required: a non-empty array of add, update, delete or addIteration entries${asWhat}`,
    ),
    { [PREFIX_ITEMS]: 'mutations' },
  )
/** The first entry that names a projectId other than the body's, or -1. */
const foreignEntry = (body: { projectId?: unknown; mutations?: unknown }) =>
  Array.isArray(body.mutations)
    ? body.mutations.findIndex((e: { projectId?: unknown } | null) => e?.projectId !== undefined && e.projectId !== body.projectId)
    : -1
/** A batch or a proposal whose entries name no project but the body's (an entry's own projectId, when sent, must be it). */
const entriesInProject = <S extends TSchema>(schema: S) =>
  refined(
    ruled(schema, (body) => `mutations[${foreignEntry(body as Parameters<typeof foreignEntry>[0])}]: ${ENTRY_PROJECT}`),
    (body) => foreignEntry(body as Parameters<typeof foreignEntry>[0]) === -1,
  )
export const BatchBody = entriesInProject(
  action(
    'batch',
    {
      projectId: ProjectId,
      mutations: Mutations(MAX_BATCH, 'batch', ''),
    },
    'Up to 1,000 add, update, delete and addIteration entries in one transaction; draft- ids are remapped.',
  ),
)

export type BatchBody = Static<typeof BatchBody>
export type BatchEntry = Static<typeof BatchEntry>

// ---- live.md §5: proposals (a batch's entries, at most 500, checked as a batch's) ----

/** What applyProposal, rejectProposal and withdrawProposal name first: the project and the proposal. */
const OfProposal = {
  projectId: ProjectId,
  proposalId: ruled(
    Type.String({ minLength: 1, maxLength: 100, description: 'prp_… (GET /proposals)' }),
    'proposalId is required: the id of a proposal (GET /api/v1/proposals)',
  ),
}

export const ProposeBody = entriesInProject(
  action(
    'propose',
    {
      projectId: ProjectId,
      title: ruled(
        Type.String({ minLength: 1, maxLength: MAX_TITLE, pattern: '\\S' }),
        `title is required: 1 to ${MAX_TITLE} characters saying what the proposal does`,
      ),
      note: Type.Optional(ruled(Type.String({ maxLength: MAX_NOTE }), `note must be a string of at most ${MAX_NOTE} characters`)),
      mutations: Mutations(MAX_PROPOSAL_MUTATIONS, 'proposal', ' (as a batch)'),
    },
    'Writes nothing; a person applies it.',
  ),
)
export type ProposeBody = Static<typeof ProposeBody>

export const ApplyProposalBody = action(
  'applyProposal',
  {
    ...OfProposal,
    force: Type.Optional(
      ruled(
        Type.Boolean({ description: 'apply even if its targets changed since it was proposed (their values are overwritten)' }),
        'force must be true or false',
      ),
    ),
  },
  'Apply as one batch; 409 stale_write unless force.',
)
export type ApplyProposalBody = Static<typeof ApplyProposalBody>

export const RejectProposalBody = action(
  'rejectProposal',
  {
    ...OfProposal,
    reason: Type.Optional(ruled(Type.String({ maxLength: MAX_REASON }), `reason must be a string of at most ${MAX_REASON} characters`)),
  },
  'Close it unapplied.',
)
export type RejectProposalBody = Static<typeof RejectProposalBody>

export const WithdrawProposalBody = action('withdrawProposal', OfProposal, 'Yours.')
export type WithdrawProposalBody = Static<typeof WithdrawProposalBody>

/**
 * Every action's body by name: what the mutate route and the MCP tool validate against. Keyed by
 * the action names of src/ports/actions.ts and written in their order (a misspelt or missing row
 * fails `tsc`).
 */
export const ACTION_BODIES = {
  add: AddBody,
  update: UpdateBody,
  delete: DeleteBody,
  restore: RestoreBody,
  batch: BatchBody,
  classify: ClassifyBody,
  addIteration: AddIterationBody,
  updateIteration: UpdateIterationBody,
  deleteIteration: DeleteIterationBody,
  reorderIterations: ReorderIterationsBody,
  addProject: AddProjectBody,
  renameProject: RenameProjectBody,
  claim: ClaimBody,
  renewClaim: RenewClaimBody,
  releaseClaim: ReleaseClaimBody,
  revert: RevertBody,
  propose: ProposeBody,
  applyProposal: ApplyProposalBody,
  rejectProposal: RejectProposalBody,
  withdrawProposal: WithdrawProposalBody,
} as const satisfies Record<ActionName, TSchema>

/** The body of POST /mutate: one of the twenty actions, chosen by `action`. */
export const MutateBody = Type.Union(Object.values(ACTION_BODIES), {
  description: 'One action per call, chosen by action; project-scoped actions also need projectId.',
})

// ---- what each action answers (200) ----

const Meta = Type.Optional(Type.Object({}, { additionalProperties: true, description: '_tip, advisory, focus' }))
const ClaimOut = Type.Object({
  nodeId: Type.String(),
  agent: Type.String(),
  claimToken: Type.String({ description: 'secret: send it with your writes of this node, renewClaim and releaseClaim' }),
  rev: Type.String({ description: "the node's rev (send it as ifRev with your writes)" }),
  expiresAt: Type.String({ description: 'ISO 8601 UTC' }),
})
/** The changes a write recorded (history.md 2), to take it back with `revert`; absent when it recorded none. */
const ChangeIds = Type.Optional(
  Type.Array(Type.String(), {
    description: 'the changes this write recorded (GET /history): revert them with {action:"revert", changeIds}',
  }),
)
const ok = <P extends Record<string, TSchema>>(title: string, properties: P) =>
  Type.Object({ success: Type.Literal(true), changeIds: ChangeIds, ...properties, _meta: Meta }, { title })

/** The 200 body of POST /mutate: the result of the action sent. */
export const MutateResult = Type.Union(
  [
    ok('add, update, restore, classify', { node: NodeOut }),
    ok('delete', {
      deleted: Type.Object({ id: Type.String(), type: Type.String() }),
      orphanedChildren: Type.Array(Type.String(), { description: 'the direct children, deleted with it' }),
      changelogId: Type.Integer(),
    }),
    ok('batch', {
      results: Type.Array(Type.Object({ action: Type.String() }, { additionalProperties: true }), {
        description: 'one per entry, in order',
      }),
      idMap: Type.Record(Type.String(), Type.String(), { description: 'draft- id → real id' }),
    }),
    ok('addIteration, updateIteration', { iteration: IterationOut }),
    ok('deleteIteration', { deleted: Type.Object({ name: Type.String() }), movedToLater: Type.Array(Type.String()) }),
    ok('reorderIterations', { iterations: Type.Array(IterationOut) }),
    ok('addProject', {
      project: Type.Object({ id: Type.String(), name: Type.String() }),
      iterations: Type.Array(
        Type.Object({ name: Type.String(), status: Type.String(), system: Type.Boolean() }, { additionalProperties: true }),
      ),
    }),
    ok('renameProject', { project: Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: true }) }),
    ok('claim', { claims: Type.Array(ClaimOut, { description: 'empty when nothing was ready' }) }),
    ok('renewClaim', { claim: ClaimOut }),
    ok('releaseClaim', { released: Type.Object({ nodeId: Type.String() }) }),
    ok('propose, applyProposal, rejectProposal, withdrawProposal', { proposal: ProposalOut }),
    ok('revert', {
      reverted: Type.Optional(Type.Integer({ description: 'how many changes were taken back' })),
      changeIds: Type.Optional(Type.Array(Type.String(), { description: 'the changes the revert made (action revert)' })),
      dryRun: Type.Optional(Type.Literal(true)),
      changes: Type.Optional(
        Type.Array(Type.Object({}, { additionalProperties: true }), {
          description: 'dryRun: {target, action, before, after} it would make',
        }),
      ),
      conflicts: Type.Optional(
        Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'dryRun: what stands in the way' }),
      ),
    }),
  ],
  { description: 'The result of the action sent.' },
)
