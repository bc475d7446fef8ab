import type { User } from '../accounts/model'
import type { Db } from '../db'
import type { Deps } from '../deps'
import { ErrorListError, invalid } from '../errors'
import { type EventNode, type Outbox, outboxOf } from '../events/outbox'
import { iterationChange } from '../history/change'
import { checkExpectation, type Expectation, staleWrite } from '../history/precondition'
import { afterAccess, trimmedName } from '../http/action-schema'
import { parseRev } from '../ports/rev'
import { type Access, requireProject } from '../projects/access'
import {
  type AddIterationBody,
  currentOf,
  type DeleteIterationBody,
  IterationsQuery,
  LATER,
  type NewIteration,
  type ReorderIterationsBody,
  toIteration,
  type UpdateIterationBody,
} from './model'
import * as q from './queries'

/** An iteration as a change keeps it: its resource fields. */
const iterationState = (row: q.IterationRow) => ({
  name: row.name,
  status: row.status,
  sortOrder: row.sort_order,
  gitTags: row.git_tags ?? [],
})

const MAX_NAME = 100

/** A name as stored: trimmed, at most MAX_NAME characters (its type and non-blankness are the schema's, ./model.ts). */
const cleanName = (value: string, field: string) => trimmedName(value, MAX_NAME, () => `${field} must be at most ${MAX_NAME} characters`)

/**
 * The jobs and tasks an iteration write moves (a rename, a deletion): those naming `from` are to
 * name `to`. The nodes module owns those rows and stands above this one, so the write that called
 * this module moves them (src/nodes/service.ts `moveIterationNodes`, called by
 * src/mutate/iterations.ts and src/nodes/undo.ts `moveAlong`), noted in the same outbox after the
 * iteration's own change and event.
 */
export interface NodesMove {
  from: string
  to: string
}

/** GET /iterations */
export async function listIterations(deps: Deps, user: User, raw: Record<string, string>) {
  const { project, input: query } = await afterAccess((id) => requireProject(deps, user, id), 'query', IterationsQuery, raw)
  const current = query.current === 'true'
  const status = query.status ?? null
  return deps.reads.answer(project.id, `iterations\n${current}\n${status ?? ''}`, {}, async () => {
    if (current) {
      const found = currentOf(await q.list(deps.db, project.id))
      return { iteration: found ? toIteration(found) : null }
    }
    return { iterations: (await q.list(deps.db, project.id, status)).map(toIteration) }
  })
}

/** Every iteration of the project, in order (the project's access already checked). */
export async function projectIterations(deps: Deps, projectId: string) {
  return (await q.list(deps.db, projectId, null)).map(toIteration)
}

/**
 * addIteration, also used by batch entries: the row written, its change and event noted in
 * `outbox` (the action's own, or one of a batch's entry, whose change and event
 * src/nodes/write.ts `storeIteration` notes in the batch's write) to be saved with the write's.
 */
export async function addIteration(deps: Deps, outbox: Outbox, it: NewIteration) {
  const name = cleanName(it.name, 'iteration.name')
  const status = it.status ?? 'active'
  const gitTags = it.gitTags ?? []
  const row = await q.insert(deps.db, outbox.projectId, name, status, gitTags)
  if (!row) throw invalid(`Iteration ${name} already exists in this project`)
  outbox.changes.push(iterationChange('addIteration', name, null, iterationState(row)))
  outbox.events.push({ type: 'iteration.added', iteration: { name, status } })
  return toIteration(row)
}

export async function addIterationAction(deps: Deps, { project }: Access, body: AddIterationBody) {
  const outbox = outboxOf(project.id)
  const iteration = await addIteration(deps, outbox, body.iteration)
  return {
    outbox,
    answer: { success: true, iteration, _meta: { _tip: `Assign jobs and tasks with data.iteration: "${iteration.name}".` } },
  }
}

async function findIteration(deps: Deps, projectId: string, name: string) {
  const all = await q.list(deps.db, projectId)
  const row = all.find((i) => i.name === name)
  if (!row) throw new ErrorListError([`Iteration ${name} not found`], { _tip: `Iterations: ${all.map((i) => i.name).join(', ')}` })
  return { row, all }
}

/**
 * The precondition of an iteration write that names the rev it read (live.md, 1): the row is
 * locked first, so concurrent writes with one ifRev check one after the other; a field of
 * `sets` (null: a delete, every field) changed since ifRev refuses the write with 409 stale_write.
 * Refused here, before the write's own checks, and not left to step 8 of src/mutate/sequence.ts
 * `runWrite` as a node's stale ifRev is: a stale updateIteration that also sends a bad name (or
 * renames or deletes a system iteration) answers 409 today, and would answer 400 if it waited.
 */
