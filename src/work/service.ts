import type { User } from '../accounts/model'
import {
  type ClaimView,
  checkTokens,
  claimLost,
  endClaims,
  extendByTokens,
  extendForReader,
  hashToken,
  holdForClaim,
  iso,
  liveClaims,
  newToken,
  releaseByToken,
  renewByToken,
  takeClaim,
} from '../claims/service'
import type { Deps } from '../deps'
import { notFound, RefusalError } from '../errors'
import { type DomainEvent, outboxOf, save } from '../events/outbox'
import { afterAccess } from '../http/action-schema'
import type { AddBody, DeleteBody, UpdateBody } from '../nodes/input'
import { readNodesById, readWithAncestors } from '../nodes/service'
import type { FieldName, NodeData, NodeType } from '../ports/node-data'
import { formatRev } from '../ports/rev'
import { type Access, requireProject } from '../projects/access'
import { type ClaimBody, READY_LIMIT, ReadyQuery, type ReleaseClaimBody, type RenewClaimBody } from './model'
import * as q from './queries'
import { type ReadyItem, spreadFirst, type TreeNode, type WorkState } from './ready'

/*
 * Ready work and claims (docs/agents.md), and the work state around every write (its sequence,
 * src/mutate/sequence.ts `runWrite`). Each action that writes nodes has its work plan (`workPlan`,
 * the `work` column of POST /mutate's table, src/mutate/service.ts `actions`), computed from its
 * own checked body: whether the write takes the project's work lock, defers its triggers' work
 * to its end, may unblock work; the claim tokens it checks; the ids it marks done. A batch's
 * plan gathers its entries' by the same functions as the single actions' (`ENTRY_WORK`, keyed by
 * the entry's `action`, its schema's discriminant). `beforeWrite` and `afterWrite` read the plan
 * alone: nothing of src/work compares an action's name.
 */

export const LEASE_SECONDS = { default: 900, min: 30, max: 86_400 } as const

/** GET /ready: the ready work items, in the order an agent should take them. */
export async function listReady(deps: Deps, user: User, raw: Record<string, string>) {
  const { project: p, input: query } = await afterAccess((id) => requireProject(deps, user, id), 'query', ReadyQuery, raw)
  const limit = query.limit === undefined ? READY_LIMIT.default : Number(query.limit)
  const now = deps.now()
  const iteration = query.iteration ?? null
  const [rows, counts] = await Promise.all([
    q.readyPage(deps.db, p.id, iteration, now, null, limit),
    q.readyCounts(deps.db, p.id, iteration, now),
  ])
  const total = counts.unblocked - counts.claimed
  const meta: Record<string, unknown> = { total, claimed: counts.claimed, blocked: counts.blocked }
  if (total === 0)
    meta._tip =
      counts.claimed + counts.blocked > 0
        ? 'Nothing is ready now. Wait for a change with GET /events?wait=60 and look again.'
        : 'No open work: add jobs under an approach, or do-it tasks.'
  else if (total > limit) meta._tip = `${total - limit} more ready item(s); raise limit (at most ${READY_LIMIT.max}).`
  else meta._tip = 'Claim one with {action:"claim", projectId, agent, count:1} before working on it.'
  return {
    items: await readyItems(
      deps,
      p.id,
      rows.map((r) => r.node_id),
    ),
    _meta: meta,
  }
}

/** The items of GET /ready for these ids, in this order: each node with its ancestors, root first. */
async function readyItems(deps: Deps, projectId: string, ids: string[]): Promise<ReadyItem[]> {
  if (!ids.length) return []
  const rows = await readWithAncestors(deps.db, projectId, ids)
  const known = new Map<string, TreeNode>(
    rows.map((r) => [r.id, { id: r.id, rev: formatRev('node', r.id, r.rev), type: r.type, parentId: r.parent_id, data: r.data }]),
  )
  return ids.flatMap((id) => {
    const n = known.get(id)
    if (!n) return [] // deleted since the page was read (a read outside a transaction)
    const ancestors: ReadyItem['ancestors'] = []
    for (let at = n.parentId ? known.get(n.parentId) : undefined; at; at = at.parentId ? known.get(at.parentId) : undefined)
      ancestors.unshift({ id: at.id, type: at.type, label: String(at.data.label ?? '') })
    return [{ node: { id: n.id, rev: n.rev, type: n.type, parentId: n.parentId, data: n.data }, ancestors, blockedBy: [] }]
  })
}

