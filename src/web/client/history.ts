import { api, describe, mutate, q } from './api.ts'
import type { Ui } from './ctx.ts'
import { ago, closeButton, conflictList, el, keepingFocus, revertButton } from './dom.ts'

/**
 * The History section of the details panel (history.md, 5): the node's changes from
 * GET /history, newest first, each with who (a person, or an agent and its person), when and
 * what (field: old → new). The panel is drawn again often; the last answer per node is kept
 * and read again in the background, so a redraw shows it at once. Each change can be taken
 * back (POST /mutate action revert): its dry run first, in words with its conflicts, then Revert
 * (forced, and said so, over later changes). By keyboard: Revert… gives the focus to the
 * confirmation, Cancel or Escape back to the change's Revert…, and a revert done to the newest
 * change's Revert… (the revert itself, to take it back in turn).
 */
interface Change {
  changeId: string
  at: string
  actor: { userName: string | null; agent?: string; via: string }
  action: string
  before: { parentId?: string | null; data?: Record<string, unknown> } | null
  after: { parentId?: string | null; data?: Record<string, unknown> } | null
  fields: string[]
}

const kept = new Map<string, { changes: Change[]; error: string }>()
/** a change whose Revert was asked for: its dry run's changes and conflicts, or the refusal */
const asked = new Map<string, { count: number; conflicts: string[]; error: string }>()
const reading = new Set<string>()
/** where the focus goes once the section is filled next (its button is drawn again, or read first) */
let want: { nodeId: string; selector: string } | null = null
const entry = (changeId: string) => `[data-change="${CSS.escape(changeId)}"]`

const ACTIONS: Record<string, string> = {
  add: 'added it',
  delete: 'deleted it',
  restore: 'restored it',
  revert: 'took a change back',
}

const who = (a: Change['actor']) => (a.agent ? `${a.agent} (${a.userName ?? 'someone'})` : (a.userName ?? 'someone'))

const shown = (v: unknown) => (v === undefined || v === null ? '—' : typeof v === 'string' ? v : JSON.stringify(v))

/** What changed, in words: "label: Old → New", one line per field. */
function what(c: Change): string[] {
  if (c.action !== 'update' && c.action !== 'revert') return [ACTIONS[c.action] ?? c.action]
  if (!c.before || !c.after) return [c.before ? 'deleted it (taking a change back)' : 'brought it back (taking a change back)']
  return c.fields.map((f) => {
    const from = f === 'parentId' ? c.before?.parentId : c.before?.data?.[f]
    const to = f === 'parentId' ? c.after?.parentId : c.after?.data?.[f]
    return `${f === 'parentId' ? 'moved' : f}: ${shown(from)} → ${shown(to)}`
  })
}

const CONFLICTS: Record<string, string> = {
  changed_later: 'was changed again later',
  gone: 'no longer exists',
  has_children: 'has items added under it later',
}

