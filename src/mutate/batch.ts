import { sqlState } from '../db/sqlstate'
import type { Deps } from '../deps'
import { ErrorListError, invalid, RefusalError } from '../errors'
import { allocateBatchIds } from '../nodes/batch-ids'
import { checkNodeCap, checkPreconditions, type WriteCtx } from '../nodes/context'
import { batchCycleFree } from '../nodes/cycle-free'
import { capAdvisory, focus, inboxAdvisory, writeMeta } from '../nodes/service'
import { flush, openCtx } from '../nodes/write'
import type { AccessRow } from '../projects/service'
import { applyEntry, prefetchUpdated } from './batch-entries'
import type { BatchBody, BatchEntry } from './model'

/**
 * A batch failed while writing. The whole batch ran in one transaction, so nothing of it
 * survives: `rolledBack` says what was undone and `partial` never appears.
 */
class BatchFailed extends ErrorListError {
  /** index: the entry being applied, or null when the final write of the batch's new nodes failed */
  constructor(
    index: number | null,
    cause: unknown,
    readonly rolledBack: { nodes: number; iterations: number },
  ) {
    super(
      [
        `${index === null ? '' : `mutations[${index}]: `}write failed (${reason(cause)}); the whole batch was rolled back and may be retried`,
      ],
      { _tip: 'Nothing of this batch was written. Retry it as it is, or reconcile from GET /nodes first.' },
      500,
    )
    this.cause = cause // the error plugin logs its stack
  }
  override toBody() {
    return { ...super.toBody(), rolledBack: this.rolledBack }
  }
}

/** A database's word on a failed write is the client's to read; a bug's message (a TypeError) stays in the log. */
const reason = (cause: unknown) =>
  sqlState(cause) ? String((cause as Error).message) : 'an unexpected error, logged under this response’s x-request-id'

/**
 * batch (docs/reference/mutate.md): every entry is checked before the batch counts
 * as applied, addIteration entries go first, draft- ids are remapped, other ids kept, and the
 * whole batch is one transaction — a failure part-way leaves nothing half-written. The handler
 * of the write's sequence (src/mutate/sequence.ts): each entry goes through src/nodes/write.ts
 * as the single action does; at its end it checks the ifRevs and stores its new rows itself (so
 * a failed insert is answered as the batch's rollback), and the sequence's saving step saves the rest.
 */
export async function batch(
  deps: Deps,
  /** the project whose access the caller asked (the edge of POST /mutate, a proposal, a workflow's plan) */
  project: AccessRow,
  body: BatchBody,
  /** a proposal's preview (./proposals.ts) makes the write a dry run (ctx.dryRun) and reads its changes */
  watch?: (ctx: WriteCtx) => Promise<void>,
) {
  const entries: BatchEntry[] = body.mutations // 1 to MAX_BATCH entries of known actions (schema)
  entries.forEach((e, i) => {
    // the entry schemas do not name projectId, so one sent is checked here
    const own = (e as { projectId?: unknown }).projectId
    if (own !== undefined && own !== project.id)
      throw invalid(`mutations[${i}]: entries carry no projectId of their own (the batch's projectId applies)`)
  })
  const hasAdds = entries.some((e) => e.action === 'add')
  const capped = hasAdds ? await checkNodeCap(deps, project) : null

  const ctx = await openCtx(deps, project.id)
  await watch?.(ctx)
  await allocateBatchIds(ctx, entries)
  ctx.cycleFree = await batchCycleFree(ctx, entries)
  await prefetchUpdated(ctx, entries)

  // addIteration entries first, so nodes may name an iteration created in the same batch
  const order = [...entries.keys()].sort(
    (a, b) => Number(entries[b].action === 'addIteration') - Number(entries[a].action === 'addIteration'),
  )
  const results: Record<string, unknown>[] = new Array(entries.length)
  /** each add's answered node and the node it wrote: its rev is known once the batch's rows are stored */
  const added: [Record<string, unknown>, { rev?: string }][] = []
  for (const i of order) {
    try {
      results[i] = await applyEntry(ctx, entries[i], added)
    } catch (err) {
      // a refusal is the client's to read, not a failed write: a broken rule's 400 names its entry
      if (err instanceof ErrorListError)
        throw new ErrorListError(
          err.errors.map((e) => `mutations[${i}]: ${e}`),
          err.meta,
        )
      if (err instanceof RefusalError) throw err // 409 being_edited
      throw new BatchFailed(i, err, { ...ctx.created })
    }
  }
  await checkPreconditions(ctx) // a stale ifRev refuses the whole batch (409), not a write failure
  try {
    await flush(ctx)
  } catch (err) {
    throw new BatchFailed(null, err, { ...ctx.created })
  }
  return { ctx, entries, results, added, capped }
}

/** The answer of a saved batch: each add's node with the rev it was stored with, the cap's and the inbox's advisories. */
export async function batchAnswer({ ctx, entries, results, added, capped }: Awaited<ReturnType<typeof batch>>) {
  for (const [answered, written] of added) answered.rev = written.rev
  await capAdvisory(ctx, capped)
  if (entries.some((e) => e.action === 'add' && e.node?.type === 'task')) await inboxAdvisory(ctx)
  ctx.tips.unshift(`Applied ${entries.length} mutation(s).`)
  // focus on the first node the batch added or changed that still exists
  const focused = results.find((r) => (r.action === 'add' || r.action === 'update') && ctx.nodes.get(r.nodeId as string))
  return {
    success: true,
    results,
    idMap: Object.fromEntries(ctx.drafts),
    _meta: writeMeta(ctx, focused ? focus(ctx.projectId, focused.nodeId as string) : undefined),
  }
}