/** Why each of these nodes is or is not ready now (no entry: the node does not exist). */
async function workStates(deps: Deps, projectId: string, ids: string[], now: Date) {
  const [nodes, rows, claims] = await Promise.all([
    readNodesById(deps.db, projectId, ids),
    q.states(deps.db, projectId, ids),
    liveClaims(deps.db, projectId, now),
  ])
  const work = new Map(rows.map((r) => [r.node_id, r]))
  const states = new Map<string, WorkState>()
  for (const n of nodes) {
    const w = work.get(n.id)
    states.set(n.id, !w ? 'not_work' : !w.open ? 'done' : w.blocked ? 'blocked' : claims.has(n.id) ? 'claimed' : 'ready')
  }
  return { states, claims }
}

/**
 * The first `count` ready items in the order claims take them (spread first, src/work/ready.ts),
 * read page by page from the index: a page with `count` approaches already holds them.
 */
async function* claimCandidates(deps: Deps, projectId: string, count: number, now: Date): AsyncGenerator<string> {
  const tried = new Set<string>()
  for (let size = Math.max(4 * count, 32); ; size *= 4) {
    const rows = await q.readyPage(deps.db, projectId, null, now, null, size)
    const complete = rows.length < size
    const order = spreadFirst(rows.map((r) => ({ id: r.node_id, group: r.type === 'job' && r.approach_id ? r.approach_id : null })))
    // without the whole list, only the first of each approach is surely in its final place
    const sure = complete ? order : order.filter((o) => o.round === 0)
    for (const o of sure)
      if (!tried.has(o.id)) {
        tried.add(o.id)
        yield o.id
      }
    if (complete) return
  }
}

const claimEvent = (type: 'node.claimed' | 'node.released', claim: { nodeId: string; agent: string; expiresAt?: string }): DomainEvent => ({
  type,
  claim,
})

/** claim: items named by `nodeIds` (all or nothing), or up to `count` ready ones, spread first. */
export async function claim(deps: Deps, { project: p }: Access, body: ClaimBody, user: User) {
  const now = deps.now()
  const lease = body.leaseSeconds ?? LEASE_SECONDS.default
  const expiresAt = new Date(now.getTime() + lease * 1000)
  const taken: { nodeId: string; agent: string; claimToken: string; expiresAt: string }[] = []
  const tryTake = async (nodeId: string) => {
    const token = newToken()
    const row = await takeClaim(deps.db, p.id, nodeId, body.agent, hashToken(token), expiresAt, now, lease, user.keyId ?? null)
    if (row) taken.push({ nodeId, agent: row.agent, claimToken: token, expiresAt: iso(row.expires_at) })
    return !!row
  }
  if (body.nodeIds !== undefined) {
    const ids = [...new Set(body.nodeIds)]
    const { states, claims } = await workStates(deps, p.id, ids, now)
    const missing = ids.find((id) => !states.has(id))
    if (missing) throw notFound(`Node ${missing} not found`, { message: `No node ${missing} in project ${p.id}` })
    const refused = ids.flatMap((id) => {
      const state = states.get(id)!
      return state === 'ready' ? [] : [{ nodeId: id, reason: state }]
    })
    let holder: ClaimView | undefined = refused.flatMap((r) => (r.reason === 'claimed' ? [claims.get(r.nodeId)!] : []))[0]
    if (!refused.length)
      for (const id of ids)
        if (!(await tryTake(id))) {
          // taken by a concurrent claim, or marked done, since this one read the project
          const held = (await liveClaims(deps.db, p.id, now)).get(id)
          refused.push({ nodeId: id, reason: held ? 'claimed' : 'done' })
          holder = held
          break
        }
    if (refused.length)
      throw new RefusalError(409, 'not_claimable', {
        message: `Not claimable: ${refused.map((r) => `${r.nodeId} (${r.reason})`).join(', ')}`,
        items: refused,
        ...(holder ? { holder } : {}),
      })
  } else {
    const count = body.count ?? 1
    // a candidate another agent took meanwhile is skipped: its row says so, atomically. One that
    // another transaction is claiming right now is passed over without waiting for its commit, so
    // agents claiming at once spread over the ready items instead of queueing on the first.
    for await (const id of claimCandidates(deps, p.id, count, now)) {
      if (await holdForClaim(deps.db, p.id, id)) await tryTake(id)
      if (taken.length >= count) break
    }
  }
  // each claim with its node's rev (live.md, 1): a claim changes no rev, the writes it leads to send it as ifRev
  const revs = new Map(
    (
      await readNodesById(
        deps.db,
        p.id,
        taken.map((c) => c.nodeId),
      )
    ).map((r) => [r.id, formatRev('node', r.id, r.rev)]),
  )
  const claims = taken.map((c) => ({
    nodeId: c.nodeId,
    rev: revs.get(c.nodeId) ?? '',
    agent: c.agent,
    claimToken: c.claimToken,
    expiresAt: c.expiresAt,
  }))
  const tip = taken.length
    ? `Work on it, then send {action:"update", projectId, nodeId, claimToken, data:{status:"done"}}; renew with renewClaim before ${taken[0]!.expiresAt}.`
    : 'Nothing is ready to claim. Wait for a change with GET /events?wait=60 (or GET /ready) and try again.'
  // its events, saved by the write's sequence (src/mutate/sequence.ts)
  const events = taken.map((c) => claimEvent('node.claimed', { nodeId: c.nodeId, agent: c.agent, expiresAt: c.expiresAt }))
  return { outbox: outboxOf(p.id, events), answer: { success: true, claims, _meta: { _tip: tip } } }
}

