import type { User } from '../accounts/model'
import { savepoint } from '../db/port'
import type { Deps } from '../deps'
import { ErrorListError, forbidden, RefusalError } from '../errors'
import type { State } from '../history/model'
import { type StaleField, staleFields, staleWrite } from '../history/precondition'
import { plannedChange } from '../history/service'
import { afterAccess, ProjectQuery } from '../http/action-schema'
import { DRY_RUN } from '../nodes/batch'
import { changeSent, changesNamed } from '../nodes/entries'
import { lockedTarget } from '../nodes/read'
import { type Actor, SYSTEM_ACTOR } from '../ports/actor'
import { formatRev, parseRev } from '../ports/rev'
import { type Access, requireProject } from '../projects/access'
import type { ProposalRead, ProposalRow } from '../proposals/model'
import { announced, closeProposal, findProposal, requireOpen, storeProposal, toProposal } from '../proposals/service'
import type { ApplyProposalBody, BatchEntry, ProposeBody, RejectProposalBody, WithdrawProposalBody } from './model'
import { runBatch, type Saved } from './sequence'

/**
 * Proposals (live.md §5): a batch checked now and stored without touching the tree, applied
 * later as one batch against the revs it was based on. The storage and events are
 * src/proposals; the batch runs here, where it lives. Which entries change an existing node, and
 * what they set on it (their base revs checked), is read from src/nodes/entries.ts.
 */

type Entry = BatchEntry & { nodeId?: string; data?: Record<string, unknown>; parentId?: unknown; ifRev?: string }
const real = (id: unknown): id is string => typeof id === 'string' && !id.startsWith('draft-')
const actorOf = (deps: Deps): Actor => deps.author?.actor ?? SYSTEM_ACTOR

interface Preview {
  changes: { target: { kind: string; id: string; type?: string }; action: string; before: State | null; after: State | null }[]
  baseRevs: Record<string, string>
  /** the fields of the entries that changed after baseRevs (when given) */
  stale: StaleField[]
}

/**
 * What applying `mutations` now would do: the batch run under a savepoint, as a dry run, and
 * rolled back (as a revert's dry run, src/mutate/revert.ts). Every rule of a batch is checked;
 * a broken one throws as the batch would. With `baseRevs`, the entries' targets are also checked
 * against them (section 1's rule, per field), without refusing.
 */
async function dryRun(deps: Deps, access: Access, mutations: Entry[], baseRevs?: Record<string, string>): Promise<Preview> {
  const takeBack = await savepoint(deps.db, 'arbor_proposal_preview')
  try {
    // the batch through the write's sequence with a batch's work plan, as a dry run (src/nodes/batch.ts
    // `batch`: every existing node an entry names read, and locked, as it stands before the batch
    // changes it; nothing saved, so no change ids: none counts as this request's): the work lock
    // before any node row (as applyProposal), claim tokens checked; all of it (the lock too) let
    // go with the savepoint. What the preview says is read from the batch's WriteCtx after it.
    const request = { action: 'batch' as const, projectId: access.project.id, mutations, [DRY_RUN]: true as const }
    const { ctx: c } = await runBatch(deps, access, request)
    // the batch's changes, its iterations' (added first) and its nodes', as history.md keeps them
    const changes = c.changes.map(plannedChange)
    const revs: Record<string, string> = {}
    for (const id of [
      ...c.changes.filter((d) => d.kind === 'node' && d.before !== null).map((d) => d.id),
      ...mutations.map((e) => e.nodeId),
    ]) {
      const locked = real(id) ? lockedTarget(c, id!) : undefined
      if (locked) revs[locked.id] = formatRev('node', locked.id, locked.rev)
    }
    const stale: StaleField[] = []
    if (baseRevs)
      for (const e of mutations) {
        const id = e.nodeId
        const target = real(id) ? lockedTarget(c, id!) : undefined
        if (!target || !baseRevs[id!] || !changesNamed(e)) continue
        const sets = changeSent(e)! // an update's fields, a delete's null (src/nodes/entries.ts)
        stale.push(...staleFields({ target, seq: parseRev('node', target.id, baseRevs[id!]!), sets }))
      }
    return { changes, baseRevs: revs, stale }
  } finally {
    await takeBack.rollback()
  }
}

