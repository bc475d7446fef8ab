import type { Deps } from '../deps'
import { ErrorListError } from '../errors'
import { type DomainEvent, type Outbox, outboxOf } from '../events/outbox'
import { LATER } from '../iterations/model'
import { type NodesMove, revertIteration } from '../iterations/service'
import type { WriteCtx, WriteState } from './context'
import type { NodeUpdate } from './input'
import type { Node, NodeData, NodeType } from './model'
import type { TreeRow } from './queries'
import { getNode, iterationsOf, loadNodes, openCtx, readUpdate, reloadIterations } from './read'
import { checkUpdate } from './rules'
import { moveIterationNodes } from './service'
import { bringBack, flush, removeRows, storeUpdate, subtrees } from './write'

/**
 * What a revert (src/mutate/revert.ts, history.md 3) does to nodes, in one call (`undoAll`): its
 * write opened (`openUndo`, a dry run's too: the nodes its changes name read and locked), every
 * step taken back, and the write ended, so that the revert enters this file once and
 * reads as its own plan: select the changes, read what it takes back, take them back, say the
 * conflicts, answer. Each change goes through one whole operation here that does inside it what it
 * reads (./read.ts), checks (./rules.ts) and stores (./write.ts), and the flush it needs. Nothing
 * here decides a conflict: an operation answers what it found (a node gone, a parent gone, a node
 * that stands again, an iteration missing), `undoAll` answers it for each change, and the revert
 * says it as a conflict (or refuses) in its own words, on the later changes it reads. What the
 * write noted is set aside here before an iteration's step (`undoIteration`), and its events are
 * marked as a revert's at its end (`finishUndo`): the revert assigns nothing of its WriteCtx.
 */

export type { WriteCtx }

/** A node's state as a change keeps it. */
export type NodeState = { parentId: string | null; data: Record<string, unknown> }

/**
 * The revert's WriteCtx (`dryRun`: a dry run's, which saving stores nothing of), with the nodes
 * its changes name read and locked at once: a write to them waits for this one's commit, and one
 * that committed before is among the later changes the revert reads next.
 */
async function openUndo(deps: Deps, projectId: string, nodeIds: string[], { dryRun = false } = {}): Promise<WriteCtx> {
  const ctx = await openCtx(deps, projectId, { dryRun })
  await loadNodes(ctx, nodeIds)
  return ctx
}

/**
 * A change as a revert takes it back (a row of history's `changes`, history.md 3): its target,
 * and the state before and after it (`before` null: an add, a restore or a revert that brought
 * the node back; `after` null: a delete).
 */
export interface TakenBack {
  id: string | number
  target_kind: 'node' | 'iteration'
  target_id: string
  target_type: string | null
  before: Record<string, unknown> | null
  after: Record<string, unknown> | null
  fields: string[]
}

/** One step of a revert: a change, and, for an iteration's rename or deletion, the moves of its jobs and tasks that came with it. */
export interface UndoStep {
  change: TakenBack
  moves: TakenBack[]
}

/**
 * What taking back one change found: `taken` (written, or queued); `gone` (its node or iteration
 * is no longer there, or an add's node no longer stands); `stands` (a deleted node, or an
 * iteration, that exists again: a deleted node's fields are set back all the same); `parentGone`
 * (a deleted node whose parent is gone: nothing written). A move of an iteration's step that
 * could not be taken back is only looked at: `gone` or `taken` says whether its node is there.
 */
export type Outcome = 'taken' | 'gone' | 'stands' | 'parentGone'

/**
 * What `undoAll` answers: each change's outcome (by change id), and the nodes found beneath an
 * add it took back that are not taken back themselves (put there later, with the change of the
 * add they were under: removed with it); or the change that refuses the whole revert, and why: a
 * job or a task it would set back into an iteration that no longer exists (`missingIteration`),
 * or a node rule (`error`, ./rules.ts).
 */
export type Undone = { ctx: WriteCtx } & (
  | { outcomes: Map<string, Outcome>; children: { id: string; changeId: string }[] }
  | { refused: { changeId: string; missingIteration?: string; error?: ErrorListError } }
)

