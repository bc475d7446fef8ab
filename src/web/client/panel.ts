import { remove, startAdd, startAddOf, toggleDone } from './actions.ts'
import { badge, chips } from './chips.ts'
import type { Ui } from './ctx.ts'
import { closeColumn, el, plural } from './dom.ts'
import { editorFields, fieldLabel } from './editor.ts'
import { historySection } from './history.ts'
import { CHILD_NAMES, CHILD_TYPE, type PlanNode, TYPE_NAMES } from './model.ts'
import { presenceLines } from './presence.ts'

/**
 * A key's hint on a button, " (Shift+A)": shown only where a keyboard is likely (a fine pointer
 * that hovers, 6-density.css); the button names its key in `aria-keyshortcuts` everywhere.
 */
const keyHint = (key: string) => el('span', { class: 'key-hint', 'aria-hidden': 'true', text: ` (${key})` })

/** A node of the path or a child, as a button that selects it: its badge and label (and what follows). */
const goTo = (ui: Ui, n: PlanNode, name: string, ...more: HTMLElement[]) =>
  el('button', { type: 'button', class: name, onclick: () => ui.select(n.id) }, badge(n), el('span', { text: n.data.label }), ...more)

/** The side panel (a sheet on a phone): the selected node's fields to edit and its actions, or the project at a glance. */
export function renderPanel(ui: Ui, panel: HTMLElement, close: () => void) {
  const n = ui.view.selected ? ui.plan.nodes.get(ui.view.selected) : undefined
  panel.replaceChildren(
    closeColumn('panel-close', 'details', close, 'Close (Escape)'),
    ...(n ? details(ui, n) : overview(ui)).filter((x): x is HTMLElement => x !== null),
  )
}

function details(ui: Ui, n: PlanNode): (HTMLElement | null)[] {
  const d = n.data
  const path = ui.plan
    .ancestors(n.id)
    .reverse()
    .map((id) => ui.plan.nodes.get(id)!)
  const work = n.type === 'job' || n.type === 'task'
  const child = CHILD_TYPE[n.type]
  const kids = ui.plan.kids(n.id)
  const { done, total } = ui.plan.progress(n.id)
  const facts: [string, unknown][] = [
    ['Id', n.id],
    ['Kind', d.kind],
    ['Completed', d.completedAt ? new Date(d.completedAt).toLocaleString() : undefined],
    ['Created', n.createdAt ? new Date(n.createdAt).toLocaleString() : undefined],
    ['Claimed by', n.claim ? `${n.claim.agent} until ${new Date(n.claim.expiresAt).toLocaleTimeString()}` : undefined],
  ]
  return [
    path.length
      ? el(
          'ol',
          { class: 'path', 'aria-label': 'path' },
          path.map((p) => el('li', {}, goTo(ui, p, 'crumb'))),
        )
      : null,
    el('div', { class: 'panel-head' }, badge(n), ...chips(n)),
    el('h2', { id: 'panel-label', text: d.label ?? '' }),
    presenceLines(ui.presence.on(n.id), fieldLabel),
    el(
      'div',
      { class: 'actions', role: 'toolbar', 'aria-label': 'Actions' },
      work
        ? el(
            'button',
            { type: 'button', id: 'act-done', 'aria-keyshortcuts': 'X', onclick: () => void toggleDone(ui, n) },
            d.status === 'done' ? 'Reopen' : 'Mark done',
            keyHint('x'),
          )
        : null,
      child
        ? el(
            'button',
            { type: 'button', id: 'act-add-child', 'aria-keyshortcuts': 'A', onclick: () => startAdd(ui, n, false) },
            `Add ${TYPE_NAMES[child].toLowerCase()}`,
            keyHint('a'),
          )
        : null,
      el(
        'button',
        { type: 'button', id: 'act-add-sibling', 'aria-keyshortcuts': 'Shift+A', onclick: () => startAdd(ui, n, true) },
        `Add ${TYPE_NAMES[n.type].toLowerCase()} beside`,
        keyHint('Shift+A'),
      ),
      el(
        'button',
        { type: 'button', id: 'act-delete', class: 'danger', 'aria-keyshortcuts': 'Delete', onclick: () => void remove(ui, n) },
        'Delete',
        keyHint('Del'),
      ),
    ),
    ui.errors.has(n.id) ? el('p', { class: 'field-error', role: 'alert', text: ui.errors.get(n.id) }) : null,
    total && n.type !== 'job' ? el('p', { class: 'progress-line', text: `${done} of ${plural(total, 'job')} done` }) : null,
    el(
      'form',
      { class: 'editor', 'aria-label': `Edit ${TYPE_NAMES[n.type].toLowerCase()}`, onsubmit: (e: Event) => e.preventDefault() },
      editorFields(ui, n),
    ),
    el(
      'dl',
      { class: 'facts' },
      facts
        .filter(([, v]) => v !== undefined && v !== null && v !== '')
        .flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: String(v) })]),
    ),
    historySection(ui, n.id),
    kids.length
      ? el(
          'div',
          { class: 'kids' },
          el('h4', { text: `${kids.length} ${CHILD_NAMES[n.type] ?? 'item'}${kids.length === 1 ? '' : 's'}` }),
          el(
            'ul',
            {},
            kids.map((k) => el('li', {}, goTo(ui, k, 'kid', ...chips(k)))),
          ),
        )
      : null,
  ]
}

function overview(ui: Ui): (HTMLElement | null)[] {
  const count = (t: PlanNode['type']) => ui.plan.ofType(t).length
  const jobs = ui.plan.ofType('job')
  const done = jobs.filter((j) => j.data.status === 'done').length
  const current = ui.plan.current()
  return [
    el('p', { class: 'empty', text: ui.plan.nodes.size ? 'Select a node to see and edit its details.' : 'Nothing planned yet.' }),
    // an empty plan's one "Add a goal" is the tree's own (tree.ts)
    ui.plan.nodes.size === 0
      ? null
      : el(
          'div',
          { class: 'actions' },
          el('button', { type: 'button', text: 'Add a goal', onclick: () => startAddOf(ui, 'goal', null) }),
          el('button', { type: 'button', text: 'Add a task', onclick: () => startAddOf(ui, 'task', null) }),
        ),
    el(
      'dl',
      { class: 'facts overview' },
      (['goal', 'need', 'approach', 'job', 'task'] as const).flatMap((t) => [
        el('dt', { text: `${TYPE_NAMES[t]}s` }),
        el('dd', { text: String(count(t)) }),
      ]),
      el('dt', { text: 'Jobs done' }),
      el('dd', { text: jobs.length ? `${done} of ${jobs.length}` : '—' }),
      el('dt', { text: 'Current iteration' }),
      el('dd', { text: current ?? '—' }),
    ),
  ]
}
