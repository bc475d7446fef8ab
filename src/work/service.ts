import type { User } from '../accounts/model'
import { type ClaimView, checkTokens, claimLost, claimRows, endClaims, hashToken, iso, liveClaims, newToken } from '../claims/service'
import type { Deps } from '../deps'
import { notFound, RefusalError } from '../errors'
import { type DomainEvent, emit } from '../events/outbox'
import { parseInput } from '../http/action-schema'
import { iterationRows } from '../iterations/service'
import { nodeRows } from '../nodes/service'
import { requireProject } from '../projects/access'
import { bumpRevision } from '../revisions/revision'
import { type ClaimBody, READY_LIMIT, ReadyQuery, type ReleaseClaimBody, type RenewClaimBody } from './model'
import * as q from './queries'
import { assess, spreadFirst, type TreeNode, type WorkState } from './ready'

/** Ready work and claims (agents-and-app.md, 1 and 2). */

export const LEASE_SECONDS = { default: 900, min: 30, max: 86_400 } as const

/** The project as the readiness rule reads it, inside the caller's transaction when there is one. */
async function project(deps: Deps, projectId: string) {
  const now = deps.now()
  const [rows, iterations, claims] = await Promise.all([
    nodeRows.list(deps.db, projectId, null, null),
    iterationRows.list(deps.db, projectId),
    liveClaims(deps.db, projectId, now),
  ])
  const nodes: TreeNode[] = rows.map((r) => ({ id: r.id, type: r.type, parentId: r.parent_id, data: r.data }))
  return { now, claims, rule: assess(nodes, iterations, new Set(claims.keys())) }
}

/** GET /ready: the ready work items, in the order an agent should take them. */
export async function listReady(deps: Deps, user: User, query: { projectId?: string; iteration?: string; limit?: string }) {
  const { project: p } = await requireProject(deps, user, query.projectId)
  const checked = parseInput(ReadyQuery, query)
  const limit = checked.limit === undefined ? READY_LIMIT.default : Number(checked.limit)
  const { rule } = await project(deps, p.id)
  const all = rule.ordered(query.iteration)
  const ready = all.filter((w) => w.state === 'ready')
  const count = (s: string) => all.filter((w) => w.state === s).length
  const meta: Record<string, unknown> = { total: ready.length, claimed: count('claimed'), blocked: count('blocked') }
  if (ready.length === 0)
    meta._tip =
      count('claimed') + count('blocked') > 0
        ? 'Nothing is ready now. Wait for a change with GET /events?wait=60 and look again.'
        : 'No open work: add jobs under an approach, or do-it tasks.'
  else if (ready.length > limit) meta._tip = `${ready.length - limit} more ready item(s); raise limit (at most ${READY_LIMIT.max}).`
  else meta._tip = 'Claim one with {action:"claim", projectId, agent, count:1} before working on it.'
  return { items: ready.slice(0, limit).map((w) => rule.item(w.node)), _meta: meta }
}

/** The state of each work item of the project now (before and after a write: what it unblocked). */
async function workStates(deps: Deps, projectId: string): Promise<Map<string, WorkState>> {
  const { rule } = await project(deps, projectId)
  return new Map(rule.ordered().map((w) => [w.node.id, w.state]))
}

const claimEvent = (type: 'node.claimed' | 'node.released', claim: { nodeId: string; agent: string; expiresAt?: string }): DomainEvent => ({
  type,
  claim,
})

