import { type Static, Type } from '@sinclair/typebox'
import { action, IntegerText, ProjectId, parseInput, refined, ruled } from '../http/action-schema'
import { type Actor, VIAS } from '../ports/actor'

/** GET /history: at most this many changes a page (history.md, 2). */
export const MAX_LIMIT = 200
export const DEFAULT_LIMIT = 50

export type ChangeAction =
  | 'add'
  | 'update'
  | 'delete'
  | 'restore'
  | 'revert'
  | 'addIteration'
  | 'updateIteration'
  | 'deleteIteration'
  | 'reorderIterations'

/** A node as a change keeps it; an iteration as its resource fields (name, status, sortOrder, gitTags). */
export type State = Record<string, unknown>

/** One change a write makes, before it is stored: the target and its state before and after. */
export interface ChangeDraft {
  action: ChangeAction
  kind: 'node' | 'iteration'
  id: string
  type: string | null
  before: State | null
  after: State | null
  fields: string[]
  revertOf?: number
  /** the change applied a proposal (live.md §5): its id and its author */
  proposal?: ChangeProposal
}

/** The proposal a change applied, and who proposed it (live.md §5). */
export interface ChangeProposal {
  proposalId: string
  actor: Actor
}

/** A stored change as the history and the revert read it. */
export interface ChangeRow {
  id: string | number
  at: Date | string
  user_id: string | null
  user_name: string | null
  key_id: string | null
  agent: string | null
  via: string
  request_id: string
  action: ChangeAction
  target_kind: 'node' | 'iteration'
  target_id: string
  target_type: string | null
  before: State | null
  after: State | null
  fields: string[]
  revert_of: string | number | null
  /** set when the change applied a proposal (migration 0024); absent from reads that do not select it */
  proposal?: ChangeProposal | null
}

const ISO = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/
/** the first instant PostgreSQL takes: it has no year 0 (ISO 8601's 0000, JavaScript's too), and 0000-01-01 answered 500 */
const YEAR_ONE = Date.parse('0001-01-01T00:00:00Z')
const isTime = (s: string) => ISO.test(s) && Date.parse(s) >= YEAR_ONE
/** A cursor: the last id a page showed and the snapshot its first page read (xmin:xmax:xip,…). */
export const CURSOR = /^(\d{1,18})\.(\d{1,20}:\d{1,20}:(?:\d{1,20}(?:,\d{1,20}){0,999})?)$/

/** A cursor this endpoint could have given: its snapshot as PostgreSQL writes one (xmin ≤ each xip < xmax). */
function isCursor(s: string): boolean {
  const m = CURSOR.exec(s)
  if (!m) return false
  const [xmin, xmax, xips] = m[2]!.split(':') as [string, string, string]
  const lo = BigInt(xmin)
  const hi = BigInt(xmax)
  const MAX = 2n ** 63n - 1n
  return lo > 0n && lo <= hi && hi <= MAX && (xips === '' || xips.split(',').every((x) => BigInt(x) >= lo && BigInt(x) < hi))
}

const text = (name: string, max = 200) =>
  ruled(Type.String({ minLength: 1, maxLength: max }), `${name} must be a non-empty string of at most ${max} characters`)
const time = (name: string) => refined(ruled(Type.String(), `${name} must be an ISO 8601 date-time, e.g. 2026-01-31T09:00:00Z`), isTime)

/** The filters a history read and a revert by filter share (history.md, 2 and 3). */
export const filterProperties = {
  userId: Type.Optional(text('userId')),
  agent: Type.Optional(text('agent', 100)),
  via: Type.Optional(ruled(Type.Union(VIAS.map((v) => Type.Literal(v))), `via must be one of ${VIAS.join(', ')}`)),
  requestId: Type.Optional(text('requestId')),
  since: Type.Optional(time('since')),
  until: Type.Optional(time('until')),
}

/** GET /history's query string, checked after the access check (checkInput). */
export const HistoryQuery = Type.Object(
  {
    projectId: Type.String(),
    nodeId: Type.Optional(text('nodeId')),
    ...filterProperties,
    after: Type.Optional(
      refined(
        ruled(Type.String(), {
          message: 'after must be the next cursor of a previous page of GET /history',
          tip: 'Omit after to read from the newest change.',
        }),
        isCursor,
      ),
    ),
    limit: Type.Optional(IntegerText(1, MAX_LIMIT, `limit must be an integer from 1 to ${MAX_LIMIT}`)),
  },
  { additionalProperties: false },
)

const FILTER_NAMES = 'userId, agent, via, requestId, since and until'
/** The fields of a revert's filter. */
export const RevertFilter = ruled(Type.Object(filterProperties, { additionalProperties: false }), `filter may hold only ${FILTER_NAMES}`)
export type RevertFilter = Static<typeof RevertFilter>

/** A revert takes back at most this many changes in one call (history.md, 3). */
export const MAX_REVERT = 1000

const ChangeId = Type.Union([Type.String({ pattern: '^[1-9]\\d{0,17}$' }), Type.Integer({ minimum: 1 })])

const isStringRecord = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string')
/** A revert's filter: null when it is an object of GET /history's filters naming at least one, else its refusal. */
function filterRefusal(filter: unknown): string | Error | null {
  if (!isStringRecord(filter)) return `filter must be an object of ${FILTER_NAMES}`
  try {
    parseInput(RevertFilter, filter)
  } catch (err) {
    return err as Error
  }
  return Object.keys(filter).length ? null : 'filter must name at least one of userId, agent, via, requestId, since, until'
}
/** changeIds or filter, exactly one of them. */
const oneSelection = (body: Record<string, unknown>) => (body.changeIds === undefined) !== (body.filter === undefined)

/** revert (history.md, 3): changes by id or by filter, newest first, one transaction. */
export const RevertBody = refined(
  ruled(
    action(
      'revert',
      {
        projectId: ProjectId,
        changeIds: Type.Optional(
          ruled(
            Type.Array(ChangeId, { minItems: 1, maxItems: MAX_REVERT, description: 'the changes to take back (changeId of GET /history)' }),
            `changeIds must be an array of 1 to ${MAX_REVERT} change ids`,
          ),
        ),
        // documented as a record (its fields are checked with RevertFilter, a refined test): the MCP
        // mutate tool then names it in a word, not field by field (docs/mcp.md: 3,500 tokens)
        filter: Type.Optional(
          refined(
            ruled(
              Type.Record(Type.String(), Type.String(), {
                description: 'userId, agent, via, requestId, since, until: the changes GET /history shows with the same filters',
              }),
              (filter) => filterRefusal(filter)!,
            ),
            (filter) => filterRefusal(filter) === null,
          ),
        ),
        dryRun: Type.Optional(
          ruled(Type.Boolean({ description: 'write nothing; answer what the call would do' }), 'dryRun must be true or false'),
        ),
        force: Type.Optional(
          ruled(Type.Boolean({ description: 'go ahead despite conflicts: the reverted values win' }), 'force must be true or false'),
        ),
      },
      'Undo changes by changeIds or get_history filter; 409 revert_conflict unless force; dryRun previews.',
    ),
    (body) =>
      (body as { changeIds?: unknown }).changeIds !== undefined
        ? {
            message: 'Send changeIds or filter, not both',
            tip: 'changeIds takes back those changes; filter those GET /history shows with it.',
          }
        : {
            message: 'changeIds or filter is required',
            tip: 'Send changeIds:[ids from GET /history], or filter:{agent:"…"} to take back what one agent did.',
          },
  ),
  oneSelection,
)
export type RevertBody = Static<typeof RevertBody>