export async function renewClaim(deps: Deps, { project: p }: Access, body: RenewClaimBody) {
  const now = deps.now()
  const lease = body.leaseSeconds ?? LEASE_SECONDS.default
  const row = await renewByToken(deps.db, p.id, hashToken(body.claimToken), new Date(now.getTime() + lease * 1000), now)
  if (!row) throw claimLost('This claimToken is unknown, expired or released')
  return {
    outbox: { ...outboxOf(p.id), revised: true }, // /nodes and /tree show the new expiresAt
    answer: {
      success: true,
      claim: { nodeId: row.node_id, agent: row.agent, claimToken: body.claimToken, expiresAt: iso(row.expires_at) },
    },
  }
}

/**
 * A read of `nodeId` by `agent` (X-Agent-Id) that the caller was allowed: the agent's live claim on
 * the node lasts its own length from now again, as a write with its token would renew it.
 */
export async function renewForReader(deps: Deps, projectId: string, nodeId: string, agent: string): Promise<void> {
  await deps.db.tx(async (tx) => {
    const renewed = await extendForReader(tx, projectId, nodeId, agent, deps.now())
    if (renewed.length) await save({ ...deps, db: tx }, { ...outboxOf(projectId), revised: true }) // /nodes and /tree show the new expiresAt
  })
}

export async function releaseClaim(deps: Deps, { project: p }: Access, body: ReleaseClaimBody) {
  const now = deps.now()
  const row = await releaseByToken(deps.db, p.id, hashToken(body.claimToken), now)
  if (!row) throw claimLost('This claimToken is unknown, expired or released')
  const released = claimEvent('node.released', { nodeId: row.node_id, agent: row.agent })
  return { outbox: outboxOf(p.id, [released]), answer: { success: true, released: { nodeId: row.node_id } } }
}

/** A claim token a write carries, with the node it names: checked (409 claim_lost) and renewed before the write. */
type Tokened = { nodeId: string; claimToken: string }

/**
 * What a write means to the work state, computed from its checked body by its action's row of
 * POST /mutate's table (src/mutate/service.ts `actions`, its `work`: `workPlan`). `beforeWrite`
 * and `afterWrite` read these facts and nothing else of the write: not its action's name, not
 * its body.
 */
export interface WorkPlan {
  /**
   * Take the project's work lock (sql/work/lock-project.sql) before anything is written: the
   * triggers that keep the work state (sql/migrations/0016) take it too, and taking it first
   * means no write waits for it while holding a node row another write of the project needs.
   * On PostgreSQL only: PGlite runs one transaction at a time.
   */
  lock: boolean
  /** many statements: the triggers set their changes aside and the work state is recomputed once at the end (migration 0023) */
  deferred: boolean
  /** the claim tokens it carries, each with the node it names (a batch's draft- ids left out: no claim names one) */
  tokens: Tokened[]
  /** the nodes it marks done (a batch's draft- ids left out): their claims end after it (docs/agents.md) */
  doneIds: string[]
  /** it may unblock work: `_meta.unblocked` says what, in a project that had blocked work before */
  mayUnblock: boolean
}

/**
 * What a write of one node means to the work state: a single action's body, or a batch's entry,
 * by the same function (`addWork`, `updateWork`, `deleteWork`). `lock` is the single action's:
 * a batch takes the lock whatever its entries.
 */
