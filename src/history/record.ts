import { randomUUID } from 'node:crypto'
import type { Db } from '../db'
import type { Deps } from '../deps'
import { type Author, SYSTEM_ACTOR } from '../ports/actor'
import { bumpRevision, revisionAdvanced } from '../revisions/revision'
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

export function nodeChange(
  action: ChangeAction,
  node: { id: string; type: string },
  before: State | null,
  after: State | null,
  revertOf?: number,
): ChangeDraft {
  return {
    action,
    kind: 'node',
    id: node.id,
    type: node.type,
    before,
    after,
    fields: nodeFields(before, after),
    ...(revertOf ? { revertOf } : {}),
  }
}

export function iterationChange(
  action: ChangeAction,
  name: string,
  before: State | null,
  after: State | null,
  revertOf?: number,
): ChangeDraft {
  return {
    action,
    kind: 'iteration',
    id: name,
    type: null,
    before,
    after,
    fields: iterationFields(before, after),
    ...(revertOf ? { revertOf } : {}),
  }
}

/**
 * Store the changes of a write in its transaction (`deps.db`), in one statement: every
 * committed write has them, a rolled-back one leaves none. Returns their ids, in order.
 */
export async function recordChanges(
  deps: Pick<Deps, 'db' | 'author' | 'config'>,
  projectId: string,
  drafts: ChangeDraft[],
): Promise<number[]> {
  if (drafts.length === 0) return []
  // recordHistory is off only in the benchmark that measures what recording costs (bench/history.ts)
  if (!deps.config.recordHistory) {
    await bumpRevision(deps.db, projectId)
    return []
  }
  const author = authorOf(deps)
  const ids = await q.insertMany(deps.db, projectId, author.actor, author.requestId, withProposal(author, drafts))
  // a write that recorded changes changed what the project's reads return, whether or not it
  // sends an event (updateIteration of gitTags or sortOrder sends none): the changes' trigger
  // advances the project's revision at the commit (migration 0019), and the cached reads of
  // every replica hear of it then (src/revisions/revision.ts)
  await revisionAdvanced(deps.db, projectId)
  author.changeIds?.push(...ids)
  return ids
}

/** A proposal's changes name it and its author (live.md §5). */
const withProposal = (author: Author, drafts: ChangeDraft[]): ChangeDraft[] =>
  author.proposal ? drafts.map((d) => ({ ...d, proposal: author.proposal })) : drafts

/** Events per statement, as the events' own insert (src/events/queries.ts) writes them. */
const EVENTS_CHUNK = 200
/** Changes per statement, as src/history/queries.ts writes them. */
const CHANGES_CHUNK = 1000

/**
 * `recordChanges` riding on the write's events: the first statement stores the changes (up to
 * CHANGES_CHUNK) and the events (up to EVENTS_CHUNK) together, the rest go in their own
 * statements. The events' insert for `emit` (src/events/outbox.ts); returns their seqs in order.
 */
export function recordChangesWithEvents(
  deps: Pick<Deps, 'db' | 'author' | 'config'>,
  drafts: ChangeDraft[],
  recorded: number[],
): (
  tx: Db,
  projectId: string,
  rows: unknown[],
  insertEvents: (tx: Db, projectId: string, rows: unknown[]) => Promise<number[]>,
) => Promise<number[]> {
  return async (tx, projectId, rows, insertEvents) => {
    if (drafts.length === 0 || !deps.config.recordHistory) return insertEvents(tx, projectId, rows)
    const author = authorOf(deps)
    const marked = withProposal(author, drafts)
    const first = await q.insertWithEvents(
      tx,
      projectId,
      author.actor,
      author.requestId,
      marked.slice(0, CHANGES_CHUNK),
      rows.slice(0, EVENTS_CHUNK),
    )
    const ids = [...first.ids]
    if (marked.length > CHANGES_CHUNK)
      ids.push(...(await q.insertMany(tx, projectId, author.actor, author.requestId, marked.slice(CHANGES_CHUNK))))
    const seqs = [...first.seqs]
    if (rows.length > EVENTS_CHUNK) seqs.push(...(await insertEvents(tx, projectId, rows.slice(EVENTS_CHUNK))))
    // (the events' trigger advances the revision too, and emit says so)
    author.changeIds?.push(...ids)
    recorded.push(...ids)
    return seqs
  }
}
