import { mutate, type Refused } from './api.ts'
import type { Ui } from './ctx.ts'
import { openDialog } from './dialogs.ts'
import { el } from './dom.ts'
import type { PlanNode } from './model.ts'

/**
 * A write the server refused as stale (live.md, 1: 409 stale_write): someone changed a field of
 * this write since the page read the node. The page takes the node as it is now, says in words
 * who changed what and when with both values, and lets the person keep theirs (the write sent
 * again with the new rev) or take the other. Nothing is lost either way: the refused value stays
 * on screen until the person chooses.
 */
export interface StaleConflict {
  target: { kind: string; id: string }
  field: string
  yours: unknown
  theirs: unknown
  actor: { userName: string | null; agent?: string; via?: string } | null
  at: string | null
}

const FIELD_WORDS: Record<string, string> = { parentId: 'its place', label: 'the label', description: 'the description' }
const fieldWords = (f: string) => FIELD_WORDS[f] ?? f
const shown = (v: unknown) =>
  v === null || v === undefined || v === ''
    ? '(empty)'
    : `“${Array.isArray(v) ? v.join(', ') : typeof v === 'object' ? JSON.stringify(v) : String(v)}”`

/** Who, in words: the agent and its person, or the person. */
export function who(actor: StaleConflict['actor']): string {
  if (!actor) return 'Someone'
  return actor.agent ? `${actor.agent} (an agent of ${actor.userName ?? 'someone'})` : (actor.userName ?? 'Someone')
}

/** One conflict in words: who changed which field of which node, when, to what; and what this page had. */
export function conflictWords(ui: Ui, c: StaleConflict): string {
  const label = ui.plan.nodes.get(c.target.id)?.data.label ?? c.target.id
  const when = c.at ? ` at ${new Date(c.at).toLocaleTimeString()}` : ''
  // a rename names the node by the label the person typed over, not by the new one
  const what = c.field === 'label' ? `renamed ${c.target.id}` : `changed ${fieldWords(c.field)} of “${label}”`
  return `${who(c.actor)} ${what}${when} to ${shown(c.theirs)}. Yours: ${shown(c.yours)}.`
}

/** The refusal's conflicts, and the targets as they are now taken into the plan; null when `err` is no stale write. */
export function takeStale(ui: Ui, err: unknown): StaleConflict[] | null {
  const refused = err as Refused
  if (refused?.code !== 'stale_write') return null
  for (const n of (refused.body.current as PlanNode[] | undefined) ?? []) if (n && 'type' in n) ui.plan.upsert(n)
  return (refused.body.conflicts as StaleConflict[] | undefined) ?? []
}

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
