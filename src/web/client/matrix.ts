import { badge, chips, type Ui } from './chips.ts'
import { el } from './dom.ts'
import type { PlanNode } from './model.ts'
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
        r.node ? [badge(r.node), el('span', { class: 'label', text: r.node.data.label })] : el('span', { class: 'label', text: 'Tasks' }),
      ),
      cols.map((c) => {
        const here = items.filter(
          (n) => inCell(n, c.name) && (r.id === null ? n.type === 'task' : n.type === 'job' && plan.goalOf(n.id) === r.id),
        )
        return el(
          'td',
          { class: view.iteration === c.name ? 'picked' : null },
          here.map((n) => card(ui, n)),
        )
      }),
    ),
  )
  return el(
    'div',
    { id: 'matrix-view', class: 'matrix-view' },
    focusNote(ui),
    cols.length
      ? el('div', { class: 'matrix-scroll' }, el('table', { class: 'matrix' }, el('thead', {}, head), el('tbody', {}, body)))
      : el('p', { class: 'empty', text: 'No active iterations.' }),
  )
}

function card(ui: Ui, n: PlanNode): HTMLElement {
  const parent = n.parentId ? ui.plan.nodes.get(n.parentId) : undefined
  return el(
    'div',
    {
      class: `card ${n.type}${n.data.status === 'done' ? ' is-done' : ''}${ui.view.selected === n.id ? ' selected' : ''}`,
      'data-id': n.id,
      tabindex: 0,
      onclick: () => ui.act({ type: 'selectNode', nodeId: n.id, switchTo: undefined }),
    },
    el('div', { class: 'label', text: n.data.label ?? '' }),
    parent ? el('div', { class: 'via', text: parent.data.label }) : null,
    el('div', { class: 'meta' }, badge(n), ...chips(n)),
  )
}
