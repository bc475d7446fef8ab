import { createHash } from 'node:crypto'
import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { ErrorListError, invalid, RefusalError } from '../errors'
import { canonical, runIdempotent, storedOutcome } from '../http/idempotency'
import { checkedBatch } from '../mutate/check'
import { MAX_BATCH } from '../mutate/model'
import { runBatch } from '../mutate/sequence'
import type { BatchResult } from '../nodes/batch'
import { type Node, toNode } from '../nodes/model'
import { focus, readNodesById } from '../nodes/service'
import type { Access } from '../projects/access'
import type { Plan } from './flows/types'
import type { RunState } from './model'
import { StateSpent, spend } from './spent'

export interface Change {
  action: 'add' | 'update' | 'delete' | 'addIteration'
  nodeId: string | null
  type: string
  before: Record<string, unknown> | null
  after: Record<string, unknown> | null
}

/** A plan's batches as one: their results in order, every draft's id, the last batch's _meta. */
interface Applied {
  results: BatchResult[]
  idMap: Record<string, string>
  _meta: { advisory?: unknown; _tip?: unknown }
}

/** The idempotency key of a terminal advance: the same state and answer always give the same key. */
export function applyKey(state: string, response: unknown): string {
  return `workflow:${createHash('sha256').update(state).update('\n').update(canonical(response)).digest('hex')}`
}

const failed = (message: string, body: { retry: boolean; partialApply: boolean; alreadyApplied?: boolean }, extra = {}) =>
  new RefusalError(500, message, { ...body, ...extra })

const publicNode = (n: Node) => ({ id: n.id, rev: n.rev, type: n.type, parentId: n.parentId, data: n.data })

/** `{done:true, changeset:[], ...}`: a run that ends without writing. */
export function finishedEmpty(message: string, tip?: string) {
  return { done: true, changeset: [] as Change[], focus: null, message, _meta: { viewCommand: null, ...(tip ? { _tip: tip } : {}) } }
}

/**
 * The terminal apply: the plan's entries go through the batch of POST /mutate (its checks, its
 * node cap, one transaction) under an idempotency key derived from the state and the answer,
 * so a retried advance never writes twice. Failures become the bodies of docs/reference/workflow.md's
 * terminal-apply table; a batch refusal of one entry is a bad answer (400 retry:true).
 */
export async function applyPlan(
  deps: Deps,
  user: User,
  /** the caller's access to the run's project, as POST /workflow asked it (once, before the body was checked) */
  access: Access,
  run: RunState,
  state: string,
  response: unknown,
  plan: Plan,
) {
  const key = applyKey(state, response)
  const request = { workflow: run.flow, projectId: run.projectId, key }
  let outcome: Awaited<ReturnType<typeof runIdempotent>>
  try {
    outcome = await runIdempotent(
      deps,
      user.id,
      key,
      request,
      async (db) => {
        const touched = plan.mutations.filter((m) => m.action === 'update' || m.action === 'delete').map((m) => String(m.nodeId))
        const before = new Map((await readNodesById(db, run.projectId, touched)).map((r) => [r.id, publicNode(toNode(r))]))
        await spend(db, state, run.expiresAt)
        const result = await batchInChunks({ ...deps, db }, access, plan)
        return terminalBody(run.projectId, plan, result, before)
      },
      { storeRefusals: false },
    )
  } catch (err) {
    throw await applyError(deps, user, key, plan, err)
  }
  if (outcome.replayed) throw alreadyApplied(outcome.body)
  return outcome.body
}

const alreadyApplied = (earlier: Record<string, unknown>) =>
  failed(
    'This advance was already applied by an earlier attempt',
    { retry: false, partialApply: false, alreadyApplied: true },
    {
      changeset: earlier.changeset,
      focus: earlier.focus,
      _meta: { _tip: 'Nothing was written twice. Read GET /api/v1/nodes for the ids; do not retry.' },
    },
  )

const stillRunning = () =>
  failed(
    'An identical apply is still running',
    { retry: true, partialApply: false },
    { _meta: { _tip: 'An identical apply is still running: wait a few seconds, then re-call advance with the same state and response.' } },
  )

