import type { Static, TSchema } from '@sinclair/typebox'
import type { User } from '../accounts/model'
import { claimAgent } from '../claims/service'
import type { Deps } from '../deps'
import { noteAfter, type Outbox, save } from '../events/outbox'
import { agentName, requestAuthor } from '../history/author'
import { staleWrite } from '../history/precondition'
import { batch, type DRY_RUN } from '../nodes/batch'
import type { WriteCtx } from '../nodes/context'
import type { Author } from '../ports/actor'
import type { Access } from '../projects/access'
import type { AccessRow } from '../projects/service'
import { afterWrite, beforeWrite, type WorkPlan, workPlan } from '../work/service'
import { checkedAction, entriesData } from './check'
import { weighEntries } from './cost-limit'
import { BatchBody } from './model'

/*
 * The sequence of every write (`runWrite`), inside its transaction, one step a line in the order
 * it happens: the body checked, its author, what its handler takes (with its cost), the work
 * state before, the handler, the work state after, a stale ifRev refused, saving, the loops woken
 * once it commits (steps 2 to 10 of ARCHITECTURE.md's "How a write flows"). Every write runs it: each action of POST /mutate's
 * table (./service.ts `actions`, whose rows are built here: `nodeWrite`, `accessWrite`, `row`,
 * `preparedNodeWrite`), a batch inside another write (`runBatch`: a proposal applied or previewed,
 * a workflow's plan), an import's project and chunks (./import-okf.ts). A step of every write is
 * one line of `runWrite`.
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
 * One write takes node rows (5) before the id counters (4): a batch that adds nodes under explicit
 * `<type>-<n>` ids reads those ids first, to refuse one that exists (src/nodes/batch-ids.ts
 * `allocateBatchIds`: a row found is locked, and the batch refused, 400, after the counters). Against
 * a single add under that node, which locks its type's counter and then its parent, of a type whose
 * counter the batch takes too, it can deadlock on PostgreSQL; the deadlock is transient and its transaction run again (src/db/postgres.ts `tx`;
 * 503 once its tries are spent).
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
 * What the sequence runs of an action, in the order `runWrite` uses it, each part taking the body
 * `B` typed by the row's schema: `schema` and `nodeData`, the body's check (./check.ts, step 2);
 * `author`, where the body names its agent or claim (history.md, 1; `byClaimToken` when absent);
 * `prepare`, what the handler takes (`I`), made of the checked body before anything is locked (a
 * revert's changes, selected), with its cost on PGlite (413: a batch's or a proposal's entries, a
 * revert's changes); the body itself when the row has none; `work`, what the write means to the
 * work state, read from the checked body (src/work `workPlan`); `handle`, which writes the
 * action's rows, notes its events and changes (in a WriteCtx for nodes, src/nodes/context.ts, or
 * in an outbox), saves nothing, and builds its answer where it wrote. Its handler is handed what
 * the `Caller` holds that it takes (`nodeWrite`: the project; `accessWrite`: the access and the
 * caller; `row`: the caller and the access, if any) and asks src/projects/access.ts nothing
 * itself. The row builders below (`nodeWrite`, `accessWrite`, `row`, `preparedNodeWrite`) take
 * every part together, typed by the schema they are given, so a part written for another body
 * fails `tsc`; `Row` is what they build, its body's type erased (`typedRow`) for the table of rows
 * of every schema (./service.ts `actions`).
 */
export interface TypedRow<B, I, W extends Written> {
  /**
   * The node data the body carries (an add's `node.data`, an update's `data`, a batch's or a
   * proposal's entries'), checked against its node type's schema once `schema` has typed the
   * body, the type being in the body (./check.ts `addData`, `updateData`, `entriesData`).
   */
  nodeData?: (body: B) => void
  author?: AuthorRule<B>
  prepare?: (deps: Deps, caller: Caller, body: B) => I | Promise<I>
  work: (body: B) => WorkPlan | undefined
  handle: (deps: Deps, caller: Caller, input: I) => Promise<W>
}

/** The parts of a row beside its schema, work plan and handler, given to its builder, typed by the same schema. */
export type RowOptions<B> = Pick<TypedRow<B, B, Written>, 'nodeData' | 'author' | 'prepare'>

/** A row as the sequence and the table hold it: its parts typed by its schema when built, its body's type erased (`typedRow`). */
export interface Row<W extends Written = Written> extends TypedRow<Record<string, unknown>, unknown, W> {
  schema: TSchema
  /** The answer's `changeIds` are its result (a revert's): in its answer once it saved, even when none, and shown whatever `Prefer` says. */
  changeIdsAreResult?: true
}

