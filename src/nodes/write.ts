import { jsonbOrdered } from '../db/jsonb-order'
import type { Deps } from '../deps'
import { invalid } from '../errors'
import { nodeChange, nodeState } from '../history/record'
import { parseInput } from '../http/action-schema'
import { LATER } from '../iterations/model'
import { dataSchema } from '../ports/node-data'
import type { AccessRow } from '../projects/service'
import {
  checkNodeCap,
  getNode,
  iterationsOf,
  landsInLater,
  nextId,
  readAround,
  reserveTaskCountingMemos,
  resolveId,
  type WriteCtx,
} from './context'
import type { NewNode } from './input'
import { type Node, PARENT_TYPE, toNode } from './model'
import * as q from './queries'
import { applyStatus, type CheckedUpdate, checkNoKind, checkParent, checkRefs, checkSentId, checkUrgent, dropNulls } from './rules'

/**
 * Every node write, from its opening (`openCtx`) to its nodes stored: an action's, a batch's
 * entry, a revert's step. An add or an update takes three steps, each in its own file:
 * what its rules need is read first, into the context (./context.ts, in as few statements as it
 * can); then the rules (./rules.ts), in the order of docs/reference/mutate.md, on what was read;
 * then the node goes into the write (here) with its event and its change (`noteChange`), queued
 * for one insert (`flush`) or stored at once. An add's three steps are `prepareAdd`'s; an
 * update's are three functions its caller runs in order (./context.ts `readUpdate`, ./rules.ts
 * `checkUpdate`, `storeUpdate` here); a delete's ifRev is read by its caller (./context.ts
 * `expectRev`) before `deleteNode`. A new rule is a function of ./rules.ts called in step 2 of
 * `prepareAdd` and in `checkUpdate`: a batch's entries and a revert's updates come through them
 * too. The handler stores its nodes (what it queued, at its end: `flush`) and saves nothing: the
 * write's sequence (src/mutate/sequence.ts `runWrite`) hands its WriteCtx, an Outbox, to the
 * saving step (src/events/outbox.ts `save`), which checks its ifRevs and saves its events and
 * changes.
 */

/** A node write of `projectId` opened, inside its transaction (`deps.db`): nothing read yet. */
export async function openCtx(deps: Deps, projectId: string): Promise<WriteCtx> {
  return {
    deps,
    projectId,
    nodes: new Map(),
    drafts: new Map(),
    pending: [],
    events: [],
    tips: [],
    advisories: [],
    created: { nodes: 0, iterations: 0 },
    idPool: new Map(),
    changes: [],
    changeIds: [],
    beside: [],
    locked: new Map(),
    stale: [],
  }
}

/**
 * A single add (POST /mutate add), stored at once as an update is, so that its answer has the
 * rev its node was stored with: the write opened, the owner's node cap (403 at once when
 * reached: its lock is the write's first) and the project's open memos (a task: the inbox it may
 * overflow) counted in the statement that reserves its id, then its rules and its node into the write.
 */
export async function addNode(deps: Deps, project: AccessRow, input: NewNode) {
  const capped = await checkNodeCap(deps, project)
  const ctx = await openCtx(deps, project.id)
  // a task is added unclassified (no memo): the inbox it may overflow is counted with its id
  // (the iterations it names asked for first, as `prepareAdd` does: on PostgreSQL one round trip with it)
  let memos: number | undefined
  if (input.type === 'task') {
    if (!landsInLater(input.data)) void iterationsOf(ctx)
    memos = await reserveTaskCountingMemos(ctx)
  }
  const node = await prepareAdd(ctx, input, false)
  await flush(ctx)
  return { ctx, node, capped, memos }
}

/**
 * Validate an add and queue its row; returns the new node. `allowId`: inside a batch. The node's
 * shape (an object with a known type and a data object) was checked by its schema (./input.ts).
 */
