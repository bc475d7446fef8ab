import { savepoint } from '../db/port'
import type { Deps } from '../deps'
import { ErrorListError, invalid, RefusalError } from '../errors'
import type { Outbox } from '../events/outbox'
import { type ChangeRow, laterChanges, plannedChange, targetOf } from '../history/service'
import { LATER } from '../iterations/model'
import type { NodesMove } from '../iterations/service'
import type { Node, NodeData, NodeType } from '../nodes/model'
import { writeMeta } from '../nodes/service'
import {
  type AddsRead,
  finishUndo,
  moveAlong,
  type NodeState,
  openUndo,
  readAdds,
  removeAdds,
  stillStands,
  undoDelete,
  undoIteration,
  undoUpdate,
  type WriteCtx,
} from '../nodes/undo'
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
 * came with it (`stepsOf`). Conflicts are gathered while the plan runs; with any and no `force` the whole
 * transaction is refused (409) and nothing stays written; a dry run runs the same plan under a
 * savepoint and rolls it back, so it says exactly what the real call does. The handler of the
 * write's sequence (src/mutate/sequence.ts), top-down, on the changes its cost step selected and
 * weighed before the work state (./revert-select.ts `selectChanges`): what
 * their conflicts are said on, read before anything is undone (the nodes they name, read and
 * locked at once, src/nodes/undo.ts `openUndo`, then the later changes of their targets, asked
 * once); each step, newest first (`undo`), through one whole operation of src/nodes/undo.ts that
 * reads, checks and stores inside it and answers what it found, which `undo` says as its
 * conflicts (fields set back: `undoUpdate`; a delete taken back: `undoDelete`; adds: `stillStands`,
 * then, together, `removeAll`; an iteration's step: `undoIteration`, written at once by
 * src/iterations/service.ts and noted in its own outbox (`ctx.beside`) after the node changes of
 * the steps before it, then `moveAlong`, the jobs and tasks it moves), then `finishUndo` (what is
 * still queued stored, its events marked as a revert's); the answer, its summary first
 * (`writeMeta`). Its WriteCtx is opened as a dry run's when it is one (`openUndo`) and assigned
 * nothing here. The sequence's saving step saves `beside` before the nodes' changes that follow: the
 * order of the change ids and the events is the order the steps ran in, so the revert of this
 * revert, newest first, runs them in reverse.
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
  // the nodes this revert takes back, read and locked: a write to them waits for its commit, one
  // that came before is among the later changes read next
  const ctx = await openUndo(deps, project.id, nodeTargets, { dryRun })
  const picked = new Set(selected.map((c) => Number(c.id)))
  const oldest = Number(selected.at(-1)!.id)
  const later = new Map<string, Later[]>()
  for (const l of await laterChanges(deps, project.id, [...new Set(selected.map((c) => c.target_id))], oldest)) {
    // Arbor's own changes (the classifier's kind) and the selected ones stand in no one's way
    if (picked.has(Number(l.id)) || l.user_id === null) continue
    const key = `${l.target_kind}:${l.target_id}`
    later.set(key, [...(later.get(key) ?? []), l])
  }

  // a dry run writes as the real call would, then takes all of it back to this point
  const takeBack = dryRun ? await savepoint(deps.db, 'arbor_revert_dry_run') : undefined
  const conflicts: Conflict[] = []
  const removals: ChangeRow[] = []
  /** the moves of a rename or a deletion that could not be taken back: skipped with it (force), so not reverted */
  const skipped = new Set<string>()
  /** Take back one change; an iteration's answers the jobs and tasks its step is still to move. `write` false: only its conflicts. */
  const undo = async (c: ChangeRow, write = true): Promise<{ stood: boolean; done?: { outbox: Outbox; move?: NodesMove } }> => {
    const after = (l: Later) => Number(l.id) > Number(c.id)
    const newer = (later.get(`${c.target_kind}:${c.target_id}`) ?? []).filter(after)
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
    const lastNewer = newer.at(-1)?.id ?? null
    // adds to take back are deleted together, in one statement, before any other kind of step
    if (!(c.target_kind === 'node' && c.before === null)) await removeAll(ctx, removals.splice(0), conflicts)
    if (c.target_kind === 'iteration') {
      changedLater()
      const done = await undoIteration(ctx, Number(c.id), c)
      if ('stood' in done) {
        conflict(done.stood === 'gone' ? 'gone' : 'changed_later', lastNewer)
        return { stood: true }
      }
      return { stood: false, done }
    }
    const before = c.before as NodeState | null
    if (before === null) {
      // an add (or a restore, or a revert that brought it back): delete it
      if (!(await stillStands(ctx, c.target_id))) {
        conflict('gone', lastNewer)
        return { stood: true }
      }
      for (const l of newer) conflict('changed_later', l.id, l.fields[0])
      removals.push(c)
      return { stood: false }
    }
    if (c.after === null) {
      // a delete: bring the node back with its id, type, parent and data
      const back: Node = { id: c.target_id, type: c.target_type as NodeType, parentId: before.parentId, data: before.data as NodeData }
      const done = await namingChange(c.id, undoDelete(ctx, Number(c.id), back))
      refuseMissing(c, done.missingIteration)
      if (done.stands) conflict('changed_later', lastNewer)
      else if (done.parentGone) conflict('gone', lastNewer, 'parentId')
      return { stood: done.stands === true || done.parentGone === true }
    }
    const done = await namingChange(c.id, undoUpdate(ctx, Number(c.id), c.target_id, before, c.fields, write))
    if (done.gone) {
      conflict('gone', lastNewer)
      return { stood: true }
    }
    changedLater()
    refuseMissing(c, done.missingIteration)
    return { stood: false }
  }
  for (const { change, moves } of stepsOf(selected)) {
    const done = await undo(change)
    // a rename's or a deletion's moves, taken back once the iteration they go back to exists again;
    // when it could not be taken back, neither can they (only their own conflicts are said)
    for (const m of moves) {
      if (done.stood) skipped.add(String(m.id))
      await undo(m, !done.stood)
    }
    // then the jobs and tasks still naming the name it took back follow it (a rename's, src/nodes/service.ts),
    // noted after it in its step's outbox, as part of taking it back (like the children an add's
    // removal takes along); this write's nodes read before are as they now stand
    if (done.done?.move) await moveAlong(ctx, done.done.outbox, done.done.move, Number(change.id))
  }
  await removeAll(ctx, removals.splice(0), conflicts)
  await finishUndo(ctx)
  // in the order of the selection, newest first
  conflicts.sort((x, y) => Number(y.changeId) - Number(x.changeId))
  const tip =
    'A revert changed later fields, or the target is gone, or it has children added later: nothing was written. Send force:true to take the changes back anyway (reverted values win; later children are deleted), or leave the conflicting changes out.'
  if (takeBack) {
    const planned = [...ctx.beside.flatMap((step) => step.changes), ...ctx.changes].map(plannedChange)
    await takeBack.rollback()
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
  }
  if (conflicts.length && !body.force) throw new RefusalError(409, 'revert_conflict', { conflicts, _meta: { _tip: tip } })
  // a forced revert skips what is gone: there is nothing left to take back
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
 * Take back adds by deleting their nodes (each with everything beneath it), all in one
 * statement (src/nodes/undo.ts `readAdds`, `removeAdds`). A node beneath one of them that is not
 * itself taken back was put there later: a `has_children` conflict (with force it is deleted
 * too), its later change read from the history of those children, known only now.
 */
async function removeAll(ctx: WriteCtx, run: ChangeRow[], conflicts: Conflict[]) {
  if (run.length === 0) return
  const changeOf = new Map(run.map((c) => [c.target_id, c]))
  const read: AddsRead = await readAdds(ctx, new Map(run.map((c) => [c.target_id, Number(c.id)])))
  if (read.later.length) {
    const oldest = Math.min(...run.map((c) => Number(c.id)))
    const placed = await laterChanges(
      ctx.deps,
      ctx.projectId,
      read.later.map((r) => r.id),
      oldest,
    )
    for (const child of read.later) {
      const c = changeOf.get(child.parent_id!)!
      const later = placed.find((p) => p.target_id === child.id && Number(p.id) > Number(c.id))
      conflicts.push({
        changeId: String(c.id),
        target: targetOf(c),
        laterChangeId: later ? String(later.id) : null,
        reason: 'has_children',
      })
    }
  }
  await removeAdds(ctx, read)
}

/**
 * A job or a task that a step would set back into an iteration renamed or deleted since
 * (src/nodes/undo.ts answers it, `missingIteration`) is refused here, with the way out.
 */
function refuseMissing(c: ChangeRow, into: string | undefined) {
  if (into !== undefined)
    throw invalid(`Iteration ${into} not found: change ${c.id} would set ${c.target_id} back into it`, {
      _tip: `Take back the change that renamed or deleted iteration ${into} in the same revert (it has the requestId of change ${c.id} in GET /api/v1/history), or leave change ${c.id} out.`,
    })
}

/**
 * A change taken back, refused by a node rule (src/nodes/rules.ts, through src/nodes/undo.ts): its
 * messages name the change, as a batch's name their entry (`mutations[i]: `), and its tip is the
 * revert's way out, not the way out of the write the rule was made for.
 */
async function namingChange<T>(changeId: string | number, step: Promise<T>): Promise<T> {
  try {
    return await step
  } catch (err) {
    if (!(err instanceof ErrorListError)) throw err
    throw new ErrorListError(
      err.errors.map((e) => `change ${changeId}: ${e}`),
      { ...err.meta, _tip: `Leave change ${changeId} out of the revert, or first change what refuses it and revert again.` },
      err.status,
    )
  }
}
