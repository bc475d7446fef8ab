import type { Deps } from '../deps'
import { type Outbox, save } from '../events/outbox'
import type { WriteCtx } from '../nodes/context'
import type { AccessRow } from '../projects/service'
import { afterWrite, beforeWrite, type WorkHeld, workPlan } from '../work/service'
import { batch } from './batch'
import type { BatchBody } from './model'

export type Answer = Record<string, unknown>

/**
 * What a handler leaves for saving, having saved nothing itself: the WriteCtx it wrote nodes
 * into (src/nodes/context.ts), or the outbox of a write of other rows (a claim, an iteration, a
 * proposal, a project); neither when nothing is left to save (a revert with nothing to take
 * back, or its dry run). Beside it, its answer, built where it wrote. `changeIds`: the changes a
 * sequence run inside the handler saved already (a proposal applied: its batch's, `runBatch`).
 */
export type Written = ({ ctx: WriteCtx; outbox?: undefined } | { ctx?: undefined; outbox?: Outbox }) & {
  answer: Answer
  changeIds?: number[]
}

/**
 * What a write's sequence gives back: the handler's answer with what the write unblocked
 * (`_meta.unblocked`), and the ids of every change it saved (history.md, 2), those of a sequence
 * run inside it first, then its own in the order saved (src/events/outbox.ts `save`); undefined
 * when it saved nothing (no outbox, or a dry run).
 */
export interface Saved<A extends Answer = Answer> {
  answer: A
  changeIds?: number[]
}

/** What a committed write wakes: the webhook deliveries and search (`events`), the task classifier (`classify`). */
function wakeLoops(deps: Pick<Deps, 'wake'>): void {
  deps.wake('events')
  deps.wake('classify')
}

/**
 * The sequence of every write after its handler, inside its transaction, in the order it
 * happens (steps 8 and 9 of ARCHITECTURE.md's "How a write flows", and 10's wake-up, handed to
 * the transaction to run after its commit). Its caller ran step 6 (src/work `beforeWrite`, when
 * the write has a work plan: `held`) and the handler (7), which wrote its rows and noted its
 * events and changes in `written`, and saved nothing. The callers: ./service.ts `runRow`, every
 * action of POST /mutate's table, and `runBatch` below, a batch inside another write. src/work is
 * entered here a second time, on purpose: its lock had to come before the handler's first row,
 * and this reads the rows the handler wrote.
 */
export async function saveWrite<W extends Written>(deps: Deps, held: WorkHeld | undefined, written: W): Promise<Saved<W['answer']>> {
  const outbox = written.ctx ?? written.outbox
  // the work state after: the claims of work it marked done ended, recomputed, what it unblocked (src/work)
  const after = held && (await afterWrite(deps, held))
  if (after?.released.length) outbox!.events.push(...after.released) // a write that marks work done writes nodes: it has a WriteCtx
  // saving, one step for every write (src/events/outbox.ts `save`): its ifRevs, what it wrote
  // beside (a revert's iteration steps), then its own: the revision when the write says so, its
  // changes (src/history) and events sent together, the revision cache, the waiters and (PGlite)
  // search told; the ids of the changes it saved, returned
  const ids = outbox && (await save(deps, outbox))
  const savedAny = outbox !== undefined && !outbox.dryRun
  // once it has committed (never on a rollback, nor for a dry run, which saves nothing): this
  // process's loops woken (webhooks' first attempts, the classifier, search), whichever route or
  // write ran this sequence (POST /mutate, POST /workflow's plan, POST /import-okf's chunks)
  if (savedAny) deps.db.afterCommit(() => wakeLoops(deps))
  // once this returns, the commit follows where the transaction was opened (POST /mutate:
  // src/http/idempotency.ts `runIdempotent`). There the Db sends the notifications saving queued,
  // in one statement just before the commit, and on PostgreSQL, when one is on a channel the
  // replicas' revision waits listen for (REVISION_CHANNEL, switched on in src/create-deps.ts by
  // `waitHeard`), the replicas' marker after them; the transaction returns only once the
  // replicas have heard it (src/db/postgres.ts `tx`, src/revisions/replicas.ts)
  const changeIds = savedAny ? [...(written.changeIds ?? []), ...ids!] : written.changeIds
  // the handler's answer, with what it unblocked (`_meta.unblocked`)
  const answer = written.answer
  if (after?.unblocked === undefined) return { answer, changeIds }
  const meta = (answer._meta as Record<string, unknown> | undefined) ?? {}
  return { answer: { ...answer, _meta: { ...meta, unblocked: after.unblocked } } as W['answer'], changeIds }
}

/**
 * A batch run inside another write, through the whole sequence (steps 6 to 9) with the work plan
 * of POST /mutate's batch, in the caller's transaction and in the project whose access the caller
 * asked: a proposal applied or previewed (./proposals.ts; `watch` sees its WriteCtx once opened),
 * a workflow's plan (src/workflow/apply.ts). The same three calls as ./service.ts `runRow`, with
 * the batch's handler named here.
 */
export async function runBatch(
  deps: Deps,
  project: AccessRow,
  body: BatchBody,
  watch?: (ctx: WriteCtx) => Promise<void>,
): Promise<Saved<Awaited<ReturnType<typeof batch>>['answer']>> {
  // the work state before: the project's work lock before any node row, claim tokens checked and renewed (src/work)
  const plan = workPlan.batch(body)
  const held = plan && (await beforeWrite(deps, project.id, plan))
  // the handler: its rules, its rows written; its events and changes noted, not saved
  const written = await batch(deps, project, body, watch)
  return saveWrite(deps, held, written)
}