interface NodeWork extends Omit<WorkPlan, 'deferred'> {
  /**
   * it writes its node in a statement of its own (an update, a delete), so a batch with such an
   * entry defers its work state to its end; a batch's adds share one insert at its end
   */
  ownStatement: boolean
}

/** What of an add's body its work reads (a batch's add entry carries more). */
type AddSent = { node: Pick<AddBody['node'], 'type'> }
/** What of an update's body its work reads: the same fields in a batch's update entry. */
type UpdateSent = Pick<UpdateBody, 'nodeId' | 'data' | 'parentId' | 'claimToken'>
/** What of a delete's body its work reads: the same fields in a batch's delete entry. */
type DeleteSent = Pick<DeleteBody, 'nodeId' | 'claimToken'>

/**
 * A batch's entry as its work reads it: src/mutate/model.ts `BatchEntry`, a union told apart by
 * its `action`, each member the body of its action (src/mutate/sequence.ts `batchRow` hands the
 * checked `BatchEntry`s here: an entry of a new action fails tsc there until it has a member here,
 * and a row in `ENTRY_WORK`).
 */
type Entry =
  | ({ action: 'add' } & AddSent)
  | ({ action: 'update' } & UpdateSent)
  | ({ action: 'delete' } & DeleteSent)
  | { action: 'addIteration' }

/**
 * An update's `data` as its node type's schema lets it by (each field sent, or null to clear it),
 * checked before the write's plan is read (src/mutate/check.ts `updateData`, `entriesData`),
 * unless its node id tells no type (neither `<type>-<n>` nor a draft- id the batch adds): the
 * update's rules then refuse the write, rolled back with whatever its plan did. The plan only
 * compares these fields with values of theirs.
 */
type FieldsSent = { readonly [F in FieldName]?: NodeData[F] | null }

/** What of a node the work state reads or sorts by (sql/migrations/0016, 0026): the triggers take the lock only when one of these changes. */
const WORK_FIELDS = new Set<string>([
  'status',
  'approachStatus',
  'blockedBy',
  'goalStatus',
  'kind',
  'iteration',
  'urgent',
] satisfies FieldName[])

/** The types whose adds are no work item and no blocker: their triggers skip the work state (migration 0027); a task is added without kind. */
const NO_WORK_TYPES = new Set<string>(['goal', 'need', 'task'] satisfies NodeType[])

/** A batch's draft- id (remapped to a real id by the batch): no claim names it. */
const isDraft = (nodeId: string) => nodeId.startsWith('draft-')

/** The claim token a write of one node carries, with its node (none for a draft- id). */
const tokenOf = (nodeId: string, claimToken: string | undefined): Tokened[] =>
  claimToken === undefined || isDraft(nodeId) ? [] : [{ nodeId, claimToken }]

/** An add: the lock, but not for a goal, a need or a task, whose triggers leave the work state alone. */
const addWork = (body: AddSent): NodeWork => ({
  lock: !NO_WORK_TYPES.has(body.node.type),
  ownStatement: false,
  tokens: [],
  doneIds: [],
  mayUnblock: false,
})

/**
 * An update. The lock, unless it moves no node and sets none of WORK_FIELDS (a label, a
 * description): its triggers never take the project's work lock, so it need not wait for it
 * either, and eight writers of labels in one project run side by side on PostgreSQL instead of
 * one at a time (issue 51, 3). It may unblock work when it marks work done or resolves or
 * retires an approach; the claim of what it marks done ends.
 */
const updateWork = (body: UpdateSent): NodeWork => {
  const data = body.data as FieldsSent | null | undefined
  const done = data?.status === 'done'
  return {
    lock: body.parentId !== undefined || !data || Object.keys(data).some((field) => WORK_FIELDS.has(field)),
    ownStatement: true,
    tokens: tokenOf(body.nodeId, body.claimToken),
    doneIds: done && !isDraft(body.nodeId) ? [body.nodeId] : [],
    mayUnblock: done || data?.approachStatus === 'resolved' || data?.approachStatus === 'retired',
  }
}

/** A delete: the lock, and it may unblock work (a blocker deleted with its subtree). */
const deleteWork = (body: DeleteSent): NodeWork => ({
  lock: true,
  ownStatement: true,
  tokens: tokenOf(body.nodeId, body.claimToken),
  doneIds: [],
  mayUnblock: true,
})