/** propose: the batch checked as a batch, nothing written to the tree, the proposal stored. */
export async function propose(deps: Deps, access: Access, body: ProposeBody) {
  const { project } = access
  const mutations = body.mutations as Entry[]
  const { changes, baseRevs } = await dryRun(deps, access, mutations)
  const row = await storeProposal(deps, {
    projectId: project.id,
    title: body.title,
    note: body.note ?? null,
    actor: actorOf(deps),
    mutations,
    preview: { changes },
    baseRevs,
  })
  return {
    outbox: announced('proposal.created', row),
    answer: {
      success: true,
      proposal: toProposal(row),
      _meta: {
        _tip: `Proposed ${mutations.length} mutation(s) as ${row.id}: nothing was written to the plan. A person applies it with {action:"applyProposal", projectId, proposalId:"${row.id}"} or rejects it; you may withdraw it with withdrawProposal.`,
      },
    },
  }
}

/** The entries to apply: each update and delete of an existing node checked against its base rev (none with force). */
function entriesToApply(row: ProposalRow, force: boolean): Entry[] {
  return (row.mutations as Entry[]).map((e) => {
    if (!changesNamed(e)) return e // an entry that changes no existing node (src/nodes/entries.ts)
    const { ifRev, ...rest } = e
    if (force) return rest as Entry
    const base = real(e.nodeId) ? row.base_revs[e.nodeId] : undefined
    return (base ? { ...rest, ifRev: base } : ifRev === undefined ? rest : { ...rest, ifRev }) as Entry
  })
}

/**
 * applyProposal: its mutations as one batch through the write's sequence (the work state of a
 * batch before and after it), in this transaction; the changes name the proposal and its author.
 * Two sequences in one transaction: the batch's, run and saved here (`runBatch`), whose change
 * ids it returns beside its answer (`changeIds`), and its own, the proposal closed, whose saving
 * (./sequence.ts `runWrite`) puts them before its own: the write's answer names the batch's.
 */
export async function applyProposal(deps: Deps, access: Access, body: ApplyProposalBody) {
  const { project } = access
  const row = await findProposal(deps, project.id, body.proposalId, true)
  requireOpen(row, 'applied')
  const mutations = entriesToApply(row, body.force === true)
  const author = deps.author ?? { actor: SYSTEM_ACTOR, requestId: '' }
  const applying: Deps = { ...deps, author: { ...author, proposal: { proposalId: row.id, actor: row.actor as unknown as Actor } } }
  const request = { action: 'batch' as const, projectId: project.id, mutations }
  let applied: Saved
  try {
    applied = await runBatch(applying, access, request)
  } catch (err) {
    if (err instanceof RefusalError && err.error === 'stale_write')
      throw new RefusalError(409, 'stale_write', {
        ...err.extra,
        message: `Nothing was applied: the plan changed since proposal ${row.id} was made. ${String(err.extra.message ?? '').replace(/^Nothing was written: your write is based on an older revision\. /, '')}`,
        _meta: {
          _tip: `Read GET /api/v1/proposals/${row.id}?projectId=${project.id} for its fresh preview and conflicts; then apply it with force:true (its values win), or reject it and ask for a new one.`,
        },
      })
    throw err
  }
  const ids = applied.changeIds ?? []
  const changeIds = [...ids].sort((a, b) => a - b).map(String)
  const closed = await closeProposal(deps, row, 'applied', actorOf(deps), { changeIds })
  const done = applied.answer
  const meta = (done._meta ?? {}) as Record<string, unknown>
  return {
    outbox: announced('proposal.applied', closed),
    changeIds: ids,
    answer: {
      success: true,
      proposal: toProposal(closed),
      idMap: done.idMap,
      _meta: {
        ...meta,
        _tip: `Applied proposal ${row.id}: ${changeIds.length} change(s). Take it back with {action:"revert", projectId, changeIds} of proposal.changeIds.`,
      },
    },
  }
}