/** claim: items named by `nodeIds` (all or nothing), or up to `count` ready ones, spread first. */
export async function claim(deps: Deps, user: User, body: ClaimBody) {
  const { project: p } = await requireProject(deps, user, body.projectId)
  const { now, claims, rule } = await project(deps, p.id)
  const lease = body.leaseSeconds ?? LEASE_SECONDS.default
  const expiresAt = new Date(now.getTime() + lease * 1000)
  const taken: { nodeId: string; agent: string; claimToken: string; expiresAt: string }[] = []
  const tryTake = async (nodeId: string) => {
    const token = newToken()
    const row = await claimRows.take(deps.db, p.id, nodeId, body.agent, hashToken(token), expiresAt, now)
    if (row) taken.push({ nodeId, agent: row.agent, claimToken: token, expiresAt: iso(row.expires_at) })
    return !!row
  }
  if (body.nodeIds !== undefined) {
    const ids = [...new Set(body.nodeIds)]
    const missing = ids.find((id) => !rule.byId.has(id))
    if (missing) throw notFound(`Node ${missing} not found`, { message: `No node ${missing} in project ${p.id}` })
    const refused = ids.flatMap((id) => {
      const state = rule.state(rule.byId.get(id)!)
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
    const ready = rule
      .ordered()
      .filter((w) => w.state === 'ready')
      .map((w) => w.node)
    // a candidate another agent took meanwhile is skipped: its row says so, atomically
    for (const n of spreadFirst(ready)) {
      if (taken.length >= count) break
      await tryTake(n.id)
    }
  }
  await emit(
    deps.db,
    p.id,
    taken.map((c) => claimEvent('node.claimed', { nodeId: c.nodeId, agent: c.agent, expiresAt: c.expiresAt })),
    now,
    deps.commits,
    deps.author?.actor,
  )
  const tip = taken.length
    ? `Work on it, then send {action:"update", projectId, nodeId, claimToken, data:{status:"done"}}; renew with renewClaim before ${taken[0]!.expiresAt}.`
    : 'Nothing is ready to claim. Wait for a change with GET /events?wait=60 (or GET /ready) and try again.'
  return { success: true, claims: taken, _meta: { _tip: tip } }
}

export async function renewClaim(deps: Deps, user: User, body: RenewClaimBody) {
  const { project: p } = await requireProject(deps, user, body.projectId)
  const now = deps.now()
  const lease = body.leaseSeconds ?? LEASE_SECONDS.default
  const row = await claimRows.renew(deps.db, p.id, hashToken(body.claimToken), new Date(now.getTime() + lease * 1000), now)
  if (!row) throw claimLost('This claimToken is unknown, expired or released')
  await bumpRevision(deps.db, p.id) // /nodes and /tree show the new expiresAt
  return { success: true, claim: { nodeId: row.node_id, agent: row.agent, claimToken: body.claimToken, expiresAt: iso(row.expires_at) } }
}

export async function releaseClaim(deps: Deps, user: User, body: ReleaseClaimBody) {
  const { project: p } = await requireProject(deps, user, body.projectId)
  const now = deps.now()
  const row = await claimRows.release(deps.db, p.id, hashToken(body.claimToken), now)
  if (!row) throw claimLost('This claimToken is unknown, expired or released')
  await emit(deps.db, p.id, [claimEvent('node.released', { nodeId: row.node_id, agent: row.agent })], now, deps.commits, deps.author?.actor)
  return { success: true, released: { nodeId: row.node_id } }
}

type Entry = { action?: string; nodeId?: string; claimToken?: string; data?: Record<string, unknown> | null }

/** Does this entry mark work done, resolve or retire an approach, or delete a node (so it may unblock work)? */
const unblocks = (e: Entry) =>
  e.action === 'delete' ||
  (e.action === 'update' && (e.data?.status === 'done' || e.data?.approachStatus === 'resolved' || e.data?.approachStatus === 'retired'))

/**
 * Around update, delete and batch, in their transaction: claim tokens checked first (409
 * claim_lost), the claims of work marked done ended after, and `_meta.unblocked` (the work items
 * the write made ready, maybe none) when it marks work done, resolves or retires an approach, or
 * deletes, in a project that had blocked work before it.
 */
export async function aroundWrite(
  deps: Deps,
  user: User,
  action: string,
  body: Record<string, unknown>,
  run: () => Promise<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  if (action !== 'update' && action !== 'delete' && action !== 'batch' && action !== 'revert') return run()
  const entries: Entry[] = action === 'batch' ? (Array.isArray(body.mutations) ? body.mutations : []) : [{ ...body, action }]
  const real = (e: Entry) => typeof e.nodeId === 'string' && !e.nodeId.startsWith('draft-')
  const tokened = entries.filter((e) => real(e) && typeof e.claimToken === 'string') as { nodeId: string; claimToken: string }[]
  // a revert may take back any write, so it may unblock work as any of them
  const triggers = action === 'revert' || entries.some(unblocks)
  if (!tokened.length && !triggers) return run()
  const { project: p } = await requireProject(deps, user, body.projectId)
  if (triggers) await q.lockProject(deps.db, p.id)
  await checkTokens(deps.db, p.id, tokened, deps.now())
  const before = triggers ? await workStates(deps, p.id) : null
  const result = await run()
  const done = entries.filter((e) => e.action === 'update' && real(e) && e.data?.status === 'done').map((e) => e.nodeId!)
  const ended = await endClaims(deps.db, p.id, done, deps.now())
  await emit(
    deps.db,
    p.id,
    ended.map((c) => claimEvent('node.released', { nodeId: c.node_id, agent: c.agent })),
    deps.now(),
    deps.commits,
    deps.author?.actor,
  )
  // a project where nothing was blocked answers as before (api.md's bodies stay as they were)
  if (!before || ![...before.values()].includes('blocked')) return result
  const after = await workStates(deps, p.id)
  const unblocked = [...after].flatMap(([id, state]) => (state === 'ready' && before.get(id) === 'blocked' ? [id] : []))
  return { ...result, _meta: { ...(result._meta ?? {}), unblocked } }
}