/**
 * Before an answer is checked against the project as it is now: has this very advance (same
 * state, same response) already applied, or is it applying? A replay must hear that, not a
 * complaint about the nodes its first attempt deleted.
 */
export async function refuseRepeat(deps: Deps, user: User, state: string, response: unknown): Promise<void> {
  const stored = await storedOutcome(deps.db, user.id, applyKey(state, response))
  if (!stored) return
  if (stored.status === null) throw stillRunning()
  if (stored.status === 200 && stored.body) throw alreadyApplied(stored.body)
}

/**
 * The plan through POST /mutate's batch, in the caller's transaction. A plan may be longer than
 * one batch allows (1,000 phase-assign updates and their new iterations): it is cut into
 * batches at the boundaries of the answer's items (an action's or a phase's entries stay
 * together), later batches name earlier drafts by their real ids, and an entry's index in an
 * error is its index in the whole plan.
 */
async function batchInChunks(deps: Deps, access: Access, plan: Plan): Promise<Applied> {
  // every batch writes in the project whose access POST /workflow asked (a batch writes in the project its caller asked)
  const projectId = access.project.id
  const group = (i: number) => (plan.source[i] ?? '').replace(/\].*$/, ']')
  const chunks: number[][] = []
  let current: number[] = []
  plan.mutations.forEach((_, i) => {
    if (current.length && group(i) !== group(i - 1) && current.length + groupSize(i) > MAX_BATCH) {
      chunks.push(current)
      current = []
    }
    current.push(i)
  })
  if (current.length) chunks.push(current)
  function groupSize(from: number) {
    let n = 0
    while (from + n < plan.mutations.length && group(from + n) === group(from)) n++
    return n
  }

  const idMap = new Map<string, string>()
  const results: BatchResult[] = []
  let meta: Applied['_meta'] = {}
  const real = (id: unknown) => (typeof id === 'string' ? (idMap.get(id) ?? id) : id)
  for (const chunk of chunks) {
    const mutations = chunk.map((i) => {
      const m = plan.mutations[i]!
      if (m.action === 'add') {
        const node = m.node as Record<string, unknown>
        return { ...m, node: { ...node, ...(node.parentId === undefined ? {} : { parentId: real(node.parentId) }) } }
      }
      return m.nodeId === undefined ? m : { ...m, nodeId: real(m.nodeId) }
    })
    try {
      // checked as a POST /mutate batch's body is, its entries' node data with it
      const body = checkedBatch({ action: 'batch', projectId, mutations })
      // the write's sequence with the work plan of POST /mutate's batch: the project's work lock
      // before any node row is locked (on PostgreSQL: the triggers would take it only after the
      // plan's first rows, and deadlock with a write that took it first and waits for one of them),
      // its updates and deletes recomputed once at its end, claim tokens checked, claims of work
      // marked done ended (a plan of the flows marks none); `_meta.unblocked` is not part of its answer
      const { answer: result } = await runBatch(deps, access, body)
      results.push(...result.results)
      for (const [draft, id] of Object.entries(result.idMap)) idMap.set(draft, id)
      meta = result._meta
    } catch (err) {
      if (err instanceof ErrorListError && err.status === 400)
        err.errors.splice(
          0,
          err.errors.length,
          ...err.errors.map((e) => e.replace(/^mutations\[(\d+)\]: /, (_, i: string) => `mutations[${chunk[Number(i)]}]: `)),
        )
      throw err
    }
  }
  if (chunks.length > 1) meta = { ...meta, _tip: `Applied ${plan.mutations.length} mutation(s).` }
  return { results, idMap: Object.fromEntries(idMap), _meta: meta }
}