export async function prepareAdd(ctx: WriteCtx, input: NewNode, allowId: boolean): Promise<Node> {
  const n = input as NewNode & { id?: string }
  const { type, id: sent } = n
  const patch: Record<string, unknown> = parseInput(dataSchema.add[type], n.data) // first, so kind on a goal reads as a field on the wrong type

  // 1. read: a job's or a task's iterations are asked for first, so that on PostgreSQL their read
  // goes with the id's (none when it lands in Later, ./context.ts `readAround`); a new id is read
  // with the parent in one statement, a sent one's node (it must be free)
  const inLater = landsInLater(patch)
  if ((type === 'job' || type === 'task') && !inLater) void iterationsOf(ctx)
  const hasParent = PARENT_TYPE[type] !== null && typeof n.parentId === 'string'
  const draft = sent?.startsWith('draft-') === true
  const duplicate = draft && ctx.drafts.has(sent!)
  const id =
    sent === undefined || draft
      ? await nextId(ctx, type, sent === undefined && hasParent ? resolveId(ctx, n.parentId as string) : undefined)
      : sent
  if (draft && !duplicate) ctx.drafts.set(sent!, id) // later entries of the batch, and this one's references, name it so
  const existing = sent === undefined || draft ? null : await getNode(ctx, sent)
  const around = await readAround(ctx, hasParent ? n.parentId : undefined, patch, type, inLater)

  // 2. the rules
  checkNoKind(patch)
  if (sent !== undefined) checkSentId(type, sent, allowId, duplicate, existing)
  const parentId = checkParent(type, n.parentId, around)
  const data = dropNulls({ ...patch })
  await checkRefs(ctx, { id, parentId }, around)
  Object.assign(data, around.refs)
  if (around.iterations) {
    if (data.iteration === undefined) {
      data.iteration = LATER
      ctx.tips.push(`${id} has no iteration, so it landed in ${LATER}.`)
    }
    applyStatus(ctx, id, data, patch, around.iterations)
  }
  if (type === 'task') checkUrgent(data, patch)

  // 3. into the write: its row inserted with the write's other adds (./context.ts `flush`)
  const node: Node = { id, type, parentId, data, createdAt: new Date().toISOString() }
  // later entries of a batch read it with its data's keys as a read gives them (`flush`), not as sent
  const ordered = jsonbOrdered(data)
  ctx.nodes.set(id, ordered === data ? node : { ...node, data: ordered })
  ctx.pending.push({ id, type, parent_id: parentId, data, created_at: null, classified: type !== 'task' })
  ctx.events.push({ type: 'node.added', node })
  noteChange(ctx, 'add', node, null, node)
  ctx.created.nodes++
  return node
}

/**
 * Step 3 of an update (PATCH semantics; arrays replaced whole), once ./context.ts `readUpdate`
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
 * Delete a node and everything beneath it, once its ifRev was read (./context.ts `expectRev`,
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
  ctx: WriteCtx,
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
  ctx.pending.push({ id: node.id, type: node.type, parent_id: node.parentId, data: node.data, created_at: createdAt, classified })
  ctx.nodes.set(node.id, node)
  ctx.events.push({ type: 'node.added', node })
  noteChange(ctx, 'restore', node, null, node)
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
 * insert returns the revs alone: each node stays in the write as it was sent, its data in the
 * key order a read of it would give (jsonb's: an update later in the write names its change's
 * `fields` in that order), its createdAt the one it was given (a restore's) or made with.
 */
export async function flush(ctx: WriteCtx): Promise<void> {
  if (ctx.pending.length === 0) return
  const rows = ctx.pending
  ctx.pending = []
  const stored = new Map((await q.insertMany(ctx.deps.db, ctx.projectId, rows)).map((r) => [r.id, r.rev]))
  const revs = new Map<string, string | undefined>()
  for (const row of rows) {
    const kept = ctx.nodes.get(row.id)
    const createdAt = row.created_at ?? kept?.createdAt
    const data = jsonbOrdered(kept?.data ?? row.data)
    const node = toNode({ ...row, data, rev: stored.get(row.id), created_at: createdAt }, createdAt != null)
    revs.set(row.id, node.rev)
    ctx.nodes.set(row.id, node)
  }
  // the nodes the adds (and a restore) answer with and their events carry get the rev they were stored with
  for (const e of ctx.events) if (e.type === 'node.added' && revs.has(e.node.id)) e.node.rev = revs.get(e.node.id)
}
