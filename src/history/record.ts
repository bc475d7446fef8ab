import { randomUUID } from 'node:crypto'
import type { Deps } from '../deps'
import { type Actor, type Author, SYSTEM_ACTOR } from '../ports/actor'
import type { ChangeAction, ChangeDraft, State } from './model'
import * as q from './queries'

/** The author of a write Arbor makes by itself (the task classifier): no user, no key. */
export const SYSTEM_AUTHOR = (): Author => ({ actor: SYSTEM_ACTOR, requestId: randomUUID() })

/** The author of `deps` (the request's), or Arbor's own for a write outside a request. */
export const authorOf = (deps: Pick<Deps, 'author'>): Author => deps.author ?? SYSTEM_AUTHOR()

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** A node's state as a change keeps it. */
export const nodeState = (n: { parentId: string | null; data: Record<string, unknown> }): State => ({ parentId: n.parentId, data: n.data })

/** The names that differ between two node states: `parentId` and the keys of `data`. */
export function nodeFields(before: State | null, after: State | null): string[] {
  const b = before as { parentId?: unknown; data?: Record<string, unknown> } | null
  const a = after as { parentId?: unknown; data?: Record<string, unknown> } | null
  if (!b || !a) return ['parentId', ...Object.keys((a ?? b)?.data ?? {})]
  const out: string[] = []
  if (!same(b.parentId, a.parentId)) out.push('parentId')
  for (const k of new Set([...Object.keys(b.data ?? {}), ...Object.keys(a.data ?? {})])) if (!same(b.data?.[k], a.data?.[k])) out.push(k)
  return out
}

/** The names that differ between two iteration states (or all of one side's). */
export function iterationFields(before: State | null, after: State | null): string[] {
  if (!before || !after) return Object.keys(after ?? before ?? {})
  return [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => !same(before[k], after[k]))
}

/** A change of one target, with the names of what differs (`fields`); `revertOf`: the change a revert takes back. */
const change = (
  kind: ChangeDraft['kind'],
  action: ChangeAction,
  target: { id: string; type: string | null },
  before: State | null,
  after: State | null,
  fields: string[],
  revertOf?: number,
): ChangeDraft => ({ action, kind, ...target, before, after, fields, ...(revertOf ? { revertOf } : {}) })

export const nodeChange = (
  action: ChangeAction,
  node: { id: string; type: string },
  before: State | null,
  after: State | null,
  revertOf?: number,
): ChangeDraft => change('node', action, { id: node.id, type: node.type }, before, after, nodeFields(before, after), revertOf)

export const iterationChange = (
  action: ChangeAction,
  name: string,
  before: State | null,
  after: State | null,
  revertOf?: number,
): ChangeDraft => change('iteration', action, { id: name, type: null }, before, after, iterationFields(before, after), revertOf)

/**
 * Store the changes of a write that sends no event in its transaction (`deps.db`): every
 * committed write has them, a rolled-back one leaves none. Returns their ids, in order. (A write
 * with events has its changes ride in the events' statement: `changeChunks`, then `storeChanges`.)
 */
export async function recordChanges(
  deps: Pick<Deps, 'db' | 'author' | 'config'>,
  projectId: string,
  drafts: ChangeDraft[],
): Promise<number[]> {
  if (drafts.length === 0) return []
  // recordHistory is off only in the benchmark that measures what recording costs (bench/history.ts)
  if (!deps.config.recordHistory) return []
  return storeChanges(deps, projectId, arrayChunks(deps, drafts))
}

/** A proposal's changes name it and its author (live.md §5). */
const withProposal = (author: Author, drafts: ChangeDraft[]): ChangeDraft[] =>
  author.proposal ? drafts.map((d) => ({ ...d, proposal: author.proposal })) : drafts

