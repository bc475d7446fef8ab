import { invalid } from '../errors'
import { loadNodes, reserveIds, type WriteCtx } from './context'
import { isNodeType, NODE_TYPES, type NodeType, PARENT_TYPE, parseNodeId } from './model'
import * as q from './queries'

/**
 * Every id the batch's adds need, before any entry is applied: one counter update per type,
 * taken in the fixed order of NODE_TYPES so that concurrent batches lock the counters in the
 * same order and never deadlock. Explicit `<type>-<n>` ids (an export loaded back) must never
 * have been handed out in this project, since ids are never reused; the counter moves past them,
 * so generated ids, this batch's drafts included, never collide with them. Malformed ids are
 * left to the add's rules to report (./rules.ts `checkAdd`).
 */
export async function allocateBatchIds(
  ctx: WriteCtx,
  entries: readonly { action: string; node?: { type?: unknown; id?: unknown; parentId?: unknown } }[],
): Promise<void> {
  const explicit = new Map<NodeType, { index: number; id: string; number: number }[]>()
  const generated = new Map<NodeType, number>()
  const seen = new Set<string>()
  entries.forEach((e, index) => {
    // the node's parts are checked by the node rules (./rules.ts `checkAdd`), so they are read as unknown here
    const type = e.action === 'add' ? e.node?.type : undefined
    if (!isNodeType(type)) return
    const id = e.node?.id
    if (id === undefined || (typeof id === 'string' && id.startsWith('draft-'))) {
      generated.set(type, (generated.get(type) ?? 0) + 1)
      return
    }
    if (typeof id !== 'string') return
    const parsed = parseNodeId(id)
    if (!parsed || parsed.type !== type) return
    if (seen.has(id)) throw invalid(`mutations[${index}]: node.id ${id} is used twice in this batch`)
    seen.add(id)
    explicit.set(type, [...(explicit.get(type) ?? []), { index, id, number: parsed.number }])
  })
  await loadNodes(ctx, seen)
  // a batch of adds only, of one type's new ids (the 100-add batch): the parents its adds name,
  // which each add's readAround would read in turn, are read (and locked) now, issued after the
  // counter's statement and awaited with it: on PostgreSQL one round trip (postgres.js sends a
  // transaction's statements without waiting for the answer of the one before), the locks taken
  // in the same order
  if (explicit.size === 0 && generated.size === 1 && entries.every((e) => e.action === 'add')) {
    const [[type, n]] = generated
    const parents = entries.flatMap(({ node }) =>
      isNodeType(node?.type) && PARENT_TYPE[node.type] !== null && typeof node.parentId === 'string' && node.parentId !== ''
        ? [node.parentId]
        : [],
    )
    await Promise.all([reserveIds(ctx, { [type]: n }), loadNodes(ctx, parents)])
    return
  }
  for (const type of NODE_TYPES) {
    const ids = explicit.get(type)
    if (ids) {
      const next = await q.allocateIds(ctx.deps.db, ctx.projectId, type, 0) // the first number never handed out
      for (const { index, id, number } of ids) {
        if (ctx.nodes.get(id)) throw invalid(`mutations[${index}]: Node with id ${id} already exists`)
        if (number < next)
          throw invalid(
            `mutations[${index}]: node.id ${id} was used before in this project and ids are never reused; give the node a draft- id instead`,
          )
      }
      await q.reserveId(ctx.deps.db, ctx.projectId, type, Math.max(...ids.map((i) => i.number)))
    }
    const n = generated.get(type)
    if (n) await reserveIds(ctx, { [type]: n })
  }
}
