import type { Deps } from '../deps'
import type { Outbox } from '../events/outbox'
import type { DeleteIterationBody, UpdateIterationBody } from '../iterations/model'
import { deletedIteration, deleteIterationAction, type NodesMove, updatedIteration, updateIterationAction } from '../iterations/service'
import { moveIterationNodes } from '../nodes/service'
import type { Access } from '../projects/access'

/**
 * The iteration actions that move jobs and tasks, each the handler of the write's sequence
 * (./sequence.ts): the iteration written, its change and event noted (src/iterations/service.ts),
 * then the jobs and tasks that named it moved, their changes and events noted after it in the
 * same outbox (src/nodes/service.ts `moveIterationNodes`: nodes stand above iterations, so the
 * two are put together here, as a revert's iteration step is in src/nodes/undo.ts `undoIteration`), then its answer.
 */

const moved = (deps: Deps, outbox: Outbox, move: NodesMove | undefined) =>
  move ? moveIterationNodes(deps, outbox, move.from, move.to) : Promise.resolve([])

/** updateIteration: a rename moves the jobs and tasks that named the old name. */
export async function updateIteration(deps: Deps, access: Access, body: UpdateIterationBody) {
  const written = await updateIterationAction(deps, access, body)
  return { outbox: written.outbox, answer: updatedIteration(written, await moved(deps, written.outbox, written.move)) }
}

/** deleteIteration: its jobs and tasks move to Later. */
export async function deleteIteration(deps: Deps, access: Access, body: DeleteIterationBody) {
  const written = await deleteIterationAction(deps, access, body)
  return { outbox: written.outbox, answer: deletedIteration(written, await moved(deps, written.outbox, written.move)) }
}
