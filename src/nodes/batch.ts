import { sqlState, transient } from '../db/sqlstate'
import type { Deps } from '../deps'
import { ErrorListError, prefixed, RefusalError } from '../errors'
import type { NewIteration } from '../iterations/model'
import type { AccessRow } from '../projects/service'
import { allocateBatchIds } from './batch-ids'
import type { WriteCtx } from './context'
import { noteCycleFree } from './cycle-free'
import { addedNode, changesNamed, goesFirst, namedNode } from './entries'
import type { NodeEntry } from './input'
import type { Node } from './model'
import { loadNodes, openCtx, readEntry, readNamed, readNodeCap } from './read'
import { checkEntry, checkNodeCap } from './rules'
import { capAdvisory, focus, inboxAdvisory, writeMeta } from './service'
import { flush, type StoredEntry, storeEntry, storeIteration } from './write'

/**
 * A batch failed while writing. The whole batch ran in one transaction, so nothing of it
 * survives: `rolledBack` says what was undone and `partial` never appears. Not for an error
 * `transient()` accepts (a deadlock, a serialization failure, a connection lost): that one goes
 * up as it is, for the transaction to run the batch again (src/db/postgres.ts `tx`) or, once its
 * attempts are spent, the error plugin's 503 with Retry-After.
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
 * The mark of a batch run as a proposal's preview (src/mutate/proposals.ts, through
 * src/mutate/sequence.ts `runBatch`): a dry run, whose saving stores nothing. A symbol, not a
 * field, so that no client can send it: POST /mutate's batch body (src/mutate/model.ts
 * `BatchBody`) lets unknown fields by, and a JSON body holds no symbol.
 */
export const DRY_RUN = Symbol('dryRun')

/**
 * A batch's entry as its write takes it: an entry of src/mutate/model.ts `BatchEntry`, a node
 * entry (./input.ts `NodeEntry`) or an addIteration. An entry of another action is refused by
 * tsc where the batch's row hands this file its body (src/mutate/sequence.ts `batchRow`).
 */
export type BatchEntry = NodeEntry | { action: 'addIteration'; iteration: NewIteration }

/** A batch's body as its handler takes it: POST /mutate's (src/mutate/model.ts `BatchBody`), or a proposal's preview's, marked `DRY_RUN`. */
export interface BatchRun {
  mutations: readonly BatchEntry[]
  [DRY_RUN]?: true
}

/** A node as a batch's result answers it: an add's gets its rev once the batch's rows are stored. */
type ResultNode = Pick<Node, 'id' | 'rev' | 'type' | 'parentId' | 'data'>

/**
 * One entry of a batch's `results` (docs/reference/mutate.md), its `action` the entry's: a union
 * told apart by it, so that tsc refuses a comparison with an action it lacks (`batchAnswer`).
 */
export type BatchResult =
  | { action: 'add'; nodeId: string; draftId?: string; node: ResultNode }
  | { action: 'update'; nodeId: string; node: ResultNode }
  | { action: 'delete'; nodeId: string; orphanedChildren: string[]; changelogId: number }
  | { action: 'addIteration'; iteration: Awaited<ReturnType<typeof storeIteration>> }

/** The result of an entry that added or updated a node: what the answer's focus may name. */
type NodeResult = Extract<BatchResult, { node: ResultNode }>

/** Each add's answered node and the node it wrote: the answered node's rev is set once the batch's rows are stored. */
type Added = [answered: ResultNode, written: Node][]

/**
 * batch (docs/reference/mutate.md): every entry is checked before the batch counts
 * as applied, addIteration entries go first, draft- ids are remapped, other ids kept, and the
 * whole batch is one transaction — a failure part-way leaves nothing half-written. The handler
 * of the write's sequence (src/mutate/sequence.ts), in the steps of a single add or update
 * (./service.ts): what its entries need read ahead, in as few statements as it can; then each
 * entry in turn read, checked and stored as the single action is (./read.ts `readEntry`,
 * ./rules.ts `checkEntry`, ./write.ts `storeEntry`), on the write as the entries before it left
 * it, the first that fails answering with its index (an addIteration entry: ./write.ts
 * `storeIteration`); at its end its new rows stored (so a failed insert is answered as the
 * batch's rollback) and its answer built; the sequence refuses a stale ifRev of any entry, as
 * every write's, and saves the rest (its events and changes). Its WriteCtx (a proposal's preview
 * opens it as a dry run) is held here as the read-only `WriteCtx` that `openCtx` returns: it is
 * changed only by the functions it is handed to (./read.ts, ./batch-ids.ts, ./cycle-free.ts,
 * ./rules.ts, ./write.ts, ./service.ts's advisories), and nothing here assigns a field of it.
 *
 * Why each entry is read, checked and stored before the next is read, rather than every entry
 * read, then every one checked, then every one stored: an entry's rules see what the entries
 * before it wrote, and a delete's effect cannot be known before it is stored: it removes its
 * node's subtree as the database holds it once the entries before it are stored (the adds under
 * it, the nodes moved into or out of it), read with those rows' revs and in the order its events
 * and changes are noted (sql/nodes/subtree.sql: by depth, created_at and ord, which only their
 * insert gives); a later entry that names a node of it must find it gone. What no earlier entry
 * can change is read ahead (`readNamed`); an entry's own read is left its id, a draft's mapping,
 * the edit intent on the fields it sets and its ifRev.
 */