async function expectRev(deps: Deps, projectId: string, name: string, ifRev: string | undefined, sets: Record<string, unknown> | null) {
  if (ifRev === undefined) return
  const row = await q.lock(deps.db, projectId, name)
  if (!row) return // not found: findIteration says so
  const e: Expectation = {
    target: {
      kind: 'iteration',
      id: row.name,
      rev: row.rev,
      fieldRevs: row.field_revs ?? {},
      values: iterationState(row),
      current: toIteration(row),
    },
    seq: parseRev('iteration', row.name, ifRev),
    sets,
  }
  const stale = await checkExpectation(deps, projectId, e)
  if (stale.length) throw await staleWrite(deps, projectId, stale)
}

/** updateIteration: the row written, its change and event noted; its jobs and tasks to move when it is renamed (`move`). */
export async function updateIterationAction(deps: Deps, { project }: Access, body: UpdateIterationBody) {
  const data = body.data
  await expectRev(deps, project.id, body.iterationName, body.ifRev, data)
  const { row, all } = await findIteration(deps, project.id, body.iterationName)
  const name = data.name === undefined ? row.name : cleanName(data.name, 'data.name')
  const status = data.status ?? row.status
  if (row.system && (name !== row.name || status !== row.status)) throw invalid(`Cannot rename or close system iteration ${row.name}`)
  if (name !== row.name && all.some((i) => i.name === name)) throw invalid(`Iteration ${name} already exists in this project`)
  const gitTags = data.gitTags ?? row.git_tags
  const updated = (await q.update(deps.db, project.id, row.name, { name, status, gitTags, sortOrder: data.sortOrder ?? row.sort_order }))!
  const outbox = outboxOf(project.id)
  const renamed = name !== row.name
  // docs/reference/events.md: iteration.updated fires on a rename or a status change (not on tags or order),
  // with status only when it changed and previous_name on a rename
  const iterationEvent: { name: string; status?: string; previous_name?: string } = { name }
  if (status !== row.status) iterationEvent.status = status
  if (renamed) iterationEvent.previous_name = row.name
  if (renamed || status !== row.status) outbox.events.push({ type: 'iteration.updated', iteration: iterationEvent })
  outbox.changes.push(iterationChange('updateIteration', name, iterationState(row), iterationState(updated)))
  // no event for tags or order alone, but GET /iterations shows them and the new rev (the read cache)
  outbox.revised = outbox.events.length === 0 && updated.rev !== row.rev
  const move: NodesMove | undefined = renamed ? { from: row.name, to: name } : undefined
  return { outbox, row, updated, move }
}

/** The answer of updateIteration, once the jobs and tasks it moved (`moved`) are known. */
export function updatedIteration({ row, updated }: Awaited<ReturnType<typeof updateIterationAction>>, moved: EventNode[]) {
  const tips: string[] = []
  if (updated.name !== row.name) tips.push(`Renamed; ${moved.length} job(s) and task(s) now name ${updated.name}.`)
  if (updated.status === 'done' && row.status !== 'done')
    tips.push('Marked done: hidden from the app dropdown and matrix; open work in it moves to Later on its next update.')
  return { success: true, iteration: toIteration(updated), _meta: tips.length ? { _tip: tips.join(' ') } : {} }
}

/** deleteIteration: the row deleted, its change and event noted; its jobs and tasks to move to Later (`move`). */
export async function deleteIterationAction(deps: Deps, { project }: Access, body: DeleteIterationBody) {
  await expectRev(deps, project.id, body.iterationName, body.ifRev, null)
  const { row } = await findIteration(deps, project.id, body.iterationName)
  if (row.system) throw new ErrorListError([`Cannot delete system iteration ${row.name}`])
  await q.remove(deps.db, project.id, row.name)
  const outbox = outboxOf(project.id)
  outbox.changes.push(iterationChange('deleteIteration', row.name, iterationState(row), null))
  outbox.events.push({ type: 'iteration.deleted', iteration: { name: row.name, status: row.status } })
  const move: NodesMove = { from: row.name, to: LATER }
  return { outbox, move }
}

/** The answer of deleteIteration, once the jobs and tasks it moved to Later (`moved`) are known. */
export function deletedIteration({ move }: Awaited<ReturnType<typeof deleteIterationAction>>, moved: EventNode[]) {
  return {
    success: true,
    deleted: { name: move.from },
    movedToLater: moved.map((n) => n.id),
    _meta: { _tip: `Deleted iteration ${move.from}; ${moved.length} job(s) and task(s) moved to ${LATER}.` },
  }
}