/**
 * The changes of a write as the statements that store them take them: one parameter list per
 * statement (sql/history/insert-many.sql's, after the project id), at most INSERT_CHUNK changes
 * each, with the write's author. None when there is nothing to record or history is off
 * (bench/history.ts).
 */
function arrayChunks(deps: Pick<Deps, 'author' | 'config'>, drafts: ChangeDraft[]): unknown[][] {
  if (drafts.length === 0 || !deps.config.recordHistory) return []
  const author = authorOf(deps)
  const marked = withProposal(author, drafts)
  const chunks: unknown[][] = []
  for (let i = 0; i < marked.length; i += q.INSERT_CHUNK)
    chunks.push(changeParams(author.actor, author.requestId, marked.slice(i, i + q.INSERT_CHUNK)))
  return chunks
}

/** A write's changes as `changeChunks` hands them to its events' statement (`first`) and to `storeChanges` (`rest`). */
export interface RidingChanges {
  /** the parameters after the project id; `one`: a single change's (sql/events/insert-with-change.sql) */
  first?: { one: boolean; params: unknown[] }
  rest: unknown[][]
}

/**
 * The changes of a write with events (src/events/outbox.ts): the first statement's ride in the
 * events' one, the write's only change with each of its fields a parameter of its own
 * (`oneChangeParams`: no JSON array for the statement to take apart, bench/writes.md's eleventh
 * pass), more in sql/history/insert-many.sql's parameters (sql/events/insert-with-changes.sql);
 * the chunks past INSERT_CHUNK changes are left for `storeChanges`. None when history is off.
 */
export function changeChunks(deps: Pick<Deps, 'author' | 'config'>, drafts: ChangeDraft[]): RidingChanges {
  if (drafts.length === 1 && deps.config.recordHistory) {
    const author = authorOf(deps)
    return { first: { one: true, params: oneChangeParams(author.actor, author.requestId, withProposal(author, drafts)[0]!) }, rest: [] }
  }
  const [first, ...rest] = arrayChunks(deps, drafts)
  return { first: first && { one: false, params: first }, rest }
}

/** The author's parameters, after the project id, of every statement storing changes. */
const authorParams = (actor: Actor, requestId: string) => [
  actor.userId,
  actor.userName,
  actor.keyId,
  actor.agent ?? null,
  actor.via,
  requestId,
]

/**
 * The parameters, after the project id, of one statement storing `drafts` (in order) for one
 * request: sql/history/insert-many.sql binds them, and so does the events' statement that a
 * write's changes ride in (sql/events/insert-with-changes.sql).
 */
export const changeParams = (actor: Actor, requestId: string, drafts: ChangeDraft[]): unknown[] => [
  ...authorParams(actor, requestId),
  JSON.stringify(drafts),
]

/** The same for one change (sql/events/insert-with-change.sql): each of its fields a parameter, JSON as text, none as null. */
export const oneChangeParams = (actor: Actor, requestId: string, d: ChangeDraft): unknown[] => [
  ...authorParams(actor, requestId),
  d.action,
  d.kind,
  d.id,
  d.type,
  d.before == null ? null : JSON.stringify(d.before),
  d.after == null ? null : JSON.stringify(d.after),
  JSON.stringify(d.fields),
  d.revertOf ?? null,
  d.proposal ? JSON.stringify(d.proposal) : null,
]

/**
 * Store `chunks` (sql/history/insert-many.sql's parameters) in `deps.db`; `carried`: the ids of the changes that already
 * rode in the events' statement. All of the write's change ids, in order, go to its answer
 * (`author.changeIds`) and are returned.
 */
export async function storeChanges(
  deps: Pick<Deps, 'db' | 'author'>,
  projectId: string,
  chunks: unknown[][],
  carried: number[] = [],
): Promise<number[]> {
  const ids = [...carried]
  for (const chunk of chunks) ids.push(...(await q.insertChunk(deps.db, projectId, chunk)))
  deps.author?.changeIds?.push(...ids)
  return ids
}
