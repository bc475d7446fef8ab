import { newId } from '../accounts/keys'
import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { invalid, notFound, RefusalError } from '../errors'
import { type Outbox, outboxOf } from '../events/outbox'
import { afterAccess } from '../http/action-schema'
import type { Actor } from '../ports/actor'
import { requireProject } from '../projects/access'
import { DEFAULT_LIMIT, PROPOSAL_ID, type ProposalRow, type ProposalStatus, ProposalsQuery, type ProposalView } from './model'
import * as q from './queries'

const iso = (t: Date | string) => new Date(t).toISOString()

/** A proposal as the API answers it (live.md §5). */
export function toProposal(r: ProposalRow): ProposalView {
  const closed = r.closed_at === null ? undefined : iso(r.closed_at)
  type Who = ProposalView['actor']
  return {
    proposalId: r.id,
    projectId: r.project_id,
    status: r.status,
    title: r.title,
    ...(r.note !== null ? { note: r.note } : {}),
    actor: r.actor as Who,
    createdAt: iso(r.created_at),
    mutations: r.mutations as ProposalView['mutations'],
    preview: r.preview as ProposalView['preview'],
    baseRevs: r.base_revs,
    ...(r.status === 'applied' ? { appliedBy: r.closed_by as Who, appliedAt: closed, changeIds: r.change_ids ?? [] } : {}),
    ...(r.status === 'rejected'
      ? { rejectedBy: r.closed_by as Who, rejectedAt: closed, ...(r.reason !== null ? { reason: r.reason } : {}) }
      : {}),
    ...(r.status === 'withdrawn' ? { withdrawnAt: closed } : {}),
  }
}

type ProposalEvent = 'proposal.created' | 'proposal.applied' | 'proposal.rejected' | 'proposal.withdrawn'

/**
 * The event of a proposal (live.md §5), {proposalId, title} beside the actor of the write, in an
 * outbox for the write's sequence to save (src/mutate/sequence.ts).
 */
export const announced = (type: ProposalEvent, r: ProposalRow): Outbox =>
  outboxOf(r.project_id, [{ type, proposal: { proposalId: r.id, title: r.title } }])

/** Store a new open proposal in the write's transaction (its `proposal.created` event: `announced`). */
export async function storeProposal(
  deps: Deps,
  p: {
    projectId: string
    title: string
    note: string | null
    actor: Actor
    mutations: unknown[]
    preview: { changes: unknown[] }
    baseRevs: Record<string, string>
  },
): Promise<ProposalRow> {
  return q.insert(deps.db, { id: newId('prp'), createdAt: deps.now(), ...p })
}

const unknownProposal = (projectId: string, proposalId: string) =>
  notFound('not_found', {
    message: `No proposal ${proposalId} in project ${projectId}`,
    _meta: { _tip: 'GET /api/v1/proposals?projectId=… lists the proposals of the project.' },
  })

/** One proposal of a project (the caller checked access); `lock` holds it until the write commits. 404 when unknown. */
export async function findProposal(deps: Pick<Deps, 'db'>, projectId: string, proposalId: string, lock = false): Promise<ProposalRow> {
  const row = PROPOSAL_ID.test(proposalId) ? await (lock ? q.lock : q.get)(deps.db, projectId, proposalId) : undefined
  if (!row) throw unknownProposal(projectId, proposalId)
  return row
}

/** Only an open proposal can be applied, rejected or withdrawn: 409 proposal_closed otherwise. */
export function requireOpen(row: ProposalRow, doing: string): void {
  if (row.status === 'open') return
  throw new RefusalError(409, 'proposal_closed', {
    message: `Proposal ${row.id} is ${row.status}: only an open proposal can be ${doing}`,
    status: row.status,
    _meta: { _tip: 'Read it with GET /api/v1/proposals/:proposalId; propose again to make a new one.' },
  })
}

/** Close an open proposal (held by `findProposal(…, true)`); its event: `announced`. */
export async function closeProposal(
  deps: Deps,
  row: ProposalRow,
  status: Exclude<ProposalStatus, 'open'>,
  by: Actor,
  extra: { reason?: string; changeIds?: string[] } = {},
): Promise<ProposalRow> {
  const closed = await q.close(deps.db, row.project_id, row.id, {
    status,
    by,
    at: deps.now(),
    reason: extra.reason ?? null,
    changeIds: extra.changeIds ?? null,
  })
  if (!closed) throw new Error(`proposal ${row.id} was not open when closed`) // it was locked open
  return closed
}

/** GET /proposals (live.md §5): newest first, a page at a time. */
export async function listProposals(deps: Deps, user: User, raw: Record<string, string | undefined>) {
  const { project, input: query } = await afterAccess((id) => requireProject(deps, user, id), 'query', ProposalsQuery, raw)
  const limit = query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit)
  let below: string | null = null
  if (query.after !== undefined) {
    const from = await q.get(deps.db, project.id, query.after)
    if (!from)
      throw invalid(`after: no proposal ${query.after} in project ${project.id}`, {
        _tip: 'Pass the next value of a previous page, or omit after.',
      })
    below = String(from.seq)
  }
  const rows = await q.list(deps.db, project.id, query.status ?? null, below, limit)
  const next = rows.length === limit ? rows.at(-1)!.id : undefined
  const open = await q.countOpen(deps.db, project.id)
  return {
    proposals: rows.map(toProposal),
    ...(next ? { next } : {}),
    _meta: {
      _tip: `${open} open proposal(s). ${next ? 'More wait: call again with after=next. ' : ''}Apply one with POST /mutate {action:"applyProposal", projectId, proposalId}, or reject it with rejectProposal.`,
      open,
    },
  }
}

/** The clean-up: proposals made before the HISTORY_DAYS window go with the changes (0 keeps them for ever). */
export async function pruneProposals(deps: Pick<Deps, 'db' | 'config' | 'log'>, now: Date): Promise<number> {
  if (deps.config.historyDays === 0) return 0
  const pruned = await q.prune(deps.db, new Date(now.getTime() - deps.config.historyDays * 86_400_000))
  if (pruned) deps.log.info('proposals pruned', { pruned })
  return pruned
}
