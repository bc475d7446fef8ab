import type { Static, TSchema } from '@sinclair/typebox'
import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { type Outbox, save } from '../events/outbox'
import type { WriteCtx } from '../nodes/context'
import type { Access } from '../projects/access'
import type { AccessRow } from '../projects/service'
import { afterWrite, beforeWrite, type WorkHeld, type WorkPlan, workPlan } from '../work/service'
import { type BatchRun, batch } from './batch'
import { BatchBody } from './model'

/*
 * The sequence of every write (`runRow`), inside its transaction, in the order it happens: the
 * work state before, the handler, the work state after, saving (steps 5 to 9 of ARCHITECTURE.md's
 * "How a write flows"). Every write runs it: each action of POST /mutate's table
 * (./service.ts `actions`, whose rows are built here: `nodeWrite`, `accessWrite`, `row`), a batch
 * inside another write (`runBatch`: a proposal applied or previewed, a workflow's plan), an
 * import's project and chunks (./import-okf.ts). A step before or after the handler is one line
 * of `runRow` or `saveWrite`.
 *
 * Locks, in the order a write takes them (each held until its transaction ends):
 * 1. Its idempotency record, only when the request has an Idempotency-Key: src/http/idempotency.ts
 *    `runIdempotent` (sql/idempotency/own.sql), in the transaction before the write runs.
 * 2. The project's work lock, on PostgreSQL only (PGlite runs one transaction at a time), when
 *    the write's work plan says `lock`: src/work/service.ts `beforeWrite` (sql/work/lock-project.sql);
 *    the work state's triggers take the same lock themselves when they need it (sql/migrations/0016).
 * 3. The owner's node-cap lock, for an add or a batch with adds when the owner has a cap:
 *    src/nodes/read.ts `readNodeCap` (sql/nodes/lock-cap-owner.sql).
 * 4. The id counters of the new nodes' types, in NODE_TYPES order, with a single add's parent
 *    row locked in the same statement: src/nodes/read.ts `nextId` and `reserveIds`
 *    (sql/nodes/allocate-id-locking-parent.sql, allocate-ids.sql; a batch's asked ahead by
 *    src/nodes/batch-ids.ts `allocateBatchIds`).
 * 5. The node rows the write reads: src/nodes/read.ts `loadNodes` (lock-one.sql, lock-many.sql;
 *    a batch's ahead, `readNamed`; a revert's, src/nodes/undo.ts `openUndo`) and
 *    `getNodeWithIntent` (an update's node, lock-with-intent.sql).
 */

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

/**
 * Who a write is for, as its handler takes it: the caller (POST /mutate's key, an import's; none
 * for a batch inside another write, whose handler takes the project alone), and the caller's
 * access to the project the body names, asked before the body was checked by the route or the
 * write that runs this one (none: addProject's body names no project).
 */
export interface Caller {
  user?: User
  access?: Access
}

/**
 * What the sequence runs of an action, typed by its body's schema (checked before it runs):
 * `work` reads from the checked body what the write means to the work state (src/work
 * `workPlan`); `handle` writes the action's rows, notes its events and changes (in a WriteCtx
 * for nodes, src/nodes/context.ts, or in an outbox), saves nothing, and builds its answer where
 * it wrote. Its handler is handed what the `Caller` holds that it takes (`nodeWrite`: the
 * project; `accessWrite`: the access and the caller; `row`: the caller and the access, if any)
 * and asks src/projects/access.ts nothing itself.
 */
export interface Row<W extends Written = Written> {
  schema: TSchema
  work(body: Record<string, unknown>): WorkPlan | undefined
  handle(deps: Deps, caller: Caller, body: Record<string, unknown>): Promise<W>
}

/** A row whose handler takes the caller and the access, if any (addProject's, whose body names no project). */
export const row = <S extends TSchema, W extends Written>(
  schema: S,
  work: (body: Static<S>) => WorkPlan | undefined,
  handler: (deps: Deps, user: User, body: Static<S>, access?: Access) => Promise<W>,
): Row<W> => ({
  schema,
  work: work as Row['work'],
  handle: (deps, { user, access }, body) => handler(deps, user!, body as Static<S>, access),
})

