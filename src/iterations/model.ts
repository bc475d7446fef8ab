import { type Static, Type } from '@sinclair/typebox'
import { action, NodeId, NonBlank, ProjectId, ruled } from '../http/action-schema'
import { TYPED } from '../http/query'
import { typedParams } from '../http/typed-params'
import { formatRev, IfRev } from '../ports/rev'
import type { IterationRow } from './queries'

/** GET /iterations' query values (strings) with docs/reference/reads.md's messages, checked after the access check (checkInput). */
export const IterationsQuery = Type.Object(
  {
    projectId: Type.String(),
    status: Type.Optional(ruled(Type.Union([Type.Literal('active'), Type.Literal('done')]), 'status must be one of: active, done')),
    current: Type.Optional(
      ruled(
        Type.Union([Type.Literal('true'), Type.Literal('false')], {
          description: 'true: only the current iteration (first active, non-system)',
          [TYPED]: Type.Boolean(),
        }),
        'current must be true or false',
      ),
    ),
  },
  { additionalProperties: false },
)
/** GET /iterations parameters, typed, as OpenAPI and the MCP tool document them. */
export const IterationsParams = typedParams(IterationsQuery)

export const LATER = 'Later'

/** An iteration as the API answers it (GET /iterations and the iteration actions). */
export const IterationOut = Type.Object({
  name: Type.String(),
  rev: Type.String({ description: 'the revision: changes with every committed change of the iteration; send it back as ifRev' }),
  status: Type.Union([Type.Literal('active'), Type.Literal('done')]),
  system: Type.Boolean(),
  sortOrder: Type.Integer(),
  gitTags: Type.Array(Type.String()),
  completedAt: Type.Union([Type.Number({ description: 'milliseconds since the epoch' }), Type.Null()]),
})
export type Iteration = Static<typeof IterationOut>

export function toIteration(row: IterationRow): Iteration {
  return {
    name: row.name,
    // a row of this write's own making (a batch's new iteration, read back by name) may have none yet
    rev: row.rev == null ? '' : formatRev('iteration', row.name, row.rev),
    status: row.status,
    system: row.system,
    sortOrder: row.sort_order,
    gitTags: row.git_tags ?? [],
    completedAt: row.completed_at ? new Date(row.completed_at).getTime() : null,
  }
}

/** The first active, non-system iteration by sortOrder (rows come sorted). */
export function currentOf<T extends { status: string; system: boolean }>(sorted: T[]): T | null {
  return sorted.find((i) => i.status === 'active' && !i.system) ?? null
}

// ---- the input of the iteration actions (POST /mutate), with docs/reference/mutate.md's messages ----

/** At most this many git tags per iteration, each 1 to this many characters. */
export const GIT_TAGS = { max: 50, length: 200 } as const
const GitTags = ruled(Type.Array(Type.String({ minLength: 1, maxLength: GIT_TAGS.length }), { maxItems: GIT_TAGS.max }), (value) =>
  !Array.isArray(value) || value.some((t) => typeof t !== 'string')
    ? 'gitTags must be an array of strings'
    : value.length > GIT_TAGS.max
      ? `gitTags must have at most ${GIT_TAGS.max} entries`
      : `gitTags entries must be 1 to ${GIT_TAGS.length} characters`,
)
const IterationStatus = ruled(Type.Union([Type.Literal('active'), Type.Literal('done')]), 'status must be one of: active, done')

export const NewIteration = ruled(
  Type.Object({
    name: NonBlank('iteration.name is required: a non-empty string', 'unique in the project; at most 100 characters after trimming'),
    status: Type.Optional(IterationStatus),
    gitTags: Type.Optional(GitTags),
  }),
  'iteration is required: {name, status?, gitTags?}',
)

export const AddIterationBody = action('addIteration', { projectId: ProjectId, iteration: NewIteration }, 'Create an iteration.')
const ITERATION_FIELDS = ['name', 'status', 'gitTags', 'sortOrder']
export const UpdateIterationBody = action(
  'updateIteration',
  {
    projectId: ProjectId,
    iterationName: NodeId('iterationName is required'),
    data: ruled(
      Type.Object(
        {
          name: Type.Optional(NonBlank('data.name is required: a non-empty string', 'the new name')),
          status: Type.Optional(IterationStatus),
          gitTags: Type.Optional(GitTags),
          sortOrder: Type.Optional(ruled(Type.Integer(), 'sortOrder must be an integer')),
        },
        { additionalProperties: false },
      ),
      (value) => {
        if (!value || typeof value !== 'object' || Array.isArray(value)) return 'data is required: {name?, status?, gitTags?, sortOrder?}'
        const unknown = Object.keys(value).filter((k) => !ITERATION_FIELDS.includes(k))
        return `Unknown iteration fields: ${unknown.join(', ')}; valid: ${ITERATION_FIELDS.join(', ')}`
      },
    ),
    ifRev: Type.Optional(IfRev),
  },
  'Rename an iteration, change its status, gitTags or sortOrder (PATCH).',
)
export const DeleteIterationBody = action(
  'deleteIteration',
  { projectId: ProjectId, iterationName: NodeId('iterationName is required'), ifRev: Type.Optional(IfRev) },
  'Delete an iteration; its jobs and tasks move to Later. Refused for system iterations.',
)
export const ReorderIterationsBody = action(
  'reorderIterations',
  { projectId: ProjectId, order: ruled(Type.Array(Type.String()), 'order is required: the full ordered list of iteration names') },
  'Set the display order: order lists every iteration of the project exactly once.',
)

export type NewIteration = Static<typeof NewIteration>
export type AddIterationBody = Static<typeof AddIterationBody>
export type UpdateIterationBody = Static<typeof UpdateIterationBody>
export type DeleteIterationBody = Static<typeof DeleteIterationBody>
export type ReorderIterationsBody = Static<typeof ReorderIterationsBody>