export async function reorderIterationsAction(deps: Deps, { project }: Access, body: ReorderIterationsBody) {
  const order = body.order
  const rows = await q.list(deps.db, project.id)
  const names = rows.map((i) => i.name)
  const missing = names.filter((n) => !order.includes(n))
  const unknown = order.filter((n: string) => !names.includes(n))
  if (missing.length || unknown.length || new Set(order).size !== order.length)
    throw new ErrorListError(
      [
        'order must list every iteration of the project exactly once' +
          (missing.length ? `; missing: ${missing.join(', ')}` : '') +
          (unknown.length ? `; unknown: ${unknown.join(', ')}` : ''),
      ],
      { _tip: `Current iterations: ${names.join(', ')}` },
    )
  await q.setOrder(deps.db, project.id, order)
  const after = await q.list(deps.db, project.id)
  // one change per iteration whose place moved
  const was = new Map(rows.map((r) => [r.name, r]))
  const changes = after.flatMap((r) =>
    was.get(r.name)!.sort_order === r.sort_order
      ? []
      : [iterationChange('reorderIterations', r.name, iterationState(was.get(r.name)!), iterationState(r))],
  )
  return {
    // no event says so, but every read that lists iterations changes
    outbox: { ...outboxOf(project.id, [], changes), revised: true },
    answer: { success: true, iterations: after.map(toIteration) },
  }
}

export type { IterationRow } from './queries'
/** The project's iterations, in their order (for the modules that read them: nodes, workflow). */
export const readIterations = (db: Db, projectId: string) => q.list(db, projectId)

/**
 * Take back one change of an iteration (a revert, src/nodes/undo.ts `undoIteration`), in the caller's
 * transaction: an add by deleting it (its jobs and tasks move to Later), a delete by adding it
 * again, an update by setting its changed fields back. Recorded as `revert` of `revertOf`.
 * Answers what stood in the way instead of writing: `gone` (it no longer exists) or `exists`;
 * else the step's outbox: its events and changes, its own change first, saved by the write's
 * saving step in the order the revert's steps ran (src/events/outbox.ts `save`), and the jobs
 * and tasks to move (`move`, a deletion or a rename), which the revert moves and notes in that
 * outbox as part of the step. A dry run writes too, under its savepoint: the steps after it see the iteration as
 * the real run leaves it (a job set back into it).
 */
export async function revertIteration(
  deps: Deps,
  projectId: string,
  change: { target_id: string; before: Record<string, unknown> | null; after: Record<string, unknown> | null; fields: string[] },
  revertOf: number,
): Promise<{ stood: 'gone' | 'exists' } | { outbox: Outbox; move?: NodesMove }> {
  const all = await q.list(deps.db, projectId)
  const row = all.find((i) => i.name === change.target_id)
  const outbox = outboxOf(projectId)
  const { before, after } = change
  if (before === null) {
    if (!row) return { stood: 'gone' }
    if (row.system) throw invalid(`Cannot delete system iteration ${row.name}`)
    await q.remove(deps.db, projectId, row.name)
    outbox.changes.push(iterationChange('revert', row.name, iterationState(row), null, revertOf))
    outbox.events.push({ type: 'iteration.deleted', iteration: { name: row.name, status: row.status } })
    return { outbox, move: { from: row.name, to: LATER } }
  } else if (after === null) {
    const name = String(before.name)
    if (all.some((i) => i.name === name)) return { stood: 'exists' }
    const status = String(before.status ?? 'active')
    const added = (await q.insert(deps.db, projectId, name, status, (before.gitTags as string[] | undefined) ?? []))!
    const placed =
      typeof before.sortOrder === 'number'
        ? (await q.update(deps.db, projectId, name, { name, status, gitTags: added.git_tags, sortOrder: before.sortOrder }))!
        : added
    outbox.changes.push(iterationChange('revert', name, null, iterationState(placed), revertOf))
    outbox.events.push({ type: 'iteration.added', iteration: { name, status } })
  } else {
    if (!row) return { stood: 'gone' }
    const was = (f: string, now: unknown) => (change.fields.includes(f) && before[f] !== undefined ? before[f] : now)
    const next = {
      name: String(was('name', row.name)),
      status: String(was('status', row.status)),
      gitTags: was('gitTags', row.git_tags) as string[],
      sortOrder: Number(was('sortOrder', row.sort_order)),
    }
    if (next.name !== row.name && all.some((i) => i.name === next.name)) return { stood: 'exists' }
    const updated = (await q.update(deps.db, projectId, row.name, next))!
    outbox.changes.push(iterationChange('revert', updated.name, iterationState(row), iterationState(updated), revertOf))
    const renamed = updated.name !== row.name
    if (renamed || updated.status !== row.status)
      outbox.events.push({
        type: 'iteration.updated',
        iteration: {
          name: updated.name,
          ...(updated.status !== row.status ? { status: updated.status } : {}),
          ...(renamed ? { previous_name: row.name } : {}),
        },
      })
    // no event for order or tags alone, but GET /iterations shows them and the new rev (the read cache)
    outbox.revised = outbox.events.length === 0 && updated.rev !== row.rev
    if (renamed) return { outbox, move: { from: row.name, to: updated.name } }
  }
  return { outbox }
}
