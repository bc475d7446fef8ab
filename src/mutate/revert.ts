import { savepoint } from '../db/port'
import type { Deps } from '../deps'
import { type ErrorListError, invalid, prefixed, RefusalError } from '../errors'
import { type ChangeRow, laterChanges, plannedChange, targetOf } from '../history/service'
import { LATER } from '../iterations/model'
import type { NodesMove } from '../iterations/service'
import { writeMeta } from '../nodes/service'
import { type NodeState, type Outcome, undoAll, type WriteCtx } from '../nodes/undo'
import type { AccessRow } from '../projects/service'
import type { Selected } from './revert-select'

type Reason = 'changed_later' | 'gone' | 'has_children'
interface Conflict {
  changeId: string
  target: { kind: string; id: string; type?: string }
  field?: string
  laterChangeId: string | null
  reason: Reason
}
type Later = Awaited<ReturnType<typeof laterChanges>>[number]

/** The names an iteration's change moved its jobs and tasks between: a rename's, or a deletion's (to Later). */
function iterationMove(c: ChangeRow): NodesMove | null {
  if (c.target_kind !== 'iteration' || c.before === null) return null
  const move = { from: String(c.before.name), to: c.after === null ? LATER : String(c.after.name) }
  return move.from === move.to ? null : move
}

/** A change of a job or a task recorded with iteration change `c` (its request, after it) that moved it along (`move`). */
function cameWith(n: ChangeRow, c: ChangeRow, move: NodesMove): boolean {
  const iterationOf = (state: NodeState | null) => state?.data.iteration
  return (
    n.target_kind === 'node' &&
    n.request_id === c.request_id &&
    Number(n.id) > Number(c.id) &&
    n.fields.length === 1 &&
    n.fields[0] === 'iteration' &&
    iterationOf(n.before as NodeState | null) === move.from &&
    iterationOf(n.after as NodeState | null) === move.to
  )
}

/**
 * The selected changes (newest first) as a revert takes them back: newest first, except that an
 * iteration's rename or deletion is taken back before the moves of its jobs and tasks that came
 * with it and are selected too (recorded after it, so newer), which follow it at once: a job is
 * set back into an iteration only once that iteration exists again.
 */
function stepsOf(selected: ChangeRow[]): { change: ChangeRow; moves: ChangeRow[] }[] {
  const taken = new Set<ChangeRow>()
  const movesOf = new Map<ChangeRow, ChangeRow[]>()
  for (const c of selected) {
    const move = iterationMove(c)
    if (!move) continue
    const moves = selected.filter((n) => !taken.has(n) && cameWith(n, c, move))
    for (const n of moves) taken.add(n)
    movesOf.set(c, moves)
  }
  return selected.filter((c) => !taken.has(c)).map((change) => ({ change, moves: movesOf.get(change) ?? [] }))
}

/**
 * revert (history.md, 3): the selected changes are undone newest first in the write's
 * transaction, an iteration's rename or deletion before the moves of its jobs and tasks that
 * came with it (`stepsOf`). With any conflict and no `force` the whole transaction is refused
 * (409) and nothing stays written; a dry run runs the same steps under a savepoint and rolls them
 * back, so it says exactly what the real call does. The handler of the write's sequence
 * (src/mutate/sequence.ts), top-down, on the changes its `prepare` step selected and weighed
 * before the work state (./revert-select.ts `selectChanges`): every step taken back by one call
 * of src/nodes/undo.ts (`undoAll`: the nodes they name read and locked at once, in a dry run's
 * WriteCtx when it is one; each change through one whole operation that reads, checks and stores
 * inside it, an iteration's step written at once by
 * src/iterations/service.ts and noted in its own outbox, `ctx.beside`, after the node changes of
 * the steps before it; the write ended, its events marked as a revert's), which answers what it
 * found of each change or the change that refuses the revert (`refused`, said here in the
 * revert's words); then the later changes of their targets, read once the steps ran (after the
 * lock, so a write of them that came before is among them: `laterChanges`), and the conflicts said on them (`conflictsOf`, `childConflicts`);
 * the answer, its summary first (`writeMeta`). Its WriteCtx is assigned nothing here. The
 * sequence's saving step saves `beside` before the nodes' changes that follow: the order of the
 * change ids and the events is the order the steps ran in, so the revert of this revert, newest
 * first, runs them in reverse.
 */