/**
 * The work of a batch's entry, by the action it names: a table keyed by the entry's `action`,
 * the discriminant of its schema's union, whose rows are the single actions' own functions; a
 * missing row fails tsc, and so does a row that reads a field its member does not carry. Looking
 * the discriminant up is how the entry is typed (as POST /mutate's `actions` finds a body's row);
 * what the entry means to the work state is its row's to say. An addIteration entry means nothing
 * of its own: the batch's lock covers the iteration triggers.
 */
const ENTRY_WORK: { [E in Entry as E['action']]: (entry: E) => NodeWork } = {
  add: addWork,
  update: updateWork,
  delete: deleteWork,
  addIteration: () => ({ lock: false, ownStatement: false, tokens: [], doneIds: [], mayUnblock: false }),
}
// one cast: tsc cannot tie `ENTRY_WORK[e.action]` to the member `e` is (a correlated union); the table's type ties them
const entryWork = (e: Entry) => (ENTRY_WORK[e.action] as (entry: Entry) => NodeWork)(e)

/**
 * The plan, or none when it asks the work state nothing before the write nor after it (no lock,
 * no claim token, no deferral, nothing it may unblock): the write's sequence then leaves the work
 * state out (src/mutate/sequence.ts).
 */
const planOf = (p: WorkPlan): WorkPlan | undefined => (p.lock || p.deferred || p.mayUnblock || p.tokens.length > 0 ? p : undefined)

/** The plan of a single action that writes one node, in one statement: nothing deferred. */
const single = (w: NodeWork) => planOf({ lock: w.lock, deferred: false, tokens: w.tokens, doneIds: w.doneIds, mayUnblock: w.mayUnblock })

/**
 * The work plan of each action (POST /mutate's table, src/mutate/service.ts `actions`, its `work`
 * column), computed from the action's checked body; none (undefined) for a write that asks the
 * work state nothing before it nor after it (`planOf`): the write's sequence
 * (src/mutate/sequence.ts) then neither takes the lock nor asks anything after it.
 */
export const workPlan = {
  /**
   * the writes of other rows than nodes: nothing before it, not even the lock, nothing after it.
   * Not for a batch inside another write (a workflow's plan, a proposal applied or previewed):
   * that takes `batch`, since its triggers would take the lock only after its first node rows
   */
  none: (): WorkPlan | undefined => undefined,
  /**
   * restore, updateIteration, deleteIteration, classify: only the lock. A classify's: the work
   * state's update trigger takes the project's work lock for a task made a do-it or no longer one
   * (sql/migrations/0055), after its row, and the task's new kind is known only once its label is
   * read: without the lock first, a classify held the task's row while it waited for the lock, and
   * a write that held the lock and needed the task deadlocked with it (on PostgreSQL;
   * test/process.deadlock-retry.test.ts). A call of its own, not the classify loop's write
   * (src/nodes/classify-loop.ts), which follows each task's add and takes the lock only for a task
   * it makes a do-it.
   */
  lockOnly: (): WorkPlan | undefined => planOf({ lock: true, deferred: false, tokens: [], doneIds: [], mayUnblock: false }),
  /** add: only the lock, and none for a goal, a need or a task, whose triggers leave the work state alone */
  add: (body: AddSent): WorkPlan | undefined => single(addWork(body)),
  /** update: none for one that sets no work field and sends no claim token (a label, a description) */
  update: (body: UpdateSent): WorkPlan | undefined => single(updateWork(body)),
  delete: (body: DeleteSent): WorkPlan | undefined => single(deleteWork(body)),
  /**
   * batch: the lock, whatever its entries, and its entries' work (`ENTRY_WORK`) together;
   * deferred when it writes nodes in more than one statement. A batch of adds (and addIteration
   * entries) writes its nodes in one insert at its end, whose triggers then keep the work state at
   * once (a job beside an open sibling: its row from the sibling's, migration 0033).
   */
  batch: (body: { mutations: readonly Entry[] }): WorkPlan | undefined => {
    const works = body.mutations.map(entryWork)
    return planOf({
      lock: true,
      deferred: works.some((w) => w.ownStatement),
      tokens: works.flatMap((w) => w.tokens),
      doneIds: works.flatMap((w) => w.doneIds),
      mayUnblock: works.some((w) => w.mayUnblock),
    })
  },
  /** a revert may take back any write, so it may unblock work as any of them */
  revert: (): WorkPlan | undefined => planOf({ lock: true, deferred: true, tokens: [], doneIds: [], mayUnblock: true }),
}

