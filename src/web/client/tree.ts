import { badge, chips, summary, type Ui } from './chips.ts'
import { el, plural } from './dom.ts'
import type { PlanNode } from './model.ts'

/** The tree view: goals → needs → bets → jobs, each level opened and closed on its own; tasks below. */
export function renderTree(ui: Ui): HTMLElement {
  const goals = ui.view.visibleGoals()
  const tasks = ui.plan.ofType('task')
  return el(
    'div',
    { id: 'tree-view', class: 'tree-view' },
    focusNote(ui),
    goals.length
      ? el(
          'ul',
          { class: 'tree' },
          goals.map((g) => node(ui, g)),
        )
      : el('p', { class: 'empty', text: 'No goals yet. Add one with POST /api/v1/mutate, and it appears here.' }),
    tasks.length
      ? [
          el('h3', { class: 'section', text: `Tasks · ${tasks.length}` }),
          el(
            'ul',
            { class: 'tree' },
            tasks.map((t) => node(ui, t)),
          ),
        ]
      : null,
  )
}

function node(ui: Ui, n: PlanNode): HTMLElement {
  const kids = ui.plan.kids(n.id)
  const open = ui.view.expanded.has(n.id)
  const li = el(
    'li',
    {
      class: `node ${n.type}${ui.view.selected === n.id ? ' selected' : ''}`,
      'data-id': n.id,
      'aria-expanded': kids.length ? String(open) : null,
    },
    el(
      'div',
      { class: 'row', onclick: () => ui.act({ type: 'selectNode', nodeId: n.id }) },
      el('button', {
        type: 'button',
        class: `toggle${kids.length ? '' : ' leaf'}`,
        'aria-label': kids.length ? (open ? 'collapse' : 'expand') : null,
        disabled: !kids.length,
        onclick: (e: Event) => {
          e.stopPropagation()
          ui.act({ type: open ? 'collapseNode' : 'expandNode', nodeId: n.id })
        },
      }),
      badge(n),
      el('span', { class: 'label', text: n.data.label ?? '' }),
      ...chips(n),
      n.type !== 'task' && n.type !== 'job' ? summary(ui, n, open) : null,
      n.data.iteration ? el('span', { class: 'iter', text: n.data.iteration }) : null,
    ),
  )
  if (open && kids.length)
    li.append(
      el(
        'ul',
        {},
        kids.map((k) => node(ui, k)),
      ),
    )
  return li
}

export function focusNote(ui: Ui): HTMLElement | null {
  const n = ui.view.focused.length
  if (!n) return null
  const total = ui.plan.ofType('goal').length
  return el(
    'p',
    { class: 'focus-note' },
    el('span', { text: `Focused on ${plural(n, 'goal')} of ${total}` }),
    el('button', { type: 'button', text: 'Show all goals', onclick: () => ui.act({ type: 'focusGoals', goalIds: [] }) }),
  )
}