/** rejectProposal: closed, nothing written to the tree. */
export async function rejectProposal(deps: Deps, { project }: Access, body: RejectProposalBody) {
  const row = await findProposal(deps, project.id, body.proposalId, true)
  requireOpen(row, 'rejected')
  const closed = await closeProposal(deps, row, 'rejected', actorOf(deps), body.reason === undefined ? {} : { reason: body.reason })
  return {
    outbox: announced('proposal.rejected', closed),
    answer: {
      success: true,
      proposal: toProposal(closed),
      _meta: { _tip: `Rejected proposal ${row.id}; nothing was written to the plan.` },
    },
  }
}

/** withdrawProposal: by its author only (403 not_author). */
export async function withdrawProposal(deps: Deps, { project }: Access, body: WithdrawProposalBody, user: User) {
  const row = await findProposal(deps, project.id, body.proposalId, true)
  if ((row.actor as { userId?: unknown }).userId !== user.id)
    throw forbidden('not_author', {
      message: `Only the author of proposal ${row.id} may withdraw it`,
      _meta: { _tip: 'A key that may write the project rejects it instead: {action:"rejectProposal", projectId, proposalId, reason?}.' },
    })
  requireOpen(row, 'withdrawn')
  const closed = await closeProposal(deps, row, 'withdrawn', actorOf(deps))
  return {
    outbox: announced('proposal.withdrawn', closed),
    answer: { success: true, proposal: toProposal(closed), _meta: { _tip: `Withdrew proposal ${row.id}.` } },
  }
}

/** A refusal's status and body, for a preview that cannot be made now. */
function problemOf(err: unknown): { status: number; error: string; message: string } {
  if (err instanceof RefusalError) return { status: err.status, error: err.error, message: err.message }
  if (err instanceof ErrorListError) return { status: err.status, error: 'invalid', message: err.message }
  throw err
}

/**
 * GET /proposals/:proposalId: the proposal with a fresh preview (what applying it now would do)
 * and its conflicts (section 1's, against its baseRevs). An open one only: a closed proposal
 * keeps the preview it was made with and has no conflicts. When applying it now would break a
 * batch rule (a target was deleted since), the stored preview stays and `problem` says why.
 */
export async function readProposal(deps: Deps, user: User, query: unknown, proposalId: string): Promise<ProposalRead> {
  const access = await afterAccess((id) => requireProject(deps, user, id), 'query', ProjectQuery, query)
  const { project } = access
  const row = await findProposal(deps, project.id, proposalId)
  const proposal = toProposal(row)
  if (row.status !== 'open') return { proposal: { ...proposal, conflicts: [] } }
  const fresh = await deps.db.tx(async (tx) => {
    const inTx: Deps = { ...deps, db: tx }
    try {
      const p = await dryRun(inTx, access, row.mutations as Entry[], row.base_revs)
      type Conflicts = ProposalRead['proposal']['conflicts']
      const conflicts = p.stale.length ? ((await staleWrite(inTx, project.id, p.stale)).extra.conflicts as Conflicts) : []
      return { preview: { changes: p.changes }, conflicts, problem: undefined }
    } catch (err) {
      return { conflicts: [], problem: problemOf(err) }
    }
  })
  const n = fresh.conflicts.length
  return {
    proposal: { ...proposal, ...fresh },
    _meta: {
      _tip: fresh.problem
        ? `It cannot be applied as it stands: ${fresh.problem.message}. Reject it, or ask its author for a new one.`
        : n
          ? `${n} field(s) changed since it was proposed (conflicts): applyProposal answers 409 stale_write unless force:true.`
          : 'No conflicts: {action:"applyProposal", projectId, proposalId} applies it as the preview shows.',
    },
  }
}
