/**
 * The cost limit of one write on PGlite (issue 50, item 3; docs/reference/limits.md, "One write's
 * cost on the embedded database").
 *
 * PGlite is one embedded database with one session: while a write's transaction is open, no other
 * tenant's statement runs, so a write's time in its transaction is every other tenant's wait. A
 * batch or a revert within the API's limits (1,000 entries, 1,000 changes) can hold it for seconds
 * (449 updates each setting `blockedBy` to 50 approaches: 0.4-2.5 s on a 2-core machine). So
 * before such a write opens anything, its database time is estimated from what it sends and, over the
 * budget (PGLITE_WRITE_BUDGET_MS, 150 by default; 0 lifts it), it is refused with 413 and a `_tip`
 * that says how to split it. Nothing of a refused write is written.
 *
 * The estimate is in microseconds of PGlite's time on a 2-core machine, measured per kind of work
 * (`bun bench/stall-cost.ts`, bench/README.md): each batch entry or reverted change has its own
 * statements, except adds (one statement for all of a batch's new nodes, one for a revert's
 * removals), and every id a `blockedBy` or `serves` names costs its share of the update and of the
 * work-state recompute at the commit. PostgreSQL has no such limit: there a transaction holds one
 * connection of a pool, and other tenants' statements run beside it.
 */
import type { Deps } from '../deps'
import { RefusalError } from '../errors'
import type { ChangeRow } from '../history/service'
import { type EntryAction, fieldsSent, type SentEntry } from '../nodes/entries'

/**
 * Estimated PGlite microseconds per unit of work (bench/README.md, "A cost limit per write on
 * PGlite"); a batch entry's by its action (an entry of a new action fails tsc here until it has one).
 */
export const COST_US = {
  /** a batch `add`: its share of the one insert of the batch's nodes, its event and its change */
  add: 100,
  /** a batch `update`: the row read and locked, the update, its edit mark, its change */
  update: 500,
  /** a batch `delete`: the subtree read, the delete, the deleted node kept for restore */
  delete: 1000,
  /** a batch `addIteration` */
  addIteration: 500,
  /** each id a `blockedBy` or `serves` names: the update's share and the work-state recompute's */
  relationId: 50,
  /** a reverted add: its node's share of the one statement that removes them all */
  revertAdd: 100,
  /** a reverted delete: its node's share of the one insert that brings them back */
  revertDelete: 200,
  /** a reverted update (or revert), through the update rules one node at a time; an iteration change */
  revertUpdate: 500,
} as const satisfies { readonly [A in EntryAction]: number } & Record<string, number>

const RELATION_FIELDS = ['blockedBy', 'serves'] as const

/** Ids named by `blockedBy` and `serves` in a node's data (whatever else it holds). */
function relationIds(data: unknown): number {
  if (!data || typeof data !== 'object') return 0
  let n = 0
  for (const f of RELATION_FIELDS) {
    const list = (data as Record<string, unknown>)[f]
    if (Array.isArray(list)) n += list.length
  }
  return n
}

/**
 * The estimated PGlite microseconds of one batch entry (its body checked: the row's `prepare` runs
 * after the body's check): its action's, and each id the data it sends names
 * (src/nodes/entries.ts `fieldsSent`: an add's node, an update's entry).
 */
const entryCostUs = (e: SentEntry): number => COST_US[e.action] + COST_US.relationId * relationIds(fieldsSent(e)?.data)

/** The estimated PGlite microseconds of a batch's entries. */
export const batchCostUs = (entries: readonly SentEntry[]): number => entries.reduce<number>((us, e) => us + entryCostUs(e), 0)

type CostedChange = Pick<ChangeRow, 'target_kind' | 'before' | 'after' | 'fields'>

/** The estimated PGlite microseconds of undoing one change (history.md, 3: how src/nodes/undo.ts takes each back). */
function changeCostUs(c: CostedChange): number {
  if (c.target_kind !== 'node') return COST_US.revertUpdate
  if (c.before === null) return COST_US.revertAdd
  const data = (c.before as { data?: Record<string, unknown> }).data ?? {}
  if (c.after === null) return COST_US.revertDelete + COST_US.relationId * relationIds(data)
  const set = Object.fromEntries(c.fields.filter((f) => f in data).map((f) => [f, data[f]]))
  return COST_US.revertUpdate + COST_US.relationId * relationIds(set)
}

/** The estimated PGlite microseconds of undoing `changes`. */
export const revertCostUs = (changes: readonly CostedChange[]): number => changes.reduce((us, c) => us + changeCostUs(c), 0)