export async function batch(
  deps: Deps,
  /** the project whose access the caller asked (the edge of POST /mutate, a proposal, a workflow's plan) */
  project: AccessRow,
  body: BatchRun,
) {
  // 1 to MAX_BATCH entries of known actions, none naming another project (src/mutate/model.ts BatchBody, ProposeBody)
  const entries = body.mutations
  // a proposal's preview is a dry run: saving stores nothing of it
  const ctx = await openCtx(deps, project.id, { dryRun: body[DRY_RUN] === true })
  const hasAdds = entries.some(addedNode)
  const capped = hasAdds ? checkNodeCap(await readNodeCap(deps, project)) : null

  // 1. read ahead: every id its adds need (asked for, their counters sent with the reads that follow:
  // on PostgreSQL one round trip), whether its blockedBy can close a cycle at all, the nodes its entries name
  await allocateBatchIds(ctx, entries)
  // a proposal's preview: every existing node an entry changes is read (and locked) as it stands
  // before any entry changes it: its rev is the proposal's base (src/mutate/proposals.ts reads
  // them after, ./read.ts `lockedTarget`); after the counters' locks, as every write takes them
  // (src/mutate/sequence.ts)
  if (body[DRY_RUN]) {
    await loadNodes(
      ctx,
      entries.flatMap((e) => {
        const id = changesNamed(e) ? namedNode(e) : undefined // an update's or a delete's node (./entries.ts)
        return typeof id === 'string' ? [id] : []
      }),
    )
  }
  await noteCycleFree(ctx, entries)
  await readNamed(ctx, entries)

  // 2. each entry in turn, addIteration entries first (a node may name an iteration the batch
  // creates: ./entries.ts `goesFirst`): read, checked, stored
  const order = [...entries.keys()].sort((a, b) => Number(goesFirst(entries[b])) - Number(goesFirst(entries[a])))
  const results: BatchResult[] = new Array(entries.length)
  const added: Added = []
  for (const i of order) {
    const e = entries[i]
    try {
      if (e.action === 'addIteration') {
        const iteration = await storeIteration(ctx, e.iteration)
        results[i] = { action: 'addIteration', iteration }
        continue
      }
      const read = await readEntry(ctx, e)
      const checked = await checkEntry(ctx, read)
      results[i] = resultOf(await storeEntry(ctx, checked), added)
    } catch (err) {
      // a refusal is the client's to read, not a failed write: a broken rule's 400 names its entry
      if (err instanceof ErrorListError) throw prefixed(`mutations[${i}]`, err)
      if (err instanceof RefusalError) throw err // 409 being_edited
      if (transient(err)) throw err // a deadlock, a lost race, the database gone: the transaction's to run again (src/db/postgres.ts), or 503
      throw new BatchFailed(i, err, { ...ctx.created })
    }
  }

  // 3. its adds stored (a stale ifRev refuses the whole batch, as every write, in the sequence: src/mutate/sequence.ts `runWrite`)
  try {
    await flush(ctx)
  } catch (err) {
    if (transient(err)) throw err // as above
    throw new BatchFailed(null, err, { ...ctx.created })
  }
  // 4. its answer, built where it wrote (as a single add's): its adds' revs are known once they are stored
  return { ctx, answer: await batchAnswer(ctx, entries, results, added, capped) }
}

/** A node entry's result as the batch answers it; an add's node gets its rev once the batch's rows are stored (`added`). */
function resultOf(stored: StoredEntry, added: Added): BatchResult {
  const { node } = stored
  switch (stored.action) {
    case 'delete':
      return { action: 'delete', nodeId: node.id, orphanedChildren: stored.orphanedChildren, changelogId: stored.changelogId }
    case 'update':
      return {
        action: 'update',
        nodeId: node.id,
        node: { id: node.id, rev: node.rev, type: node.type, parentId: node.parentId, data: node.data },
      }
    case 'add': {
      const answered: ResultNode = { id: node.id, rev: undefined, type: node.type, parentId: node.parentId, data: node.data }
      added.push([answered, node])
      return { action: 'add', nodeId: node.id, ...(stored.sentId ? { draftId: stored.sentId } : {}), node: answered }
    }
  }
}

/** The answer of a batch whose rows are stored: each add's node with the rev it was stored with, the cap's and the inbox's advisories. */
async function batchAnswer(
  ctx: WriteCtx,
  entries: readonly BatchEntry[],
  results: BatchResult[],
  added: Added,
  capped: { ownerId: string; cap: number } | null,
) {
  for (const [answered, written] of added) answered.rev = written.rev
  await capAdvisory(ctx, capped)
  if (entries.some((e) => addedNode(e)?.type === 'task')) await inboxAdvisory(ctx)
  // focus on the first node the batch added or changed that still exists
  const focused = results.find((r): r is NodeResult => (r.action === 'add' || r.action === 'update') && Boolean(ctx.nodes.get(r.nodeId)))
  return {
    success: true,
    results,
    idMap: Object.fromEntries(ctx.drafts),
    _meta: writeMeta(ctx, {
      summary: `Applied ${entries.length} mutation(s).`,
      focus: focused ? focus(ctx.projectId, focused.nodeId) : undefined,
    }),
  }
}