/**
 * A row whose handler is handed the access (the project and the caller's role, for an owner's
 * action to check there) rather than the project alone; the caller last, for an action that
 * reads who it is (a claim's key, a proposal's author). The writes of rows other than nodes, and
 * the iteration actions that move jobs and tasks (./iterations.ts). Its schema requires a
 * `projectId`, as `nodeWrite`'s does.
 */
export const accessWrite = <S extends TSchema, W extends Written>(
  schema: S,
  work: (body: Static<S>) => WorkPlan | undefined,
  handler: (deps: Deps, access: Access, body: Static<S>, user: User) => Promise<W>,
): Row<W> => ({
  schema,
  work: work as Row['work'],
  handle: (deps, { user, access }, body) => handler(deps, access!, body as Static<S>, user!),
})

/**
 * A node action's row (add, update, delete, restore, classify, batch): its handler writes in the
 * project of the caller's access. Its schema requires a `projectId` string (403 without one), so
 * the access was asked before the body is typed.
 */
export const nodeWrite = <S extends TSchema, W extends Written>(
  schema: S,
  work: (body: Static<S>) => WorkPlan | undefined,
  handler: (deps: Deps, project: AccessRow, body: Static<S>) => Promise<W>,
): Row<W> => ({
  schema,
  work: work as Row['work'],
  handle: (deps, { access }, body) => handler(deps, access!.project, body as Static<S>),
})

/** The project a checked body names ('' for addProject's, which names a new one: its plan reads none). */
const projectOf = (body: { projectId?: unknown }) => (typeof body.projectId === 'string' ? body.projectId : '')

/**
 * The sequence of every write, for `row`'s action with `body` checked against its schema, inside
 * its transaction, in the order it happens (steps 6 to 9 of ARCHITECTURE.md's "How a write
 * flows"): the work state before, only when the row's `work` gives the write a plan; the
 * handler; then the work state after and saving (`saveWrite`). Returns what saving gives back
 * and the handler's WriteCtx, when it wrote nodes (a proposal's preview reads it after its dry
 * run, ./proposals.ts).
 */
export async function runRow<W extends Written>(
  deps: Deps,
  row: Row<W>,
  caller: Caller,
  body: Record<string, unknown>,
): Promise<Saved<W['answer']> & Pick<W, 'ctx'>> {
  // the work state before: the project's work lock before any node row, claim tokens checked and renewed (src/work)
  const plan = row.work(body)
  const held = plan && (await beforeWrite(deps, projectOf(body), plan))
  // the handler: its rules, its rows written; its events and changes noted, not saved
  const written = await row.handle(deps, caller, body)
  // the work state after, then saving
  const saved = await saveWrite(deps, held, written)
  return { ...saved, ctx: written.ctx }
}

/** What a committed write wakes: the webhook deliveries and search (`events`), the task classifier (`classify`). */
function wakeLoops(deps: Pick<Deps, 'wake'>): void {
  deps.wake('events')
  deps.wake('classify')
}

/**
 * The sequence of every write after its handler, inside its transaction, in the order it
 * happens (steps 8 and 9 of ARCHITECTURE.md's "How a write flows", and 10's wake-up, handed to
 * the transaction to run after its commit). `runRow` ran step 6 (src/work `beforeWrite`, when
 * the write has a work plan: `held`) and the handler (7), which wrote its rows and noted its
 * events and changes in `written`, and saved nothing. src/work is entered here a second time, on
 * purpose: its lock had to come before the handler's first row, and this reads the rows the
 * handler wrote.
 */
async function saveWrite<W extends Written>(deps: Deps, held: WorkHeld | undefined, written: W): Promise<Saved<W['answer']>> {
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
 * POST /mutate's batch (./service.ts `actions`), whose row is this one: in the project of the
 * caller's access, with the work plan of a batch. The work plan matters inside another write too
 * (`runBatch`): its triggers would take the work lock only after its first node rows.
 */
export const batchRow = nodeWrite(BatchBody, workPlan.batch, batch)

/**
 * A batch run inside another write, through the whole sequence (`runRow` with the batch's row),
 * in the caller's transaction and in the project whose access the caller asked: a proposal
 * applied or previewed (./proposals.ts; a preview's body is marked ./batch.ts `DRY_RUN`, which `batch` honours:
 * nothing saved, and the WriteCtx returned for the preview to read), a workflow's plan
 * (src/workflow/apply.ts).
 */
export function runBatch(deps: Deps, access: Access, body: BatchRun) {
  return runRow(deps, batchRow, { access }, body)
}