/** The budget of one write in microseconds, or null when there is none (PostgreSQL, or a budget of 0). */
function budgetUs(deps: Deps): number | null {
  if (deps.db.kind !== 'pglite') return null
  const ms = deps.config.pgliteWriteBudgetMs
  return ms > 0 ? ms * 1000 : null
}

/**
 * How many consecutive parts (entries, changes) one request may carry so that any run of that many
 * fits the budget, whatever the mix: the budget over the costliest part (at least 1).
 */
const perRequest = (costsUs: number[], budget: number) => Math.max(1, Math.floor(budget / Math.max(...costsUs)))

function tooCostly(what: string, costUs: number, budget: number, tip: string, perRequestMax: number) {
  const ms = Math.ceil(costUs / 1000)
  return new RefusalError(413, 'write_too_costly', {
    message: `${what} would hold the embedded database (PGlite) for about ${ms} ms; one write may hold it for at most ${budget / 1000} ms, so that other requests are not kept waiting`,
    estimatedMs: ms,
    limitMs: budget / 1000,
    perRequestMax,
    _meta: { _tip: tip },
  })
}

/**
 * A request's parts weighed against the PGlite budget: their sum, the budget and how many parts
 * one request may hold, when the sum is over it; null when it is not, or when there is no budget
 * (PostgreSQL), where the parts are not weighed at all.
 */
function overBudget(deps: Deps, weigh: () => number[]): { cost: number; budget: number; n: number } | null {
  const budget = budgetUs(deps)
  if (budget === null) return null
  const costs = weigh()
  const cost = costs.reduce((a, b) => a + b, 0)
  return cost <= budget ? null : { cost, budget, n: perRequest(costs, budget) }
}

/**
 * Refuses (413, nothing written) a client's `batch`, or a `propose` of one (its preview runs the
 * batch, and applying it would), whose estimated database time is over the budget on PGlite.
 * Only requests: the batches a workflow step or an import runs are parts of their own request.
 * Checked before the action runs, after the access check and the body's (step 4 of
 * src/mutate/sequence.ts `runWrite`, through the row's `prepare`, `weighEntries`), so a project the
 * caller cannot reach gets its 403 first and a body that is also invalid its 400.
 */
function checkBatchCost(deps: Deps, entries: readonly SentEntry[], noun: 'batch' | 'proposal'): void {
  const over = overBudget(deps, () => entries.map(entryCostUs))
  if (!over) return
  const { cost, budget, n } = over
  const relations = entries.some((e) => relationIds(fieldsSent(e)?.data) > 0)
  throw tooCostly(
    `This ${noun} of ${entries.length} entries`,
    cost,
    budget,
    `Send at most ${n} entries per ${noun}: split the mutations into several, in order (each is applied on its own; draft- ids resolve only within one batch, so keep a new node and the entries that name its draft id together)${relations ? ', or name fewer ids in blockedBy and serves per batch' : ''}. Updates and deletes cost more than adds (about ${COST_US.update / COST_US.add} and ${COST_US.delete / COST_US.add} adds each, plus ${COST_US.relationId / COST_US.add} of an add for each id a blockedBy or serves names). This limit is the server's PGlite budget (PGLITE_WRITE_BUDGET_MS); a server on PostgreSQL has none.`,
    n,
  )
}

/**
 * The `prepare` of a row whose request sends `mutations` (src/mutate/sequence.ts `batchRow`,
 * src/mutate/service.ts `propose`, whose word the refusal calls it by): `checkBatchCost` of its
 * checked entries, then the body as it is, for its handler.
 */
export const weighEntries =
  (noun: 'batch' | 'proposal') =>
  <B extends { mutations: readonly SentEntry[] }>(deps: Deps, _caller: unknown, body: B): B => {
    checkBatchCost(deps, body.mutations, noun)
    return body
  }

/**
 * Refuses (413, nothing written) a revert (or its dry run, the same plan) whose estimated database
 * time is over the budget on PGlite: src/mutate/revert-select.ts `selectChanges`, once it has selected the
 * changes, before anything is locked or written (step 4 of src/mutate/sequence.ts `runWrite`).
 */
export function checkRevertCost(deps: Deps, changes: readonly CostedChange[]): void {
  const over = overBudget(deps, () => changes.map(changeCostUs))
  if (!over) return
  const { cost, budget, n } = over
  throw tooCostly(
    `Reverting these ${changes.length} changes`,
    cost,
    budget,
    `Revert in windows of at most ${n} changes, newest window first: narrow filter.since/filter.until (GET /history with the same filter shows each window's changes), or send changeIds in groups of at most ${n}. Taking back an update costs more than taking back an add (about ${COST_US.revertUpdate / COST_US.revertAdd} times). This limit is the server's PGlite budget (PGLITE_WRITE_BUDGET_MS); a server on PostgreSQL has none.`,
    n,
  )
}