/**
 * A revert's whole write on nodes, the one call it makes to take its changes back: its WriteCtx
 * opened (`openUndo`: a dry run's when `dryRun`; the nodes `nodeIds` read and locked), every step,
 * in the order given (newest first; an iteration's rename or deletion before its moves,
 * src/mutate/revert.ts `stepsOf`), then the write ended (`finishUndo`).
 * Each change through one operation below (fields set back: `undoUpdate`; a delete taken back:
 * `undoDelete`; an add: `stillStands`, its removal queued; an iteration's: `undoIteration`, then
 * its moves, set back only when it was, then `moveAlong`); the queued adds removed together, in
 * one statement, before any other kind of step and at the end (`readAdds`, `removeAdds`). It
 * stops at the first change that refuses the revert. Nothing here is a conflict: the revert says
 * them, on the later changes it reads, from what this answers.
 */
export async function undoAll(
  deps: Deps,
  projectId: string,
  nodeIds: string[],
  steps: UndoStep[],
  { dryRun = false } = {},
): Promise<Undone> {
  const ctx = await openUndo(deps, projectId, nodeIds, { dryRun })
  const outcomes = new Map<string, Outcome>()
  const children: { id: string; changeId: string }[] = []
  let adds = new Map<string, number>()
  const removeQueued = async () => {
    if (adds.size === 0) return
    const read = await readAdds(ctx, adds)
    for (const child of read.later) children.push({ id: child.id, changeId: String(adds.get(child.parent_id!)) })
    adds = new Map()
    await removeAdds(ctx, read)
  }
  /** One change taken back (`write` false: only whether its node is there); a refusal, or its outcome and an iteration's step. */
  const take = async (
    c: TakenBack,
    write: boolean,
  ): Promise<
    { refused: Extract<Undone, { refused: unknown }>['refused'] } | { outcome: Outcome; step?: { outbox: Outbox; move?: NodesMove } }
  > => {
    const changeId = String(c.id)
    if (!(c.target_kind === 'node' && c.before === null)) await removeQueued()
    if (c.target_kind === 'iteration') {
      const done = await undoIteration(ctx, Number(c.id), c)
      if ('stood' in done) return { outcome: done.stood === 'gone' ? 'gone' : 'stands' }
      return { outcome: 'taken', step: done }
    }
    const before = c.before as NodeState | null
    if (before === null) {
      if (!(await stillStands(ctx, c.target_id))) return { outcome: 'gone' }
      adds.set(c.target_id, Number(c.id))
      return { outcome: 'taken' }
    }
    try {
      if (c.after === null) {
        const back: Node = { id: c.target_id, type: c.target_type as NodeType, parentId: before.parentId, data: before.data as NodeData }
        const done = await undoDelete(ctx, Number(c.id), back)
        if (done.missingIteration !== undefined) return { refused: { changeId, missingIteration: done.missingIteration } }
        return { outcome: done.stands ? 'stands' : done.parentGone ? 'parentGone' : 'taken' }
      }
      const done = await undoUpdate(ctx, Number(c.id), c.target_id, before, c.fields, write)
      if (done.gone) return { outcome: 'gone' }
      if (done.missingIteration !== undefined) return { refused: { changeId, missingIteration: done.missingIteration } }
      return { outcome: 'taken' }
    } catch (err) {
      if (err instanceof ErrorListError) return { refused: { changeId, error: err } }
      throw err
    }
  }
  for (const { change, moves } of steps) {
    const done = await take(change, true)
    if ('refused' in done) return { ctx, ...done }
    outcomes.set(String(change.id), done.outcome)
    // a rename's or a deletion's moves, taken back once the iteration they go back to exists again;
    // when it could not be taken back, neither can they (only whether their nodes are there is looked at)
    for (const m of moves) {
      const moved = await take(m, done.outcome === 'taken')
      if ('refused' in moved) return { ctx, ...moved }
      outcomes.set(String(m.id), moved.outcome)
    }
    // then the jobs and tasks still naming the name it took back follow it (a rename's, ./service.ts),
    // noted after it in its step's outbox, as part of taking it back (like the children an add's
    // removal takes along); this write's nodes read before are as they now stand
    if (done.step?.move) await moveAlong(ctx, done.step.outbox, done.step.move, Number(change.id))
  }
  await removeQueued()
  await finishUndo(ctx)
  return { ctx, outcomes, children }
}

/** Whether node `id` stands in this write (read and locked by `openUndo`, or as an earlier step left it): an add it takes back. */
async function stillStands(ctx: WriteCtx, id: string): Promise<boolean> {
  return (await getNode(ctx, id)) !== null
}