export async function revert(deps: Deps, project: AccessRow, { body, selected }: Selected): Promise<Reverted> {
  if (selected.length === 0)
    return {
      answer: body.dryRun
        ? { success: true, dryRun: true, changes: [], conflicts: [], _meta: { _tip: 'No change matches the filter.' } }
        : { success: true, reverted: 0, changeIds: [], _meta: { _tip: 'No change matches the filter: nothing to take back.' } },
    }

  const dryRun = body.dryRun === true
  const nodeTargets = [...new Set(selected.filter((c) => c.target_kind === 'node').map((c) => c.target_id))]
  // a dry run writes as the real call would, then takes all of it back to this point (its locks too)
  const takeBack = dryRun ? await savepoint(deps.db, 'arbor_revert_dry_run') : undefined
  const steps = stepsOf(selected)
  // the nodes this revert takes back, read and locked first: a write to them waits for its commit,
  // one that came before is among the later changes read below; then every step
  const undone = await undoAll(deps, project.id, nodeTargets, steps, { dryRun })
  const { ctx } = undone
  if ('refused' in undone) throw refusal(selected.find((c) => String(c.id) === undone.refused.changeId)!, undone.refused)
  const planned = takeBack && [...ctx.beside.flatMap((step) => step.changes), ...ctx.changes].map(plannedChange)
  await takeBack?.rollback()
  const conflicts = [
    ...conflictsOf(steps, undone.outcomes, await laterOf(deps, project.id, selected)),
    ...(await childConflicts(deps, project.id, selected, undone.children)),
  ]
  // in the order of the selection, newest first
  conflicts.sort((x, y) => Number(y.changeId) - Number(x.changeId))
  const tip =
    'A revert changed later fields, or the target is gone, or it has children added later: nothing was written. Send force:true to take the changes back anyway (reverted values win; later children are deleted), or leave the conflicting changes out.'
  if (planned)
    return {
      answer: {
        success: true,
        dryRun: true,
        changes: planned,
        conflicts,
        _meta: {
          _tip:
            conflicts.length && !body.force ? `Conflicts: ${tip}` : 'Nothing was written. Send the same call without dryRun to apply it.',
        },
      },
    }
  if (conflicts.length && !body.force) throw new RefusalError(409, 'revert_conflict', { conflicts, _meta: { _tip: tip } })
  // a forced revert skips what is gone: there is nothing left to take back, nor the moves of an
  // iteration's step that could not be taken back
  const skipped = steps.flatMap((s) => (undone.outcomes.get(String(s.change.id)) === 'taken' ? [] : s.moves.map((m) => String(m.id))))
  const reverted = selected.length - new Set([...conflicts.filter((c) => c.reason === 'gone').map((c) => c.changeId), ...skipped]).size
  // its change ids (history.md, 3) are every change saving records for it, those saved beside its
  // node changes (its iteration steps) among them: src/mutate/sequence.ts `runWrite` adds them
  // (`changeIdsAreResult`), as saving returns them
  const summary = `Reverted ${reverted} change(s). Take this back with {action:"revert", projectId, changeIds} of its changeIds.`
  return { ctx, answer: { success: true, reverted, _meta: writeMeta(ctx, { summary }) } }
}

/** What a revert leaves for saving: its WriteCtx and its answer, or (nothing selected, a dry run) its whole answer alone. */
type Reverted = { ctx?: undefined; answer: Record<string, unknown> } | { ctx: WriteCtx; answer: Record<string, unknown> }

/**
 * The later changes of the selected changes' targets (newer than the oldest selected), by target,
 * oldest first: what their conflicts are said on. Arbor's own changes (the classifier's kind) and
 * the selected ones stand in no one's way.
 */
async function laterOf(deps: Deps, projectId: string, selected: ChangeRow[]): Promise<Map<string, Later[]>> {
  const picked = new Set(selected.map((c) => Number(c.id)))
  const oldest = Number(selected.at(-1)!.id)
  const later = new Map<string, Later[]>()
  for (const l of await laterChanges(deps, projectId, [...new Set(selected.map((c) => c.target_id))], oldest)) {
    if (picked.has(Number(l.id)) || l.user_id === null) continue
    const key = `${l.target_kind}:${l.target_id}`
    later.set(key, [...(later.get(key) ?? []), l])
  }
  return later
}

