import { jsonbOrdered } from '../db/jsonb-order'
import { invalid } from '../errors'
import { outboxOf } from '../events/outbox'
import { nodeChange, nodeState } from '../history/change'
import type { NewIteration } from '../iterations/model'
import { addIteration } from '../iterations/service'
import type { WriteCtx, WriteState } from './context'
import { type Node, toNode } from './model'
import * as q from './queries'
import type { CheckedEntry, CheckedUpdate } from './rules'

/**
 * The third of a node write's three calls: the node into the write (here), with its event and its change
 * (`noteChange`), queued for one insert (`flush`) or stored at once, once what its rules need was
 * read (./read.ts, in as few statements as it can) and the rules were checked on it
 * (./rules.ts, in the order of docs/reference/mutate.md). An add's three calls are three
 * functions its caller runs in order (./read.ts `readAdd`, ./rules.ts `checkAdd`, `storeAdd`
 * here), an update's likewise (`readUpdate`, `checkUpdate`, `storeUpdate`), a batch's entries
 * through the same (`readEntry`, `checkEntry`, `storeEntry`); a delete's ifRev is read by its
 * caller (./read.ts `expectRev`) before `deleteNode`, which reads the subtree it removes (and
 * answers a node not found there, 400). Nothing else here reads for a rule or checks one of a
 * node; a batch's addIteration entry (`storeIteration`) is checked where it is written,
 * src/iterations/service.ts `addIteration` (a name too long once trimmed, a name taken: 400). The handler stores its nodes (what it queued, at its end:
 * `flush`) and saves nothing: the write's sequence (src/mutate/sequence.ts `runWrite`) refuses a
 * stale ifRev kept in its WriteCtx, an Outbox, then hands it to the saving step
 * (src/events/outbox.ts `save`), which saves its events and changes. A batch's addIteration
 * entry is stored here too (`storeIteration`): its row is src/iterations', written in an outbox of
 * its own, whose change and event the write notes.
 */

/**
 * Every writer of node data, so that "does my rule cover every write" is one read. Through the
 * rules (./read.ts, ./rules.ts, then here): `storeAdd` (an add, a batch's add entries, and so a
 * proposal applied, a workflow's plan, an import's chunks) and `storeUpdate` (an update, a batch's
 * update entries, a revert's fields set back: ./undo.ts `setBack`). Without them, each writing as
 * told: `bringBack` (a restore, src/nodes/service.ts `restore`; a revert of a delete, ./undo.ts
 * `undoDelete`: the node as it was stored); `deleteNode` and `removeRows` (a delete, a batch's
 * delete entries, a revert of an add: ./undo.ts `removeAdds`; a delete has no rule of its own);
 * src/nodes/service.ts `classifyNode` (a task's kind and urgent, sql/nodes/set-classified.sql) and
 * ./classify-loop.ts (the classifier's, sql/nodes/set-classified-many.sql); src/nodes/service.ts
 * `moveIterationNodes` (the iteration of the jobs and tasks of an iteration renamed or deleted,
 * and of a revert of that, sql/nodes/move-iteration.sql). Outside the write path: a backup restored
 * into an empty database (src/backup/restore.ts, every table as it was saved) and a never-finished
 * import's rows removed (src/projects/importing.ts, sql/projects/delete-import-part.sql).
 */

/**
 * The store of an add, once ./read.ts `readAdd` read it and ./rules.ts `checkAdd` checked it: its
 * row queued, inserted with the write's other adds (`flush`: a single add's at once, a batch's at
 * its end or before the next statement that needs it), with its event and its change.
 */
export function storeAdd(ctx: WriteCtx, node: Node): Node {
  queue(ctx, 'add', node, null, node.type !== 'task')
  ctx.created.nodes++
  return node
}

/**
 * A node queued for the write's one insert (`flush`), with its event and its change: an add's,
 * or a node brought back. The write keeps it with its data's keys as a read of it would give them
 * (jsonb's order), not as sent: what reads it later in the write (a batch's later entries, a
 * revert's later steps, an update's change naming its `fields`) sees what a read would have given.
 */
