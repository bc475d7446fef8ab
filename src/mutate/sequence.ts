import type { Deps } from '../deps'
import { type Outbox, save } from '../events/outbox'
import type { WriteCtx } from '../nodes/context'
import { afterWrite, beforeWrite, type WorkPlan } from '../work/service'

export type Answer = Record<string, unknown>

/**
 * What a handler leaves for saving, having saved nothing itself: the WriteCtx it wrote nodes
 * into (src/nodes/context.ts), or the outbox of a write of other rows (a claim, an iteration, a
 * proposal, a project), beside its answer when it could build it where it wrote (a node action,
 * src/nodes/service.ts; a batch, ./batch.ts); neither when its answer is already whole (a revert
 * with nothing to take back).
 */
export type Written = { ctx: WriteCtx; outbox?: undefined; answer?: Answer } | { ctx?: undefined; outbox?: Outbox; answer: Answer }

/** What a committed write wakes: the webhook deliveries and search (`events`), the task classifier (`classify`). */
function wakeLoops(deps: Pick<Deps, 'wake'>): void {
  deps.wake('events')
  deps.wake('classify')
}

/** The answer a handler built beside what it wrote. */
const itsAnswer = (written: Written) => written.answer as Answer

/**
 * The sequence of every write, inside its transaction, in the order it happens (steps 6 to 9 of
 * ARCHITECTURE.md's "How a write flows", and 10's wake-up, handed to the transaction to run after its commit): every action of POST /mutate's table (its body
 * already checked against its schema), and a batch run inside another write (a proposal
 * applied or previewed, a workflow's plan). `plan` is what the write means to the work state
 * (src/work `workPlan`; none for a write that asks it nothing: an add of a goal, a need or a
 * task, an update of a label, a write of other rows); `write`, the handler (a one-line callback
 * of the caller: POST /mutate's is ./service.ts `row`'s, so the walk goes back into that file once
 * here, on its way to the handler), checks
 * its rules in the project whose access its caller asked (the edge, src/mutate/routes.ts; a
 * proposal; a workflow's plan), writes its rows (a node write: stored, src/nodes/write.ts) and
 * notes its events and changes, and saves nothing; `answer` reads the answer from what was saved
 * (a revert's change ids), when the handler has not built it beside what it wrote. Each step is
 * one call; src/work is entered twice here (before the handler and after it), and only when the
 * write has a plan, which the caller asked of it first (`workPlan`, from the body).
 */
export async function runWrite<W extends Written, A extends Answer = NonNullable<W['answer']>>(
  deps: Deps,
  projectId: string,
  plan: WorkPlan | undefined,
  write: () => Promise<W>,
  answer: (written: W) => A | Promise<A> = itsAnswer as (written: W) => A,
): Promise<A> {
  // the work state before, unless the write leaves it alone (no plan): the project's work lock,
  // claim tokens checked and renewed (src/work)
  const held = plan && (await beforeWrite(deps, projectId, plan))
  // the handler: its rules, its rows written; its events and changes noted, not saved
  const written = await write()
  const outbox = written.ctx ?? written.outbox
  // the work state after: the claims of work it marked done ended, recomputed, what it unblocked (src/work).
  // src/work a second time, on purpose: its lock had to come before the handler's first row, and this reads the rows it wrote
  const after = held && (await afterWrite(deps, held))
  if (after?.released.length) outbox!.events.push(...after.released) // a write that marks work done writes nodes: it has a WriteCtx
  // saving, one step for every write: its ifRevs, what it wrote beside (a revert's iteration
  // steps), then its changes (src/history) and events, sent together, the revision, the search outbox (src/events/outbox.ts)
  if (outbox) await save(deps, outbox)
  // once it has committed (never on a rollback, nor for a dry run, which saves nothing): this
  // process's loops woken (webhooks' first attempts, the classifier, search), whichever route or
  // write ran this sequence (POST /mutate, POST /workflow's plan, POST /import-okf's chunks)
  if (outbox && !outbox.dryRun) deps.db.afterCommit(() => wakeLoops(deps))
  // the answer (the handler's, or read from what was saved), with what it unblocked (`_meta.unblocked`)
  const result = await answer(written)
  if (after?.unblocked === undefined) return result
  return { ...result, _meta: { ...((result._meta as Record<string, unknown> | undefined) ?? {}), unblocked: after.unblocked } }
}