function terminalBody(projectId: string, plan: Plan, result: Applied, before: Map<string, Record<string, unknown>>) {
  const idMap = new Map<string, string>(Object.entries(result.idMap))
  const realId = (id: string) => idMap.get(id) ?? id
  const changeset: Change[] = result.results.map((r) => {
    switch (r.action) {
      case 'add':
        return { action: 'add', nodeId: r.nodeId, type: r.node.type, before: null, after: r.node }
      case 'update':
        return { action: 'update', nodeId: r.nodeId, type: r.node.type, before: before.get(r.nodeId) ?? null, after: r.node }
      case 'delete': {
        const was = before.get(r.nodeId) ?? null
        return { action: 'delete', nodeId: r.nodeId, type: String(was?.type ?? r.nodeId.split('-')[0]), before: was, after: null }
      }
      default:
        return { action: 'addIteration', nodeId: null, type: 'iteration', before: null, after: r.iteration }
    }
  })
  const focusId =
    (plan.focusDraft && realId(plan.focusDraft)) ||
    changeset.find((c) => c.action !== 'delete' && c.nodeId)?.nodeId ||
    changeset.find((c) => c.action === 'delete' && c.before?.parentId)?.before?.parentId ||
    null
  const nodeFocus = typeof focusId === 'string' ? focus(projectId, focusId) : null
  const viewCommand = nodeFocus?.viewCommand ?? null
  const meta: Record<string, unknown> = { viewCommand }
  if (nodeFocus) meta.focus = nodeFocus
  const batchMeta = result._meta
  if (batchMeta.advisory) meta.advisory = batchMeta.advisory
  if (batchMeta._tip) meta._tip = batchMeta._tip
  return {
    done: true,
    changeset,
    focus: typeof focusId === 'string' ? focusId : null,
    message: plan.message(changeset.length),
    _meta: meta,
  }
}

/** One of the refusals of the apply, as its body says (docs/reference/workflow.md); exported for its tests. */
export async function applyError(deps: Deps, user: User, key: string, plan: Plan, err: unknown): Promise<Error> {
  if (err instanceof StateSpent) return err
  if (err instanceof ErrorListError && err.status === 400) {
    // a batch entry broke a mutate rule: name the part of the answer it came from
    const errors = err.errors.map((e) =>
      e.replace(/^mutations\[(\d+)\]: /, (_, i: string) => `${plan.source[Number(i)] ?? `entry ${i}`}: `),
    )
    const tip = typeof err.meta._tip === 'string' ? ` (${err.meta._tip})` : ''
    return invalid(errors.join('; ') + tip)
  }
  if (err instanceof ErrorListError && err.status === 409) return stillRunning()
  if (err instanceof RefusalError && err.status < 500) {
    const { message: _m, ...extra } = err.extra as Record<string, unknown>
    return failed(
      err.error === 'node_cap_reached' ? 'node_cap_reached' : err.message,
      { retry: true, partialApply: false },
      {
        ...extra,
        message: err.message,
        _meta: { _tip: 'Nothing was written. Fix the cause (free nodes, or the plan) and re-call advance with the same state.' },
      },
    )
  }
  if (err instanceof ErrorListError)
    // the batch failed part-way and rolled its transaction back: nothing of it survives
    return failed(
      err.errors.join('; '),
      { retry: true, partialApply: false },
      { _meta: { _tip: 'Nothing was written; re-call advance with the same state.' } },
    )
  // the database failed in a way we cannot read: did the transaction commit?
  deps.log.error('workflow apply failed', { error: String((err as Error)?.stack ?? err) })
  const stored = await storedOutcome(deps.db, user.id, key).catch(() => undefined) // unreadable too: answered below as unknown, the failure logged above
  if (stored === null)
    return failed(
      'The apply failed before anything was written',
      { retry: true, partialApply: false },
      {
        _meta: { _tip: 'Nothing was written; re-call advance with the same state.' },
      },
    )
  if (stored?.status === 200)
    return failed(
      'The apply landed, but its answer was lost',
      { retry: false, partialApply: false, alreadyApplied: true },
      {
        changeset: stored.body?.changeset,
        _meta: { _tip: 'Read GET /api/v1/nodes for the ids; do not retry.' },
      },
    )
  return failed(
    'The apply failed and its outcome is unknown',
    { retry: false, partialApply: true },
    {
      _meta: { _tip: 'Part of the changes may be committed. Read GET /api/v1/nodes and reconcile before doing anything else.' },
    },
  )
}
