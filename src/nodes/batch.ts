import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { invalid, ValidationError } from '../http/errors'
import { addIteration } from '../iterations/service'
import { requireProject } from '../projects/access'
import { capAdvisory, checkNodeCap, finish, openCtx, reserveIds, writeMeta, type WriteCtx } from './context'
import { FieldError, isNodeType, type NodeType } from './model'
import { deleteNode, rule, writeUpdate } from './service'
import { prepareAdd, prepareUpdate } from './write'

export const MAX_BATCH = 1000
const ENTRY_ACTIONS = ['add', 'update', 'delete', 'addIteration']

/**
 * A batch failed while writing. The whole batch ran in one transaction, so nothing of it
 * survives: `rolledBack` says what was undone and `partial` never appears.
 */
class BatchFailed extends ValidationError {
  constructor(index: number, cause: unknown, readonly rolledBack: { nodes: number; iterations: number }) {
    super([`mutations[${index}]: write failed (${(cause as Error)?.message ?? cause}); the whole batch was rolled back and may be retried`], {}, 500)
  }
  override toBody() {
    return { ...super.toBody(), rolledBack: this.rolledBack }
  }
}

/**
 * batch (api.md, rules for batch; improved): every entry is checked before the batch counts
 * as applied, addIteration entries go first, draft- ids are remapped, other ids kept, and the
 * whole batch is one transaction — a failure part-way leaves nothing half-written.
 */
export async function batch(deps: Deps, user: User, body: Record<string, any>) {
  const { project } = await requireProject(deps.db, user, body.projectId)
  const entries = body.mutations
  if (!Array.isArray(entries) || entries.length === 0) throw invalid('mutations is required: a non-empty array of add, update, delete or addIteration entries')
  if (entries.length > MAX_BATCH) throw invalid(`mutations has ${entries.length} entries; at most ${MAX_BATCH} are allowed per batch`)
  entries.forEach((e, i) => {
    if (!e || typeof e !== 'object' || !ENTRY_ACTIONS.includes(e.action))
      throw invalid(`mutations[${i}]: action must be one of: ${ENTRY_ACTIONS.join(', ')}`)
    if (e.projectId !== undefined && e.projectId !== project.id)
      throw invalid(`mutations[${i}]: entries carry no projectId of their own (the batch's projectId applies)`)
  })
  const hasAdds = entries.some((e) => e.action === 'add')
  const capped = hasAdds ? await checkNodeCap(deps, project) : null

  const ctx = await openCtx(deps, project.id)
  // ids for every add up front: one counter update per type
  const counts: Partial<Record<NodeType, number>> = {}
  for (const e of entries)
    if (e.action === 'add' && isNodeType(e.node?.type) && (e.node.id === undefined || String(e.node.id).startsWith('draft-')))
      counts[e.node.type as NodeType] = (counts[e.node.type as NodeType] ?? 0) + 1
  await reserveIds(ctx, counts)

  // addIteration entries first, so nodes may name an iteration created in the same batch
  const order = [...entries.keys()].sort((a, b) => Number(entries[b].action === 'addIteration') - Number(entries[a].action === 'addIteration'))
  const results: Record<string, unknown>[] = new Array(entries.length)
  for (const i of order) {
    const e = entries[i]
    const prefix = `mutations[${i}]: `
    try {
      results[i] = await rule(() => applyEntry(ctx, e), prefix)
    } catch (err) {
      if (err instanceof ValidationError || err instanceof FieldError) throw err
      throw new BatchFailed(i, err, { ...ctx.created })
    }
  }
  try {
    await finish(ctx)
  } catch (err) {
    throw new BatchFailed(entries.length - 1, err, { ...ctx.created })
  }
  await capAdvisory(ctx, capped)
  ctx.tips.unshift(`Applied ${entries.length} mutation(s).`)
  return {
    success: true,
    results,
    idMap: Object.fromEntries(ctx.drafts),
    _meta: writeMeta(ctx),
  }
}

async function applyEntry(ctx: WriteCtx, e: Record<string, any>): Promise<Record<string, unknown>> {
  switch (e.action) {
    case 'addIteration': {
      const iteration = await addIteration({ ...ctx.deps }, ctx.projectId, e.iteration)
      ctx.iterations.set(iteration.name, {
        name: iteration.name, status: iteration.status, system: false, sort_order: iteration.sortOrder, git_tags: iteration.gitTags, completed_at: null,
      })
      ctx.created.iterations++
      return { action: 'addIteration', iteration }
    }
    case 'add': {
      const node = await prepareAdd(ctx, e.node, true)
      return { action: 'add', nodeId: node.id, ...(e.node?.id ? { draftId: e.node.id } : {}), node: { id: node.id, type: node.type, parentId: node.parentId, data: node.data } }
    }
    case 'update': {
      const { node, classified } = await prepareUpdate(ctx, e)
      const saved = await writeUpdate(ctx, node, classified)
      return { action: 'update', nodeId: saved.id, node: { id: saved.id, type: saved.type, parentId: saved.parentId, data: saved.data } }
    }
    default: {
      const { node, orphanedChildren, changelogId } = await deleteNode(ctx, e.nodeId && (ctx.drafts.get(e.nodeId) ?? e.nodeId))
      return { action: 'delete', nodeId: node.id, orphanedChildren, changelogId }
    }
  }
}