/**
 * The caller's access, for a row whose schema requires a `projectId` string (`nodeWrite`,
 * `accessWrite`, `preparedNodeWrite`) and for the work state's lock (step 5, a row with a work
 * plan is one of those): POST /mutate's edge asks it for every body that names a project
 * (src/mutate/routes.ts `actionAccess`), a write inside another is handed its caller's. Without
 * it the fault is the code's, not the request's: a 500, never a write in no one's project.
 */
function accessOf(caller: Caller): Access {
  if (caller.access) return caller.access
  throw new Error("a write in a project ran without the caller's access (POST /mutate's edge asks it for every body naming a project)")
}

/**
 * The caller's user, for a request's row (`row`, `accessWrite`) and its author (step 3): every
 * request has one, and an import hands its own to its project's row (./import-okf.ts); a batch
 * inside another write (`runBatch`) has none, and its row (`nodeWrite`) takes none.
 */
function userOf(caller: Caller): User {
  if (caller.user) return caller.user
  throw new Error('a request ran without its user (POST /mutate and an import always hand it)')
}

/**
 * The row of `schema`, its parts typed by it: the one point where the body's type is erased.
 * `runWrite` hands every part a body checked against `schema` (step 2, ./check.ts
 * `checkedAction`; a write inside another, `runBatch`'s, an import's, checked by the write that
 * runs it, ./check.ts `checkedBody`), and `handle` what `prepare` made of it, or the body itself
 * when the row has none, so each part gets the type it was written for. A write inside another
 * runs no `prepare` (steps 2 to 4 are a request's): the rows it runs (`batchRow`, addProject's)
 * have none or one that gives the body back (`weighEntries`); a `preparedNodeWrite`'s, whose
 * handler takes something else, runs only as a request.
 */
const typedRow = <S extends TSchema, I, W extends Written>(schema: S, parts: TypedRow<Static<S>, I, W>): Row<W> =>
  ({ schema, ...parts }) as Row<W>

/** A row whose handler takes the caller and the access, if any (addProject's, whose body names no project). */
export const row = <S extends TSchema, W extends Written>(
  schema: S,
  work: (body: Static<S>) => WorkPlan | undefined,
  handler: (deps: Deps, user: User, body: Static<S>, access?: Access) => Promise<W>,
  options: RowOptions<Static<S>> = {},
): Row<W> => typedRow(schema, { ...options, work, handle: (deps, caller, body) => handler(deps, userOf(caller), body, caller.access) })

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
  options: RowOptions<Static<S>> = {},
): Row<W> => typedRow(schema, { ...options, work, handle: (deps, caller, body) => handler(deps, accessOf(caller), body, userOf(caller)) })

/**
 * A node action's row (add, update, delete, restore, classify, batch): its handler writes in the
 * project of the caller's access. Its schema requires a `projectId` string (403 without one), so
 * the access was asked before the body is typed.
 */
export const nodeWrite = <S extends TSchema, W extends Written>(
  schema: S,
  work: (body: Static<S>) => WorkPlan | undefined,
  handler: (deps: Deps, project: AccessRow, body: Static<S>) => Promise<W>,
  options: RowOptions<Static<S>> = {},
): Row<W> => typedRow(schema, { ...options, work, handle: (deps, caller, body) => handler(deps, accessOf(caller).project, body) })

/**
 * A node action's row whose handler takes what its `prepare` made of the body (step 4 of
 * `runWrite`) rather than the body: a revert's, the changes it selected, weighed before anything
 * is locked (./revert-select.ts `selectChanges`).
 */
export const preparedNodeWrite = <S extends TSchema, I, W extends Written>(
  schema: S,
  work: (body: Static<S>) => WorkPlan | undefined,
  prepare: (deps: Deps, project: AccessRow, body: Static<S>) => Promise<I>,
  handler: (deps: Deps, project: AccessRow, input: I) => Promise<W>,
): Row<W> =>
  typedRow(schema, {
    prepare: (deps, caller, body) => prepare(deps, accessOf(caller).project, body),
    work,
    handle: (deps, caller, input) => handler(deps, accessOf(caller).project, input),
  })