/**
 * Fields of a node set back to `before` (`fields`, parentId among them), the revert's step of
 * change `revertOf`: `gone` when the node is no longer there (nothing read further); with `write`
 * false only that is looked at. Otherwise set back as an update sets them (`setBack`).
 */
async function undoUpdate(
  ctx: WriteState,
  revertOf: number,
  nodeId: string,
  before: NodeState,
  fields: string[],
  write: boolean,
): Promise<{ gone?: true; missingIteration?: string }> {
  ctx.revertOf = revertOf
  if (!(await getNode(ctx, nodeId))) return { gone: true }
  return write ? setBack(ctx, nodeId, before, fields) : {}
}

/**
 * A deleted node (`node`, as it was stored) brought back, the revert's step of change
 * `revertOf`: when it stands again (`stands`) its fields and parent are set back instead
 * (`setBack`); when its parent is gone, nothing is written (`parentGone`); otherwise it is
 * queued for the write's insert as `restore` does (`restoreDeleted`).
 */
async function undoDelete(
  ctx: WriteState,
  revertOf: number,
  node: Node,
): Promise<{ stands?: true; parentGone?: true; missingIteration?: string }> {
  ctx.revertOf = revertOf
  if (await getNode(ctx, node.id)) {
    const before = { parentId: node.parentId, data: node.data }
    return { stands: true, ...(await setBack(ctx, node.id, before, Object.keys(node.data).concat('parentId'))) }
  }
  if (node.parentId && !(await getNode(ctx, node.parentId))) return { parentGone: true }
  await restoreDeleted(ctx, node)
  return {}
}

/**
 * Fields of a node set back as an update sets them, in its three calls, each once: read
 * (./read.ts `readUpdate`: the node, the edit intents on those fields, its parent, references
 * and iterations), checked (./rules.ts `checkUpdate`: the update's rules, then the intents),
 * stored (./write.ts `storeUpdate`). A job or a task set back into an iteration that no longer
 * exists (renamed or deleted since) is not checked nor stored: the iteration is answered, for the
 * revert to refuse in its own words, before the update's rules would in theirs.
 */
async function setBack(ctx: WriteCtx, nodeId: string, before: NodeState, fields: string[]): Promise<{ missingIteration?: string }> {
  const data: Record<string, unknown> = {}
  for (const f of fields) if (f !== 'parentId') data[f] = before.data[f] ?? null
  const input: NodeUpdate = {
    nodeId,
    ...(Object.keys(data).length ? { data } : {}),
    ...(fields.includes('parentId') ? { parentId: before.parentId } : {}),
  }
  if (!input.data && !('parentId' in input)) return {}
  const read = await readUpdate(ctx, input)
  const into = input.data?.iteration
  if (typeof into === 'string' && read.around.iterations?.has(into) === false) return { missingIteration: into }
  const checked = await checkUpdate(ctx, input, read)
  await storeUpdate(ctx, checked)
  return {}
}

/**
 * A deleted node brought back as it was stored (its id, type, parent and data), as `restore` does:
 * without the rules, its kind kept; into Later, said in a tip, when its iteration no longer exists.
 * Queued for the write's insert (./write.ts `bringBack`; stored by the next operation that reads
 * the tree, or by `finishUndo`).
 */
async function restoreDeleted(ctx: WriteCtx, node: Node): Promise<void> {
  const iteration = node.data.iteration
  if (typeof iteration === 'string' && !(await iterationsOf(ctx)).has(iteration)) {
    ctx.tips.push(`${node.id}'s iteration ${iteration} no longer exists; it is in ${LATER}.`)
    node = { ...node, data: { ...node.data, iteration: LATER } as NodeData }
  }
  bringBack(ctx, node, null, true)
}

/** Adds to take back as the database now holds them (`readAdds`): their nodes, each with everything beneath it. */
interface AddsRead {
  /** the node each add took back added, and the id of that add's change */
  roots: Map<string, number>
  /** every node to remove, once each: the roots and everything beneath them */
  byId: Map<string, TreeRow>
  /** the nodes directly beneath a root that are not taken back themselves: put there later */
  later: TreeRow[]
}

/**
 * The subtrees under the nodes of adds taken back (`roots`: node id → its add's change id), read
 * as the database now holds them (the write's queued adds stored first: ./write.ts `subtrees`),
 * for the revert to say its `has_children` conflicts on before `removeAdds`.
 */