function queue(ctx: WriteCtx, action: 'add' | 'restore', node: Node, createdAt: string | null, classified: boolean): void {
  ctx.pending.push({ id: node.id, type: node.type, parent_id: node.parentId, data: node.data, created_at: createdAt, classified })
  const ordered = jsonbOrdered(node.data)
  ctx.nodes.set(node.id, ordered === node.data ? node : { ...node, data: ordered })
  ctx.events.push({ type: 'node.added', node })
  noteChange(ctx, action, node, null, node)
}

/** A batch's node entry as stored (`storeEntry`): the node added (with the id it was sent under) or updated, or deleted with what it left behind. */
export type StoredEntry =
  | { action: 'add'; node: Node; sentId?: string }
  | { action: 'update'; node: Node }
  | { action: 'delete'; node: Node; orphanedChildren: string[]; changelogId: number }

/**
 * The store of a batch's node entry (./batch.ts), once ./rules.ts `checkEntry` checked it,
 * as the single action's: an add's `storeAdd`, an update's `storeUpdate`, a delete's `deleteNode`.
 */
export async function storeEntry(ctx: WriteCtx, checked: CheckedEntry): Promise<StoredEntry> {
  switch (checked.action) {
    case 'add':
      return { action: 'add', node: storeAdd(ctx, checked.node), sentId: checked.sentId }
    case 'update':
      return { action: 'update', node: await storeUpdate(ctx, checked.update) }
    case 'delete': {
      const { node, orphanedChildren, changelogId } = await deleteNode(ctx, checked.id)
      return { action: 'delete', node, orphanedChildren, changelogId }
    }
  }
}

/**
 * A batch's addIteration entry (./batch.ts), which has nothing to read or check here:
 * the iteration written by src/iterations/service.ts `addIteration` into an outbox of its own,
 * whose change and event this write notes after those before them; then the iteration known to
 * the batch's later entries, which may name it (not read yet, the iterations are read with it: it
 * was inserted in this transaction). Returns the iteration as the batch answers it.
 */
export async function storeIteration(ctx: WriteState, it: NewIteration) {
  const added = outboxOf(ctx.projectId)
  const iteration = await addIteration(ctx.deps, added, it)
  ctx.changes.push(...added.changes)
  ctx.events.push(...added.events)
  ctx.iterations = ctx.iterations?.then((known) =>
    known.set(iteration.name, {
      name: iteration.name,
      status: iteration.status,
      system: false,
      sort_order: iteration.sortOrder,
      git_tags: iteration.gitTags,
      completed_at: null,
    }),
  )
  ctx.iterations?.catch(() => {}) // as in ./read.ts `iterationsOf`: the use that awaits it throws
  ctx.created.iterations++
  return iteration
}

/**
 * The store of an update (PATCH semantics; arrays replaced whole), once ./read.ts `readUpdate`
 * read it and ./rules.ts `checkUpdate` checked it: stored now (the write's pending adds first),
 * with its event and its change; returns the node as stored.
 */
export async function storeUpdate(ctx: WriteCtx, { id, before, parentId, data, setsKind, only }: CheckedUpdate): Promise<Node> {
  await flush(ctx)
  const row = await q.update(ctx.deps.db, ctx.projectId, id, parentId, data, setsKind, only)
  const saved = toNode(row!, true)
  ctx.nodes.set(saved.id, saved)
  ctx.events.push({ type: 'node.updated', node: saved })
  noteChange(ctx, 'update', saved, before, saved)
  return saved
}

/**
 * Delete a node and everything beneath it, once its ifRev was read (./read.ts `expectRev`,
 * called first by the caller); only the named node goes to the changelog. History gets one
 * change per removed node, deepest first, so that taking the delete back (newest first) brings
 * parents back before their children.
 */
