import { badge, chips, type Ui } from './chips.ts'
import { el } from './dom.ts'
import { type PlanNode, TYPE_NAMES } from './model.ts'
import { focusNote } from './tree.ts'

/**
 * The matrix view: iterations across (active ones in display order), goals down, each job in
 * the cell of its goal and its iteration; standalone tasks get their own row.
 */
export function renderMatrix(ui: Ui): HTMLElement {
  const { plan, view } = ui
  const cols = plan.columns(view.iteration)
  const current = plan.current()
  const items = [...plan.nodes.values()].filter((n) => n.type === 'job' || n.type === 'task')
  const inCell = (n: PlanNode, col: string) => (n.data.iteration ?? 'Later') === col
  const rows: { id: string | null; node?: PlanNode }[] = [...view.visibleGoals().map((g) => ({ id: g.id, node: g })), { id: null }]
  const head = el(
    'tr',
    {},
    el('th', { class: 'corner', text: 'Goals' }),
    cols.map((c) => {
      const count = items.filter((n) => inCell(n, c.name)).length
      return el(
        'th',
        {
          class: [view.iteration === c.name ? 'picked' : '', c.status === 'done' ? 'done' : ''].filter(Boolean).join(' ') || null,
          'data-iteration': c.name,
          title: 'Select this iteration',
          onclick: () => ui.act({ type: 'selectIteration', iterationName: c.name }),
        },
        el('span', { class: 'iter-name', text: c.name }),
        c.name === current ? el('span', { class: 'tag now', text: 'current' }) : null,
        c.status === 'done' ? el('span', { class: 'tag', text: 'done' }) : null,
        el('span', { class: 'iter-count', text: String(count) }),
      )
    }),
  )
  const body = rows.map((r) =>
    el(
      'tr',
      { 'data-row': r.id ?? 'tasks', class: r.node && view.selected === r.id ? 'selected' : null },
      el(
        'th',
        {
          class: 'row-head',
          'data-id': r.id,
          onclick: r.id ? () => ui.act({ type: 'selectNode', nodeId: r.id! }) : null,
        },
        // the label sticks below the iterations while a tall row scrolls by, so its goal stays in sight
        el(
          'div',
          { class: 'row-head-label' },
          r.node ? [badge(r.node), el('span', { class: 'label', text: r.node.data.label })] : el('span', { class: 'label', text: 'Tasks' }),
        ),
      ),
      cols.map((c) => {
        const here = items.filter(
          (n) => inCell(n, c.name) && (r.id === null ? n.type === 'task' : n.type === 'job' && plan.goalOf(n.id) === r.id),
        )
        return el(
          'td',
          { class: view.iteration === c.name ? 'picked' : null, 'data-label': c.name },
          cell(ui, `${r.id ?? 'tasks'}|${c.name}`, here),
        )
      }),
    ),
  )
  const view_ = el(
    'div',
    { id: 'matrix-view', class: 'matrix-view', role: 'region', 'aria-label': 'Matrix: arrow keys move between cards, Enter opens one' },
    focusNote(ui),
    editBar(ui),
    cols.length
      ? el('div', { class: 'matrix-scroll' }, el('table', { class: 'matrix' }, el('thead', {}, head), el('tbody', {}, body)))
      : el('p', { class: 'empty', text: 'No active iterations.' }),
  )
  // one tab stop: the selected card, or the first
  const stop =
    view_.querySelector<HTMLElement>(`.card[data-id="${CSS.escape(view.selected ?? '')}"]`) ?? view_.querySelector<HTMLElement>('.card')
  stop?.setAttribute('tabindex', '0')
  return view_
}

/** Cards a cell shows before it folds the rest behind "+ N more". */
export const FOLD_AT = 20

/**
 * A cell's cards: past FOLD_AT the rest fold behind a button ("+ 280 more", a real button, so Tab
 * and Enter open it), unless the cell was opened or holds the selected card.
 */
function cell(ui: Ui, key: string, here: PlanNode[]): (HTMLElement | null)[] {
  if (here.length <= FOLD_AT) return here.map((n) => card(ui, n))
  const selectedAt = here.findIndex((n) => n.id === ui.view.selected)
  const open = ui.unfolded.has(key) || selectedAt >= FOLD_AT
  const shown = open ? here : here.slice(0, FOLD_AT)
  const toggle = (to: boolean, focusId?: string) => () => {
    if (to) ui.unfolded.add(key)
    else ui.unfolded.delete(key)
    if (focusId) ui.view.selected = focusId
    ui.render()
    if (focusId) ui.select(focusId)
  }
  return [
    ...shown.map((n) => card(ui, n)),
    open
      ? el('button', {
          type: 'button',
          class: 'fold',
          'aria-expanded': 'true',
          text: `Show the first ${FOLD_AT} only`,
          onclick: toggle(false),
        })
      : el('button', {
          type: 'button',
          class: 'fold',
          'aria-expanded': 'false',
          'aria-label': `${here.length - FOLD_AT} more cards in this cell: show them`,
          text: `+ ${here.length - FOLD_AT} more`,
          onclick: toggle(true, here[FOLD_AT]!.id),
        }),
  ]
}

/** In the matrix a label is edited (or a new job or task named) in a bar above the grid. */
function editBar(ui: Ui): HTMLElement | null {
  const e = ui.edit
  if (!e) return null
  const parent = e.parentId ? ui.plan.nodes.get(e.parentId) : undefined
  const what = e.id ? 'Rename' : `New ${TYPE_NAMES[e.type].toLowerCase()}${parent ? ` under “${parent.data.label}”` : ''}`
  const input = el('input', {
    id: 'edit-label',
    class: 'edit-label',
    type: 'text',
    value: e.value,
    'aria-label': `${what} (Enter saves, Escape cancels)`,
    autocomplete: 'off',
  })
  input.addEventListener('input', () => {
    e.value = input.value
  })
  return el(
    'div',
    { class: 'edit-bar' },
    el('label', { for: 'edit-label', text: what }),
    input,
    e.error ? el('p', { id: 'edit-error', class: 'field-error', role: 'alert', text: e.error }) : null,
  )
}

function card(ui: Ui, n: PlanNode): HTMLElement {
  const parent = n.parentId ? ui.plan.nodes.get(n.parentId) : undefined
  return el(
    'div',
    {
      class: `card ${n.type}${n.data.status === 'done' ? ' is-done' : ''}${ui.view.selected === n.id ? ' selected' : ''}${(ui.marks.get(n.id) ?? 0) > Date.now() ? ' changed' : ''}`,
      'data-id': n.id,
      'data-card': '',
      role: 'button',
      'aria-pressed': String(ui.view.selected === n.id),
      tabindex: -1,
      onclick: () => ui.select(n.id),
    },
    el('div', { class: 'label', text: n.data.label ?? '' }),
    parent ? el('div', { class: 'via', text: parent.data.label }) : null,
    el(
      'div',
      { class: 'meta' },
      badge(n),
      ...chips(n),
      (ui.marks.get(n.id) ?? 0) > Date.now() ? el('span', { class: 'chip elsewhere', text: 'changed elsewhere' }) : null,
    ),
    ui.errors.has(n.id) ? el('p', { class: 'field-error', role: 'alert', text: ui.errors.get(n.id) }) : null,
  )
}