async function readAdds(ctx: WriteCtx, roots: Map<string, number>): Promise<AddsRead> {
  const byId = new Map<string, TreeRow>()
  for (const r of await subtrees(ctx, [...roots.keys()])) if (!byId.has(r.id)) byId.set(r.id, r)
  const later = [...byId.values()].filter((r) => r.parent_id && roots.has(r.parent_id) && !roots.has(r.id))
  return { roots, byId, later }
}

/**
 * The nodes `readAdds` read removed in one statement (./write.ts `removeRows`), each recorded as a
 * revert of the add it falls under, the deepest first, so that reverting this revert brings
 * parents back before their children.
 */
async function removeAdds(ctx: WriteCtx, { roots, byId }: AddsRead): Promise<void> {
  // the add each removed node falls under, and its depth among them
  const under = (id: string): { root: number; depth: number } => {
    let depth = 0
    let row = byId.get(id)
    while (row && !roots.has(row.id)) {
      row = byId.get(row.parent_id!)
      depth++
    }
    const root = roots.get(row!.id)!
    const above = row!.parent_id && byId.has(row!.parent_id) ? under(row!.parent_id).depth + 1 : 0
    return { root, depth: depth + above }
  }
  await removeRows(
    ctx,
    [...byId.values()].map((row) => {
      const { root, depth } = under(row.id)
      return { row, depth, revertOf: root }
    }),
  )
}

/**
 * An iteration's change taken back (`change`, its id `revertOf`) by src/iterations/service.ts
 * `revertIteration`, which writes it at once and notes its step in its own outbox, put in
 * `beside`. Before it, the write's queued adds are stored (./write.ts `flush`) and the node
 * changes of the steps before it moved into `beside` as they stand, so that the revert's change
 * ids (and events) are in the order its steps ran: its own revert, newest first, takes them back
 * in reverse. After it, the iterations are read again at their next use (./read.ts
 * `reloadIterations`). Answers `stood` when it could not be taken back, or the outbox of its step
 * and the jobs and tasks it is still to move (`moveAlong`).
 */
async function undoIteration(
  ctx: WriteCtx,
  revertOf: number,
  change: Parameters<typeof revertIteration>[2],
): Promise<{ stood: 'gone' | 'exists' } | { outbox: Outbox; move?: NodesMove }> {
  await flush(ctx)
  setAside(ctx)
  const done = await revertIteration(ctx.deps, ctx.projectId, change, revertOf)
  await reloadIterations(ctx)
  if (!('stood' in done)) ctx.beside.push(done.outbox)
  return done
}

/**
 * The jobs and tasks still naming the name an iteration's step took back moved with it
 * (src/nodes/service.ts `moveIterationNodes`), noted after it in its step's outbox as a revert
 * of its change (`revertOf`); this write's nodes read before are kept as they now stand.
 */
async function moveAlong(ctx: WriteCtx, outbox: Outbox, move: NodesMove, revertOf: number): Promise<void> {
  for (const n of await moveIterationNodes(ctx.deps, outbox, move.from, move.to, revertOf)) {
    const known = ctx.nodes.get(n.id)
    if (known) ctx.nodes.set(n.id, { ...known, data: n.data, ...(n.rev ? { rev: n.rev } : {}) })
  }
}

/**
 * The revert's last node step: the deleted nodes it brought back, still queued, stored (./write.ts
 * `flush`), when there are any; its events marked as a revert's (`asReverts`).
 */
async function finishUndo(ctx: WriteState): Promise<void> {
  ctx.revertOf = undefined
  if (ctx.pending.length) await flush(ctx)
  ctx.events = asReverts(ctx.events)
}

/**
 * The events and changes the revert noted so far moved into an outbox of their own, put in
 * `beside` (saved before what follows, in its own statement), when it noted any: an iteration's
 * step is saved after them (`undoIteration`).
 */
function setAside(ctx: WriteState): void {
  if (ctx.changes.length) ctx.beside.push(outboxOf(ctx.projectId, asReverts(ctx.events.splice(0)), ctx.changes.splice(0)))
}

/**
 * A revert's events, each marked as a revert's (the app's Activity reads "reverted"; history.md,
 * Revert): every event a revert notes in its write is one of its node steps (its changes are all
 * `revert`, ./write.ts `noteChange`). An iteration's step notes its own in its own outbox
 * (src/iterations/service.ts `revertIteration`; the jobs and tasks it moves along, marked by
 * ./service.ts `moveIterationNodes`).
 */
const asReverts = (events: DomainEvent[]): DomainEvent[] => events.map((e) => ({ ...e, revert: true as const }))