export async function deleteNode(ctx: WriteCtx, nodeId: string) {
  const rows = await subtrees(ctx, [nodeId])
  const root = rows.find((r) => r.depth === 0)
  if (!root) throw invalid(`Node with id ${nodeId} not found`)
  const node = toNode(root, true)
  const changelogId = await removeRows(
    ctx,
    rows.map((row) => ({ row, depth: row.depth })),
    node,
  )
  const orphanedChildren = rows.filter((r) => r.depth === 1).map((r) => r.id)
  return { node, changelogId: Number(changelogId), orphanedChildren, removed: rows.length }
}

/** The nodes `ids` with everything beneath them, as they stand in this write (its pending adds written first). */
export async function subtrees(ctx: WriteCtx, ids: string[]): Promise<q.TreeRow[]> {
  await flush(ctx)
  return q.subtree(ctx.deps.db, ctx.projectId, ids)
}

/**
 * Delete `rows` (whole subtrees, read by `subtrees`) in one statement, with an event each in
 * their order and a change each, the deepest first, so that taking the delete back (newest
 * first) brings parents back before their children. A revert's removal names, per row, the
 * change it takes back (`revertOf`).
 */
export async function removeRows(
  ctx: WriteState,
  rows: { row: q.TreeRow; depth: number; revertOf?: number }[],
  /** the node deleted by name: logged to the changelog in the same statement, whose entry's id is returned */
  logged?: Node,
): Promise<number | undefined> {
  const ids = rows.map((r) => r.row.id)
  const changelogId = logged
    ? await q.deleteLogged(ctx.deps.db, ctx.projectId, ids, logged)
    : void (await q.deleteMany(ctx.deps.db, ctx.projectId, ids))
  for (const { row } of rows) {
    ctx.nodes.set(row.id, null)
    ctx.events.push({ type: 'node.deleted', node: toNode(row) })
  }
  for (const { row, revertOf } of [...rows].sort((a, b) => b.depth - a.depth)) {
    if (revertOf !== undefined) ctx.revertOf = revertOf
    noteChange(ctx, 'delete', row, toNode(row), null)
  }
  return changelogId
}

/**
 * Bring a deleted node back with its id, type, parent and data: queued with this write's adds,
 * with its event and its change (a restore, or a revert's step). `classified`: false for a task
 * the classifier has not read yet.
 */
export function bringBack(ctx: WriteCtx, node: Node, createdAt: string | null, classified: boolean): void {
  queue(ctx, 'restore', node, createdAt, classified)
}

/** Note a change of a node in this write (a revert's own action when one is running). */
export function noteChange(
  ctx: WriteCtx,
  action: 'add' | 'update' | 'delete' | 'restore',
  node: { id: string; type: string },
  before: { parentId: string | null; data: Record<string, unknown> } | null,
  after: { parentId: string | null; data: Record<string, unknown> } | null,
): void {
  ctx.changes.push(nodeChange(ctx.revertOf ? 'revert' : action, node, before && nodeState(before), after && nodeState(after), ctx.revertOf))
}

/**
 * Write the pending inserts (one statement) so later reads in this transaction see them. The
 * insert returns the revs alone: each node stays in the write as it was queued (`queue`: its data
 * in the key order a read of it would give), its createdAt the one it was given (a restore's) or
 * made with.
 */
export async function flush(ctx: WriteState): Promise<void> {
  if (ctx.pending.length === 0) return
  const rows = ctx.pending
  ctx.pending = []
  const stored = new Map((await q.insertMany(ctx.deps.db, ctx.projectId, rows)).map((r) => [r.id, r.rev]))
  const revs = new Map<string, string | undefined>()
  for (const row of rows) {
    const kept = ctx.nodes.get(row.id)
    const createdAt = row.created_at ?? kept?.createdAt
    const node = toNode({ ...row, data: kept?.data ?? row.data, rev: stored.get(row.id), created_at: createdAt }, createdAt != null)
    revs.set(row.id, node.rev)
    ctx.nodes.set(row.id, node)
  }
  // the nodes the adds (and a restore) answer with and their events carry get the rev they were stored with
  for (const e of ctx.events) if (e.type === 'node.added' && revs.has(e.node.id)) e.node.rev = revs.get(e.node.id)
}