/** What `beforeWrite` sent, for `afterWrite`. */
export interface WorkHeld {
  plan: WorkPlan
  projectId: string
  /**
   * the answer of beforeWrite's statements (the lock, the blocked-before read, the deferral):
   * whether the project had blocked work before the write (read only when the write may unblock some)
   */
  blockedBefore: Promise<boolean>
}

/**
 * The work state before a write of nodes, in its transaction: the project's work lock first (on
 * PostgreSQL, unless the plan leaves the work state alone), and whether the project had blocked
 * work (when the write may unblock some), and the triggers told to set the work state aside (a
 * deferred plan: many statements, the work state recomputed once at their end, migration 0023);
 * claim tokens checked (409 claim_lost) and renewed, in the project whose access the write's caller
 * asked (src/mutate/routes.ts; a proposal applied, a workflow's plan).
 */
export async function beforeWrite(deps: Deps, projectId: string, plan: WorkPlan): Promise<WorkHeld> {
  // The project's work lock (on PostgreSQL: PGlite runs one transaction at a time, and a trigger
  // that needs the lock takes it itself, at no wait); right behind it whether the project had
  // blocked work (a project where nothing was blocked answers as before: docs/reference/mutate.md's
  // bodies stay as they were); a deferred plan's deferral (it only tells the node triggers to
  // wait, and the claim checks below write no node).
  // On PostgreSQL they are not awaited here: postgres.js sends a transaction's statements without
  // waiting for each answer, so the next statements go out with them, one round trip (a job's
  // add: the lock, its iterations and id; a delete: the lock, the blocked-before read, the
  // subtree; a claim token's check and renewal), and PostgreSQL runs them in the order sent, a
  // rollback after them. The lock, the transaction's first statement, holds nothing while it
  // waits: it cannot close a deadlock. `afterWrite` awaits their answer. On PGlite they are
  // awaited here: a statement still queued when the handler fails could run after the rollback.
  const blockedBefore = Promise.all([
    plan.lock && deps.db.kind === 'postgres' ? q.lockProject(deps.db, projectId) : undefined,
    plan.mayUnblock ? q.hasBlocked(deps.db, projectId) : false,
    plan.deferred ? q.deferWork(deps.db) : undefined,
  ]).then(([, blocked]) => blocked)
  blockedBefore.catch(() => {}) // should the handler fail first, its error is the write's (the transaction is rolled back)
  const held = { plan, projectId, blockedBefore }
  const tokened = plan.tokens
  if (deps.db.kind !== 'postgres') await blockedBefore
  if (tokened.length) {
    // the tokens checked, and renewed to their own length (a write with a live claim's token
    // renews it: agents need not call renewClaim), the two sent together (on PostgreSQL with the
    // lock: one round trip); a refused check rolls the renewal back with the write. Both settle
    // before either's error is thrown, so that no statement is left queued behind the rollback.
    const now = deps.now()
    const [checked, renewed] = await Promise.allSettled([
      checkTokens(deps.db, projectId, tokened, now),
      extendByTokens(deps.db, projectId, [...new Set(tokened.map((e) => hashToken(e.claimToken)))], now),
    ])
    for (const sent of [checked, renewed]) if (sent.status === 'rejected') throw sent.reason
  }
  return held
}

/** What the work state says after a write, for its sequence to save and show (`afterWrite`). */
export interface WorkAfter {
  /** the `node.released` events of the claims of work the write marked done, ended: saved with its own */
  released: DomainEvent[]
  /** the work items the write made ready (maybe none), when it may unblock work in a project that had blocked work before */
  unblocked?: unknown
}

/**
 * The work state after the write's rows are written and before it is saved, in its transaction:
 * the claims of work it marked done ended (docs/agents.md), their events for the write to save
 * with its own; the work state recomputed (a deferred plan); `unblocked` (the work items the write
 * made ready, maybe none) when the write may unblock work in a project that had blocked work
 * before, for its answer's `_meta.unblocked`.
 */
export async function afterWrite(deps: Deps, held: WorkHeld): Promise<WorkAfter> {
  const { plan, projectId } = held
  const ended = plan.doneIds.length ? await endClaims(deps.db, projectId, plan.doneIds, deps.now()) : []
  const released = ended.map((c) => claimEvent('node.released', { nodeId: c.node_id, agent: c.agent }))
  const blockedBefore = await held.blockedBefore
  if (plan.deferred) await q.flushWork(deps.db)
  if (!blockedBefore) return { released }
  // the work state that the write's triggers kept (sql/migrations/0016) says what it unblocked
  return { released, unblocked: await q.unblocked(deps.db, projectId, deps.now()) }
}