/**
 * The conflicts of each change taken back (`undoAll`'s outcome), in the order the steps ran: a
 * field changed by a later change (`changed_later`), the target gone (`gone`), a deleted node or an
 * iteration that exists again (`changed_later`, on the latest later change of it).
 */
function conflictsOf(
  steps: { change: ChangeRow; moves: ChangeRow[] }[],
  outcomes: Map<string, Outcome>,
  later: Map<string, Later[]>,
): Conflict[] {
  const conflicts: Conflict[] = []
  for (const c of steps.flatMap((s) => [s.change, ...s.moves])) {
    const outcome = outcomes.get(String(c.id))
    const newer = (later.get(`${c.target_kind}:${c.target_id}`) ?? []).filter((l) => Number(l.id) > Number(c.id))
    const lastNewer = newer.at(-1)?.id ?? null
    const conflict = (reason: Reason, laterChangeId: string | number | null, field?: string) =>
      conflicts.push({
        changeId: String(c.id),
        target: targetOf(c),
        ...(field ? { field } : {}),
        laterChangeId: laterChangeId === null ? null : String(laterChangeId),
        reason,
      })
    const changedLater = () => {
      for (const l of newer) for (const f of c.fields.filter((f) => l.fields.includes(f))) conflict('changed_later', l.id, f)
    }
    if (c.target_kind === 'iteration') {
      changedLater()
      if (outcome === 'gone') conflict('gone', lastNewer)
      else if (outcome === 'stands') conflict('changed_later', lastNewer)
    } else if (c.before === null) {
      // an add (or a restore, or a revert that brought it back): deleted
      if (outcome === 'gone') conflict('gone', lastNewer)
      else for (const l of newer) conflict('changed_later', l.id, l.fields[0])
    } else if (c.after === null) {
      // a delete: the node brought back with its id, type, parent and data
      if (outcome === 'stands') conflict('changed_later', lastNewer)
      else if (outcome === 'parentGone') conflict('gone', lastNewer, 'parentId')
    } else if (outcome === 'gone') conflict('gone', lastNewer)
    else changedLater()
  }
  return conflicts
}

/**
 * The nodes found beneath an add taken back that are not taken back themselves (`undoAll`'s
 * `children`): each put there later, a `has_children` conflict (with force it was deleted too),
 * its later change read from the history of those children.
 */
async function childConflicts(deps: Deps, projectId: string, selected: ChangeRow[], children: { id: string; changeId: string }[]) {
  if (children.length === 0) return []
  const changeOf = new Map(selected.map((c) => [String(c.id), c]))
  const oldest = Math.min(...children.map((child) => Number(child.changeId)))
  const placed = await laterChanges(
    deps,
    projectId,
    children.map((child) => child.id),
    oldest,
  )
  return children.map((child): Conflict => {
    const c = changeOf.get(child.changeId)!
    const later = placed.find((p) => p.target_id === child.id && Number(p.id) > Number(c.id))
    return { changeId: String(c.id), target: targetOf(c), laterChangeId: later ? String(later.id) : null, reason: 'has_children' }
  })
}

/**
 * The change that refuses the whole revert (`undoAll`'s `refused`): a job or a task it would set
 * back into an iteration renamed or deleted since (`missingIteration`), with the way out; or a
 * node rule (src/nodes/rules.ts), whose messages name the change, as a batch's name their entry
 * (`mutations[i]: `), and whose tip is the revert's way out, not the way out of the write the
 * rule was made for.
 */
function refusal(c: ChangeRow, { missingIteration, error }: { missingIteration?: string; error?: ErrorListError }) {
  if (error)
    return prefixed(`change ${c.id}`, error, {
      ...error.meta,
      _tip: `Leave change ${c.id} out of the revert, or first change what refuses it and revert again.`,
    })
  return invalid(`Iteration ${missingIteration} not found: change ${c.id} would set ${c.target_id} back into it`, {
    _tip: `Take back the change that renamed or deleted iteration ${missingIteration} in the same revert (it has the requestId of change ${c.id} in GET /api/v1/history), or leave change ${c.id} out.`,
  })
}