async function dryRun(ui: Ui, box: HTMLElement, nodeId: string, changeId: string) {
  try {
    const res = await mutate<{ changes: unknown[]; conflicts: { target: { id: string }; field?: string; reason: string }[] }>({
      action: 'revert',
      projectId: ui.projectId,
      changeIds: [changeId],
      dryRun: true,
    })
    const conflicts = res.conflicts.map((c) => `${c.target.id}${c.field ? `'s ${c.field}` : ''} ${CONFLICTS[c.reason] ?? c.reason}`)
    asked.set(changeId, { count: res.changes.length, conflicts, error: '' })
  } catch (err) {
    asked.set(changeId, { count: 0, conflicts: [], error: describe(err) })
  }
  want = { nodeId, selector: `${entry(changeId)} .review-plan button` }
  fill(ui, box, nodeId)
}

function cancel(ui: Ui, box: HTMLElement, nodeId: string, changeId: string) {
  asked.delete(changeId)
  want = { nodeId, selector: `${entry(changeId)} .history-revert` }
  fill(ui, box, nodeId)
}

async function revert(ui: Ui, box: HTMLElement, nodeId: string, changeId: string, force: boolean) {
  ui.mine.set(nodeId, Date.now()) // this page's own change: not marked as changed elsewhere when the stream tells of it
  try {
    await mutate({ action: 'revert', projectId: ui.projectId, changeIds: [changeId], force })
    asked.delete(changeId)
    kept.delete(nodeId)
    want = { nodeId, selector: '.history-revert' }
    await ui.reload()
    ui.say('Change reverted.')
    ui.render() // the panel, and this section with it, drawn again and read again
  } catch (err) {
    asked.set(changeId, { count: 0, conflicts: [], error: describe(err) })
    fill(ui, box, nodeId)
  }
}

/** Under a change whose Revert was asked for: what the dry run found, and the confirmation. */
function plan(ui: Ui, box: HTMLElement, nodeId: string, c: Change): HTMLElement | null {
  const a = asked.get(c.changeId)
  if (!a) return null
  const back = closeButton('Cancel', () => cancel(ui, box, nodeId, c.changeId))
  if (a.error) return el('div', { class: 'review-plan' }, el('p', { class: 'field-error', role: 'alert', text: a.error }), back)
  return el(
    'div',
    { class: 'review-plan', role: 'region', 'aria-label': 'What the revert would do' },
    el('p', { text: `Reverting this would make ${a.count} ${a.count === 1 ? 'change' : 'changes'}.` }),
    conflictList('Someone changed things since:', a.conflicts),
    revertButton('history-confirm', a.conflicts.length > 0, () => void revert(ui, box, nodeId, c.changeId, a.conflicts.length > 0)),
    back,
  )
}

function fill(ui: Ui, box: HTMLElement, nodeId: string) {
  const got = kept.get(nodeId)
  // read again after every draw of the details: the focus stays on its button
  keepingFocus(box, () =>
    box.replaceChildren(
      el('h4', { text: 'History' }),
      !got
        ? el('p', { class: 'empty', text: 'Reading…' })
        : got.error
          ? el('p', { class: 'field-error', role: 'alert', text: got.error })
          : got.changes.length
            ? el(
                'ol',
                { class: 'feed history-list' },
                got.changes.map((c) =>
                  el(
                    'li',
                    { 'data-change': c.changeId },
                    el('time', { datetime: c.at, title: new Date(c.at).toLocaleString(), text: ago(c.at, (d) => d.toLocaleString()) }),
                    el('span', { class: 'who', text: `${who(c.actor)} ` }),
                    ...what(c).map((line) => el('span', { class: 'what', text: `${line} ` })),
                    asked.has(c.changeId)
                      ? plan(ui, box, nodeId, c)
                      : el('button', {
                          type: 'button',
                          class: 'link history-revert',
                          text: 'Revert…',
                          'aria-label': `Revert this change (${what(c).join('; ')})`,
                          onclick: () => void dryRun(ui, box, nodeId, c.changeId),
                        }),
                  ),
                ),
              )
            : el('p', { class: 'empty', text: 'No change recorded.' }),
    ),
  )
  // the focus where the last step left it, unless the person has moved it elsewhere since
  const at = document.activeElement
  const free = !at || at === document.body || !at.isConnected || box.contains(at)
  const to = want?.nodeId === nodeId ? box.querySelector<HTMLElement>(want.selector) : null
  if (to && box.isConnected) {
    want = null
    if (free || at?.closest('#panel')) to.focus()
  }
}

/** The History section of a node: drawn from what is kept, then read again. */
export function historySection(ui: Ui, nodeId: string): HTMLElement {
  const box = el('section', { class: 'history', 'aria-label': 'History' })
  // Escape puts a dry run down (before the phone's Escape closes the details)
  box.addEventListener('keydown', (e) => {
    const id = (e.target as HTMLElement).closest<HTMLElement>('[data-change]')?.dataset.change
    if (e.key !== 'Escape' || !id || !asked.has(id)) return
    e.preventDefault()
    e.stopPropagation()
    cancel(ui, box, nodeId, id)
  })
  fill(ui, box, nodeId)
  if (!reading.has(nodeId)) {
    reading.add(nodeId)
    api<{ changes: Change[] }>('GET', `/history?projectId=${q(ui.projectId)}&nodeId=${q(nodeId)}&limit=20`)
      .then((res) => kept.set(nodeId, { changes: res.changes, error: '' }))
      .catch((err) => kept.set(nodeId, { changes: kept.get(nodeId)?.changes ?? [], error: describe(err) }))
      .finally(() => {
        reading.delete(nodeId)
        // the panel may have been drawn again meanwhile: fill the section on the page now
        const live = document.querySelector<HTMLElement>('#panel section.history')
        if (live && ui.view.selected === nodeId) fill(ui, live, nodeId)
      })
  }
  return box
}
