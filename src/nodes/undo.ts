import type { Deps } from '../deps'
import { type DomainEvent, type Outbox, outboxOf } from '../events/outbox'
import { LATER } from '../iterations/model'
import { type NodesMove, revertIteration } from '../iterations/service'
import type { WriteCtx, WriteState } from './context'
import type { NodeUpdate } from './input'
import type { Node, NodeData } from './model'
import type { TreeRow } from './queries'
import { getNode, iterationsOf, loadNodes, openCtx, readUpdate, reloadIterations } from './read'
import { checkUpdate } from './rules'
import { moveIterationNodes } from './service'
import { bringBack, flush, removeRows, storeUpdate, subtrees } from './write'

/**
 * What a revert (src/mutate/revert.ts, history.md 3) does to nodes, as whole operations: each one
 * does inside it what it reads (./read.ts), checks (./rules.ts) and stores (./write.ts), and
 * the flush it needs, so that the revert calls these operations and nothing else of `nodes`, and
 * reads as its own plan: select the changes, read what it takes back, take back each change,
 * answer. Nothing here decides a conflict: an operation answers what it found (a node gone, a
 * parent gone, a node that stands again, an iteration missing), the revert says it as a conflict
 * (or refuses) in its own words, on the later changes it read ahead. The revert's write is opened
 * here (`openUndo`, a dry run's too) and ended here (`finishUndo`, its events marked as a
 * revert's); what it noted is set aside here before an iteration's step (`undoIteration`): the
 * revert assigns nothing of its WriteCtx.
 */

export type { WriteCtx }

/** A node's state as a change keeps it. */
export type NodeState = { parentId: string | null; data: Record<string, unknown> }

/**
 * The revert's WriteCtx (`dryRun`: a dry run's, which saving stores nothing of), with the nodes
 * its changes name read and locked at once: a write to them waits for this one's commit, and one
 * that committed before is among the later changes the revert reads next.
 */
export async function openUndo(deps: Deps, projectId: string, nodeIds: string[], { dryRun = false } = {}): Promise<WriteCtx> {
  const ctx = await openCtx(deps, projectId, { dryRun })
  await loadNodes(ctx, nodeIds)
  return ctx
}

/** Whether node `id` stands in this write (read and locked by `openUndo`, or as an earlier step left it): an add it takes back. */
export async function stillStands(ctx: WriteCtx, id: string): Promise<boolean> {
  return (await getNode(ctx, id)) !== null
}

/**
 * Fields of a node set back to `before` (`fields`, parentId among them), the revert's step of
 * change `revertOf`: `gone` when the node is no longer there (nothing read further); with `write`
 * false only that is looked at. Otherwise set back as an update sets them (`setBack`).
 */
export async function undoUpdate(
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
export async function undoDelete(
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
 * Fields of a node set back as an update sets them, in its three steps, each once: read
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
export interface AddsRead {
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
export async function readAdds(ctx: WriteCtx, roots: Map<string, number>): Promise<AddsRead> {
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
export async function removeAdds(ctx: WriteCtx, { roots, byId }: AddsRead): Promise<void> {
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
export async function undoIteration(
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
export async function moveAlong(ctx: WriteCtx, outbox: Outbox, move: NodesMove, revertOf: number): Promise<void> {
  for (const n of await moveIterationNodes(ctx.deps, outbox, move.from, move.to, revertOf)) {
    const known = ctx.nodes.get(n.id)
    if (known) ctx.nodes.set(n.id, { ...known, data: n.data, ...(n.rev ? { rev: n.rev } : {}) })
  }
}

/**
 * The revert's last node step: the deleted nodes it brought back, still queued, stored (./write.ts
 * `flush`), when there are any; its events marked as a revert's (`asReverts`).
 */
export async function finishUndo(ctx: WriteState): Promise<void> {
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
