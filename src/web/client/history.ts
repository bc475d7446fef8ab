import { api, describe, q } from './api.ts'
import type { Ui } from './ctx.ts'
import { el } from './dom.ts'

/**
 * The History section of the details panel (history.md, 5): the node's changes from
 * GET /history, newest first, each with who (a person, or an agent and its person), when and
 * what (field: old → new). The panel is drawn again often; the last answer per node is kept
 * and read again in the background, so a redraw shows it at once.
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
const reading = new Set<string>()

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

function ago(iso: string): string {
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000)
  if (s < 60) return 'just now'
  if (s < 3600) return `${Math.floor(s / 60)} min ago`
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`
  return new Date(iso).toLocaleString()
}

function fill(box: HTMLElement, nodeId: string) {
  const got = kept.get(nodeId)
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
                  {},
                  el('time', { datetime: c.at, title: new Date(c.at).toLocaleString(), text: ago(c.at) }),
                  el('span', { class: 'who', text: `${who(c.actor)} ` }),
                  ...what(c).map((line) => el('span', { class: 'what', text: `${line} ` })),
                ),
              ),
            )
          : el('p', { class: 'empty', text: 'No change recorded.' }),
  )
}

/** The History section of a node: drawn from what is kept, then read again. */
export function historySection(ui: Ui, nodeId: string): HTMLElement {
  const box = el('section', { class: 'history', 'aria-label': 'History' })
  fill(box, nodeId)
  if (!reading.has(nodeId)) {
    reading.add(nodeId)
    api<{ changes: Change[] }>('GET', `/history?projectId=${q(ui.projectId)}&nodeId=${q(nodeId)}&limit=20`)
      .then((res) => kept.set(nodeId, { changes: res.changes, error: '' }))
      .catch((err) => kept.set(nodeId, { changes: kept.get(nodeId)?.changes ?? [], error: describe(err) }))
      .finally(() => {
        reading.delete(nodeId)
        // the panel may have been drawn again meanwhile: fill the section on the page now
        const live = document.querySelector<HTMLElement>('#panel section.history')
        if (live && ui.view.selected === nodeId) fill(live, nodeId)
      })
  }
  return box
}
