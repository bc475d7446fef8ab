import { mutate } from './api.ts'
import type { Ui } from './ctx.ts'
import { openDialog } from './dialogs.ts'
import { el } from './dom.ts'
import { conflictWords, type StaleConflict } from './stale-words.ts'

export { conflictWords, takeStale } from './stale-words.ts'

/**
 * A stale write outside the details form (a rename in place, done, a move, a delete): a dialog
 * with the conflicts in words and both choices. `again` sends the write again on the node as it
 * is now (with its new rev); the answer is applied by the caller's `done`.
 */
export function askStale(ui: Ui, conflicts: StaleConflict[], again: () => Promise<void>) {
  const lines = conflicts.map((c) => el('p', { class: 'stale-line', text: conflictWords(ui, c) }))
  let draw = () => {}
  let error = ''
  draw = openDialog('Changed by someone else meanwhile', () => [
    el('p', { text: 'Nothing of your change was written.' }),
    ...lines,
    error ? el('p', { class: 'field-error', role: 'alert', text: error }) : null,
    el(
      'div',
      { class: 'actions' },
      el('button', {
        type: 'button',
        id: 'stale-keep-mine',
        text: 'Keep mine',
        onclick: async () => {
          try {
            await again()
            ;(document.querySelector('#dialog') as HTMLDialogElement).close()
          } catch (err) {
            error = String((err as Error).message ?? err)
            draw()
          }
        },
      }),
      el('button', {
        type: 'button',
        id: 'stale-take-theirs',
        text: 'Take theirs',
        onclick: () => {
          ;(document.querySelector('#dialog') as HTMLDialogElement).close()
          ui.render()
        },
      }),
    ),
  ])
  ui.render()
}

/** Send `body` again with the rev each of its targets has now (ifRev), for "Keep mine". */
export function withCurrentRevs(ui: Ui, body: Record<string, unknown>): Record<string, unknown> {
  const rev = (id: unknown) => ui.plan.nodes.get(String(id))?.rev
  if (Array.isArray(body.mutations))
    return { ...body, mutations: body.mutations.map((m: Record<string, unknown>) => ({ ...m, ifRev: rev(m.nodeId) })) }
  return { ...body, ifRev: rev(body.nodeId) }
}

export const resend = <T>(ui: Ui, body: Record<string, unknown>) => mutate<T>({ projectId: ui.projectId, ...withCurrentRevs(ui, body) })
