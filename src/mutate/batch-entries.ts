import { addIteration } from '../iterations/service'
import { expectRev, loadNodes, noteIteration, readUpdate, type WriteCtx } from '../nodes/context'
import type { NodeUpdate } from '../nodes/input'
import { checkUpdate } from '../nodes/rules'
import { deleteNode, prepareAdd, storeUpdate } from '../nodes/write'
import type { BatchEntry } from './model'

/*
 * A batch's entries (src/mutate/batch.ts), in the order the batch takes them: the nodes its
 * updates change read ahead, then each entry applied through src/nodes/write.ts.
 */

/**
 * The nodes a batch's updates change, read (and locked) in one statement before the first entry
 * instead of one statement per entry (issue 50, item 3: a third of a 1,000-update batch's time on
 * PGlite). Only when the batch deletes nothing, so each node is read as it stands when its entry
 * runs (an earlier entry of the batch that changes it keeps its context copy up to date); ids the
 * batch adds itself are left to their add.
 */
export async function prefetchUpdated(ctx: WriteCtx, entries: readonly BatchEntry[]): Promise<void> {
  if (entries.some((e) => e.action === 'delete')) return
  const added = new Set(entries.flatMap((e) => (e.action === 'add' && typeof e.node?.id === 'string' ? [e.node.id] : [])))
  const ids = entries.flatMap((e) => (e.action === 'update' && !added.has(e.nodeId) ? [e.nodeId] : []))
  if (ids.length > 1) await loadNodes(ctx, ids)
}

/** One entry of a batch, written into the batch's context: its result as the batch answers it. */
export async function applyEntry(
  ctx: WriteCtx,
  e: BatchEntry,
  added: [Record<string, unknown>, { rev?: string }][],
): Promise<Record<string, unknown>> {
  switch (e.action) {
    case 'addIteration': {
      const iteration = await addIteration(ctx.deps, ctx, e.iteration)
      noteIteration(ctx, iteration)
      return { action: 'addIteration', iteration }
    }
    case 'add': {
      const node = await prepareAdd(ctx, e.node, true)
      const answered = { id: node.id, rev: undefined as string | undefined, type: node.type, parentId: node.parentId, data: node.data }
      added.push([answered, node])
      return { action: 'add', nodeId: node.id, ...(e.node?.id ? { draftId: e.node.id } : {}), node: answered }
    }
    case 'update': {
      const input = e as unknown as NodeUpdate
      const read = await readUpdate(ctx, input)
      const checked = await checkUpdate(ctx, input, read)
      const saved = await storeUpdate(ctx, checked)
      return {
        action: 'update',
        nodeId: saved.id,
        node: { id: saved.id, rev: saved.rev, type: saved.type, parentId: saved.parentId, data: saved.data },
      }
    }
    default: {
      const id = e.nodeId && (ctx.drafts.get(e.nodeId) ?? e.nodeId)
      await expectRev(ctx, id, e.ifRev, null)
      const { node, orphanedChildren, changelogId } = await deleteNode(ctx, id)
      return { action: 'delete', nodeId: node.id, orphanedChildren, changelogId }
    }
  }
}
