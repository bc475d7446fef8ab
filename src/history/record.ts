import { randomUUID } from 'node:crypto'
import type { Deps } from '../deps'
import { type Actor, type Author, SYSTEM_ACTOR } from '../ports/actor'
import type { ChangeDraft } from './model'
import * as q from './queries'

/** The author of a write Arbor makes by itself (the task classifier): no user, no key. */
export const SYSTEM_AUTHOR = (): Author => ({ actor: SYSTEM_ACTOR, requestId: randomUUID() })

/** The author of `deps` (the request's), or Arbor's own for a write outside a request. */
export const authorOf = (deps: Pick<Deps, 'author'>): Author => deps.author ?? SYSTEM_AUTHOR()

/**
 * Store the changes of a write in its transaction (`deps.db`): every committed write has them, a
 * rolled-back one leaves none (history.md, 2). The saving step (src/events/outbox.ts `save`)
 * calls this beside the events' insert, both sent before either is awaited (on PostgreSQL, one
 * round trip for both). A write's only change goes with each of its fields a parameter
 * (sql/history/insert-one.sql: no JSON array to take apart, bench/writes.md's eleventh pass),
 * more as JSON arrays of at most INSERT_CHUNK (sql/history/insert-many.sql; insert-adds.sql when
 * every change of the array is a node's add, as in a batch of adds: it is not sent their action,
 * kind and empty `before`), each statement sent without waiting for the one before. Returns their
 * ids, in order, up through saving to the write's answer (src/mutate/sequence.ts `runWrite`).
 * None when history is off (bench/history.ts).
 */
export async function recordChanges(
  deps: Pick<Deps, 'db' | 'author' | 'config'>,
  projectId: string,
  drafts: ChangeDraft[],
): Promise<number[]> {
  // recordHistory is off only in the benchmark that measures what recording costs (bench/history.ts)
  if (drafts.length === 0 || !deps.config.recordHistory) return []
  const author = authorOf(deps)
  const marked = withProposal(author, drafts)
  const ids =
    marked.length === 1
      ? [await q.insertOne(deps.db, projectId, oneChangeParams(author.actor, author.requestId, marked[0]!))]
      : (
          await Promise.all(
            chunksOf(marked).map((chunk) =>
              chunk.every(isAdd)
                ? q.insertAddChunk(deps.db, projectId, addParams(author.actor, author.requestId, chunk))
                : q.insertChunk(deps.db, projectId, changeParams(author.actor, author.requestId, chunk)),
            ),
          )
        ).flat()
  return ids
}

/** A proposal's changes name it and its author (live.md §5). */
const withProposal = (author: Author, drafts: ChangeDraft[]): ChangeDraft[] =>
  author.proposal ? drafts.map((d) => ({ ...d, proposal: author.proposal })) : drafts

/** `drafts` in statements of at most INSERT_CHUNK (on PGlite a statement holds the server's thread while it runs). */
function chunksOf(drafts: ChangeDraft[]): ChangeDraft[][] {
  const chunks: ChangeDraft[][] = []
  for (let i = 0; i < drafts.length; i += q.INSERT_CHUNK) chunks.push(drafts.slice(i, i + q.INSERT_CHUNK))
  return chunks
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

/** The parameters, after the project id, of one statement storing `drafts` (in order) for one request (sql/history/insert-many.sql). */
export const changeParams = (actor: Actor, requestId: string, drafts: ChangeDraft[]): unknown[] => [
  ...authorParams(actor, requestId),
  JSON.stringify(drafts),
]

/** A node's add: what sql/history/insert-adds.sql stores without being sent it (its action, kind, no before, no revert). */
const isAdd = (d: ChangeDraft) => d.action === 'add' && d.kind === 'node' && d.before == null && d.revertOf == null

/** The parameters, after the project id, of one statement storing nodes' adds (`isAdd`, in order; sql/history/insert-adds.sql). */
export const addParams = (actor: Actor, requestId: string, drafts: ChangeDraft[]): unknown[] => [
  ...authorParams(actor, requestId),
  JSON.stringify(drafts.map((d) => ({ id: d.id, type: d.type, after: d.after, fields: d.fields, proposal: d.proposal }))),
]

/** The same for one change (sql/history/insert-one.sql): each of its fields a parameter, JSON as text, none as null. */
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
