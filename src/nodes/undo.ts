import type { Deps } from '../deps'
import { LATER } from '../iterations/model'
import { getNode, iterationsOf, loadNodes, openCtx, readUpdate, reloadIterations, type WriteCtx } from './context'
import type { NodeUpdate } from './input'
import type { Node, NodeData } from './model'
import { checkUpdate } from './rules'
import { bringBack, flush, removeRows, storeUpdate, subtrees } from './write'

/**
 * What a revert (src/mutate/revert.ts, history.md 3) does to nodes, as the operations it names:
 * each one the steps of a node write in their order (read: ./context.ts, checked: ./rules.ts,
 * stored: ./write.ts), so that the revert reads as its own plan (read what it takes back, say its
 * conflicts, take back each change) and imports one file of nodes. The plain reads and stores
 * it makes between them (`getNode`, `flush`, `subtrees`, `removeRows`, `reloadIterations`) are
 * named here too but live in ./context.ts and ./write.ts, so a revert still enters those files
 * between its operations (ARCHITECTURE.md, the walk). Nothing here knows of changes or
 * conflicts: those are the revert's.
 */

/**
 * The revert's WriteCtx, with the nodes its changes name read and locked at once: a write to them
 * waits for this one's commit, and one that committed before is among the later changes the
 * revert reads next.
 */
export async function openUndo(deps: Deps, projectId: string, nodeIds: string[]): Promise<WriteCtx> {
  const ctx = await openCtx(deps, projectId)
  await loadNodes(ctx, nodeIds)
  return ctx
}

/** A node as this write has it now (read and locked, or as an earlier step left it); null when it is gone (./context.ts). */
export { getNode, type WriteCtx }

/**
 * Fields of a node set back as an update sets them, in its three steps, each once: read
 * (./context.ts `readUpdate`: the node, the edit intents on those fields, its parent, references
 * and iterations), checked (./rules.ts `checkUpdate`: the update's rules, then the intents),
 * stored (./write.ts `storeUpdate`). A job or a task set back into an iteration that no longer
 * exists (renamed or deleted since) is not checked nor stored: the iteration is answered, for the
 * revert to refuse in its own words, before the update's rules would in theirs.
 */
export async function setBack(ctx: WriteCtx, input: NodeUpdate): Promise<{ missingIteration?: string }> {
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
 * Queued for the write's insert (./write.ts `bringBack`, `flush`).
 */
export async function restoreDeleted(ctx: WriteCtx, node: Node): Promise<void> {
  const iteration = node.data.iteration
  if (typeof iteration === 'string' && !(await iterationsOf(ctx)).has(iteration)) {
    ctx.tips.push(`${node.id}'s iteration ${iteration} no longer exists; it is in ${LATER}.`)
    node = { ...node, data: { ...node.data, iteration: LATER } as NodeData }
  }
  bringBack(ctx, node, null, true)
}

/**
 * Named here, written in ./write.ts and ./context.ts (a call to one of them goes to that file):
 * adds taken back, the subtrees under their nodes read as the database now holds them (the
 * write's queued adds stored first: ./write.ts `subtrees`), then, once the revert has said its
 * conflicts on them, removed in one statement (./write.ts `removeRows`); around a step that
 * another module writes in this transaction (a revert's iteration step,
 * src/iterations/service.ts), before it the write's queued adds stored (./write.ts `flush`, also
 * the revert's last step), after it the iterations read again when next needed (./context.ts
 * `reloadIterations`).
 */
export { flush, reloadIterations, removeRows, subtrees }
