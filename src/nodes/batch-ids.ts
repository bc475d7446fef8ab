import { invalid } from '../errors'
import type { WriteCtx } from './context'
import { addedNode, type SentEntry } from './entries'
import { isNodeType, NODE_TYPES, type NodeType, parseNodeId } from './model'
import * as q from './queries'
import { askIds, loadNodes, reserveIds } from './read'

/**
 * Every id the batch's adds need, before any entry is applied: one counter update per type,
 * taken in the fixed order of NODE_TYPES so that concurrent batches lock the counters in the
 * same order and never deadlock. Explicit `<type>-<n>` ids (an export loaded back) must never
 * have been handed out in this project, since ids are never reused; the counter moves past them,
 * so generated ids, this batch's drafts included, never collide with them. Malformed ids are
 * left to the add's rules to report (./rules.ts `checkAdd`).
 */
export async function allocateBatchIds(ctx: WriteCtx, entries: readonly SentEntry[]): Promise<void> {
  const explicit = new Map<NodeType, { index: number; id: string; number: number }[]>()
  const generated = new Map<NodeType, number>()
  const seen = new Set<string>()
  entries.forEach((e, index) => {
    // read as unknown: what an id sent may be is the node rules' to say (./rules.ts `checkSentId`)
    const node = addedNode(e)
    const type = node?.type
    if (!isNodeType(type)) return
    const id = node?.id
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
  // no explicit id (the usual batch): its ids asked for, their counters sent with the batch's next
  // statements (./read.ts `askIds`: the nodes its entries name, `readNamed`)
  if (explicit.size === 0) return askIds(ctx, Object.fromEntries(generated))
  await loadNodes(ctx, seen)
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