/**
 * The sequence of every write once its access was asked, inside its transaction, one step a line
 * in the order it happens, numbered as ARCHITECTURE.md's "How a write flows" (1, the edge, is
 * src/mutate/routes.ts `mutate`): a step added to every write is one more line here. `found` is
 * the row of the action the body names, as the edge found it (none when it names no action: 2
 * refuses it). Steps 2 to 4 are a request's (POST /mutate's, `sent`): a write inside another
 * (`runBatch`: a proposal applied or previewed, a workflow's plan; an import's project and
 * chunks, ./import-okf.ts) has its body checked and its author set by that write, and its rows
 * (`batchRow`, `addProject`'s) are not prepared (`batchRow`'s weighing is not run): it starts at 5, each of 2 to 4 asking `sent`. They stay the request's:
 * its author is read from its headers, which an inner write has none of, and the rows' `prepare`
 * would answer 413 where no such answer is made today (a workflow's plan, a proposal applied). Returns the answer (a
 * request's naming the changes it saved), the ids of those changes, and the handler's WriteCtx
 * when it wrote nodes (a proposal's preview reads it after its dry run, ./proposals.ts).
 */
export async function runWrite<W extends Written>(
  deps: Deps,
  found: Row<W> | undefined,
  caller: Caller,
  body: unknown,
  sent?: Sent,
): Promise<Saved<W['answer']> & Pick<W, 'ctx'>> {
  // 2. the body checked, at one point (docs/validation.md): the envelope, the row's schema, its node data (./check.ts `checkedAction`)
  const { row, request } = sent ? checkedAction(found, body) : { row: found!, request: body as Record<string, unknown> }
  // 3. who makes it (history.md, 1), by the row's `author` rule (`authorOfRequest`, below)
  const own = sent
    ? { ...deps, author: await authorOfRequest(deps, userOf(caller), sent.headers, request, row.author, caller.access?.project.id) }
    : deps
  // 4. what the handler takes, by the row's `prepare`, before anything is locked or written: the body, weighed on PGlite (413: a
  // batch's or a proposal's entries, ./cost-limit.ts `weighEntries`), or a revert's changes, selected and weighed (./revert-select.ts)
  const input = sent && row.prepare ? await row.prepare(own, caller, request) : request
  // 5. the work state before, when the row's work plan asks (src/work/service.ts `workPlan`, `beforeWrite`): the lock, claim
  // tokens, in the project of the caller's access, where the handler writes (a row with a plan is a `nodeWrite` or an `accessWrite`)
  const plan = row.work(request)
  const held = plan && (await beforeWrite(own, accessOf(caller).project.id, plan))
  // 6. the handler (the row's `handle`): its rules, its rows written, its events and changes noted, its answer built; nothing saved
  const written = await row.handle(own, caller, input)
  const outbox = written.ctx ?? written.outbox
  // 7. the work state after (src/work/service.ts `afterWrite`): the claims of work marked done ended, recomputed, what it unblocked
  const after = held && (await afterWrite(own, held))
  if (after?.released.length) noteAfter(outbox!, after.released) // a write that marks work done writes nodes: it has a WriteCtx
  // 8. a stale ifRev of a node, a batch entry's too, refuses the whole write (409, live.md 1: src/history/precondition.ts
  // `staleWrite`); an iteration's is refused by its handler, before its rename's own checks (src/iterations/service.ts)
  if (written.ctx?.stale.length) throw await staleWrite(own, written.ctx.projectId, written.ctx.stale)
  // 9. saved (src/events/outbox.ts `save`): what it wrote beside, then its revision, changes (src/history) and events, the
  // revision cache, the waiters, PGlite's search; nothing for a dry run; the ids of the changes saved, in order
  const ids = outbox && (await save(own, outbox))
  const savedAny = outbox !== undefined && !outbox.dryRun
  // 10. once committed (src/db `afterCommit`: never on a rollback, nor for a dry run, which saved nothing): the loops woken
  if (savedAny) own.db.afterCommit(() => wakeLoops(own))
  // the commit follows where the transaction was opened (POST /mutate: src/http/idempotency.ts
  // `runIdempotent`): there the Db sends the notifications saving queued, in one statement, and on
  // PostgreSQL the replicas' marker after them (src/db/postgres.ts `tx`, src/revisions/replicas.ts);
  // the answer: the handler's, with what it unblocked and, a request's, the changes it saved (`answerOf`)
  const changeIds = savedAny ? [...(written.changeIds ?? []), ...ids!] : written.changeIds
  const answer = answerOf(row, written.answer, after?.unblocked, sent && changeIds) as W['answer']
  return { answer, changeIds, ctx: written.ctx }
}

/** What a request (POST /mutate) gives the sequence beside its body: its headers, read for its author (history.md, 1). */
export interface Sent {
  headers: Record<string, string | undefined>
}

/** What a committed write wakes: the webhook deliveries and search (`events`), the task classifier (`classify`). */
function wakeLoops(deps: Pick<Deps, 'wake'>): void {
  deps.wake('events')
  deps.wake('classify')
}

/**
 * A write's answer: its handler's, with what it unblocked (`_meta.unblocked`, when the work state
 * says), and, for a request, the ids of the changes it saved (`changeIds`, history.md 2), so that
 * the caller can take its own write back with `revert` (the app's Ctrl+Z). Kept in the stored
 * answer, so a replay has them too; shown only to a caller that asks (`Prefer: change-ids`,
 * src/mutate/routes.ts `shown`), so every answer of docs/reference/mutate.md stays as it was. A
 * revert's are its result (`changeIdsAreResult`): in its answer whenever it saved, even none.
 */
function answerOf(row: Row, answer: Answer, unblocked: unknown, changeIds: number[] | undefined): Answer {
  const meta = (answer._meta as Record<string, unknown> | undefined) ?? {}
  const shown = unblocked === undefined ? answer : { ...answer, _meta: { ...meta, unblocked } }
  if (changeIds === undefined || 'changeIds' in shown || (changeIds.length === 0 && !row.changeIdsAreResult)) return shown
  const { _meta, ...rest } = shown
  return { ...rest, changeIds: [...changeIds].sort((a, b) => a - b).map(String), ...(_meta === undefined ? {} : { _meta }) }
}

/**
 * Who makes this write (history.md, 1): the agent the body names (a claim's `agent`), else the
 * claim's agent of the first claim token it carries in `projectId` (`rule`: the action's row),
 * else X-Agent-Id; `via` from X-Arbor-Via. Step 3 of `runWrite`, on the checked body, in the
 * project of the caller's access (none for addProject's); an import's, once for all its chunks,
 * on a body of its own that carries no claim token (src/mutate/routes.ts).
 */
export async function authorOfRequest(
  deps: Deps,
  user: User,
  headers: Record<string, string | undefined>,
  request: Record<string, unknown>,
  rule: AuthorRule = byClaimToken,
  projectId?: string,
): Promise<Author> {
  const { agent: named, claimTokens } = rule(request)
  let agent: string | null = agentName(named) ?? null
  if (!agent && projectId !== undefined) {
    const token = claimTokens.find((t) => typeof t === 'string')
    if (typeof token === 'string') agent = await claimAgent(deps.db, projectId, token)
  }
  return requestAuthor(user, headers, { agent })
}

/**
 * What a checked body says of its author (step 3 of `runWrite`, after step 2 checked it): an
 * agent it names, the claim tokens it carries. A row's is typed by the row's schema (`RowOptions`).
 */
export type AuthorRule<B = Record<string, unknown>> = (body: B) => { agent?: unknown; claimTokens: unknown[] }
/** The author rule of most actions, of any body: its own claimToken. */
const byClaimToken: AuthorRule = (request) => ({ claimTokens: [request.claimToken] })
/** A batch's: the claim token of its first entry that carries one. */
const byEntryClaimTokens: AuthorRule<BatchBody> = (body) => ({
  claimTokens: body.mutations.map((e) => ('claimToken' in e ? e.claimToken : undefined)),
})

/**
 * POST /mutate's batch (./service.ts `actions`), whose row is this one: its handler the batch's
 * whole node write (src/nodes/batch.ts `batch`), in the project of the caller's access, with the
 * work plan of a batch; a request's (steps 2 to 4), its entries' node data (./check.ts
 * `entriesData`), their claim tokens for its author, its cost on PGlite (./cost-limit.ts
 * `weighEntries`). The work plan matters inside another write too (`runBatch`): its triggers
 * would take the work lock only after its first node rows.
 */
export const batchRow = nodeWrite(BatchBody, workPlan.batch, batch, {
  nodeData: entriesData,
  author: byEntryClaimTokens,
  prepare: weighEntries('batch'),
})

/**
 * A batch run inside another write, through the whole sequence (`runWrite` with the batch's row),
 * in the caller's transaction and in the project whose access the caller asked: a proposal
 * applied or previewed (./proposals.ts; a preview's body is marked src/nodes/batch.ts `DRY_RUN`, which `batch` honours:
 * nothing saved, and the WriteCtx returned for the preview to read), a workflow's plan
 * (src/workflow/apply.ts).
 */
export function runBatch(deps: Deps, access: Access, body: BatchBody & { [DRY_RUN]?: true }) {
  return runWrite(deps, batchRow, { access }, body)
}
