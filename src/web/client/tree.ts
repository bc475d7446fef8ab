import { badge, chips, summary } from './chips.ts'
import type { Edit, Ui } from './ctx.ts'
import { el, plural } from './dom.ts'
import { type NodeType, type PlanNode, TYPE_NAMES } from './model.ts'
import { presenceChips } from './presence.ts'

/**
 * The tree view, a WAI-ARIA tree: goals → needs → bets → jobs, then tasks, each a treeitem with
 * its level, open state and selection; one tab stop (the selected item, or the first), the rest
 * reached with the keys of keyboard.ts. A label being edited is an input in its row.
 */
export function renderTree(ui: Ui, hooks: TreeHooks): HTMLElement {
  const goals = ui.view.visibleGoals()
  const tasks = ui.plan.ofType('task')
  const draft = ui.edit && ui.edit.id === null && ui.edit.parentId === null ? ui.edit : null
  const items: HTMLElement[] = [
    ...goals.map((g) => node(ui, hooks, g, 1)),
    draft?.type === 'goal' ? draftItem(ui, hooks, draft, 1) : null,
    ...tasks.map((t, i) => node(ui, hooks, t, 1, i === 0)),
    draft?.type === 'task' ? draftItem(ui, hooks, draft, 1) : null,
  ].filter((x): x is HTMLElement => x !== null)
  const tree = el('ul', { id: 'tree', role: 'tree', class: 'tree', 'aria-label': 'Plan' }, items)
  const stop =
    tree.querySelector<HTMLElement>(`[data-id="${CSS.escape(ui.view.selected ?? '')}"]`) ??
    tree.querySelector<HTMLElement>('[role=treeitem]')
  stop?.setAttribute('tabindex', '0')
  return el(
    'div',
    { id: 'tree-view', class: 'tree-view' },
    focusNote(ui),
    items.length
      ? tree
      : el(
          'div',
          { class: 'empty-state' },
          el('h2', { text: 'Start with a goal' }),
          el('p', {
            text: 'A goal is an outcome your team wants. Needs, bets and jobs go beneath it (a bet is what the API calls an approach).',
          }),
          el('button', {
            type: 'button',
            class: 'primary',
            id: 'empty-add-goal',
            text: 'Add a goal',
            onclick: () => hooks.add('goal', null),
          }),
        ),
  )
}

export interface TreeHooks {
  add: (type: NodeType, parentId: string | null) => void
  toggle: (id: string) => void
  open: (id: string) => void
}

/**
 * Redraw the rows of these nodes in place (a live change of their data only): the tree, its focus
 * and its open parts stay as they are. False when a row is not there to patch.
 */
export function patchRows(ui: Ui, hooks: TreeHooks, ids: Set<string>): boolean {
  const tree = document.querySelector('#tree')
  if (!tree) return false
  for (const id of ids) {
    const li = tree.querySelector<HTMLElement>(`[role=treeitem][data-id="${CSS.escape(id)}"]`)
    const n = ui.plan.nodes.get(id)
    if (!li) continue // not in sight: drawn when it is opened
    if (!n) return false
    const fresh = node(ui, hooks, n, Number(li.getAttribute('aria-level')), li.classList.contains('first-task'), true)
    li.className = fresh.className
    li.setAttribute('aria-label', fresh.getAttribute('aria-label') ?? '')
    for (const old of li.querySelectorAll(':scope > .row, :scope > .field-error')) old.remove()
    li.prepend(...[...fresh.children].filter((x) => !x.matches('[role=group]')))
  }
  return true
}

function node(ui: Ui, hooks: TreeHooks, n: PlanNode, level: number, firstTask = false, shallow = false): HTMLElement {
  const kids = ui.plan.kids(n.id)
  const draft = ui.edit && ui.edit.id === null && ui.edit.parentId === n.id ? ui.edit : null
  const open = ui.view.expanded.has(n.id) || !!draft
  const selected = ui.view.selected === n.id
  const editing = ui.edit?.id === n.id ? ui.edit : null
  const mark = (ui.marks.get(n.id) ?? 0) > Date.now()
  const li = el(
    'li',
    {
      role: 'treeitem',
      class: `node ${n.type}${selected ? ' selected' : ''}${n.data.status === 'done' ? ' is-done' : ''}${mark ? ' changed' : ''}${firstTask ? ' first-task' : ''}`,
      'data-id': n.id,
      'aria-level': level,
      'aria-expanded': kids.length || draft ? String(open) : null,
      'aria-selected': String(selected),
      'aria-label': `${n.data.label} (${badge(n).textContent})`,
      tabindex: -1,
    },
    el(
      'div',
      { class: 'row', onclick: () => hooks.open(n.id) },
      el('span', {
        class: `toggle${kids.length ? '' : ' leaf'}`,
        'aria-hidden': 'true',
        onclick: (e: Event) => {
          e.stopPropagation()
          if (kids.length) hooks.toggle(n.id)
        },
      }),
      badge(n),
      editing ? labelInput(editing, n.data.label) : el('span', { class: 'label', text: n.data.label ?? '' }),
      ...chips(n),
      presenceChips(ui.presence.on(n.id)),
      n.type !== 'task' && n.type !== 'job' ? summary(ui, n, open) : null,
      n.data.iteration ? el('span', { class: 'iter', text: n.data.iteration }) : null,
      mark ? el('span', { class: 'chip elsewhere', text: 'changed elsewhere' }) : null,
    ),
    editing ? editNotes(editing, n.data.label) : null,
    ui.errors.has(n.id) ? el('p', { class: 'field-error', role: 'alert', text: ui.errors.get(n.id) }) : null,
  )
  if (open && !shallow && (kids.length || draft))
    li.append(
      el(
        'ul',
        { role: 'group' },
        kids.map((k) => node(ui, hooks, k, level + 1)),
        draft ? draftItem(ui, hooks, draft, level + 1) : null,
      ),
    )
  return li
}

function draftItem(_ui: Ui, _hooks: TreeHooks, e: Edit, level: number): HTMLElement {
  return el(
    'li',
    { role: 'treeitem', class: `node ${e.type} draft`, 'aria-level': level, 'aria-selected': 'true', tabindex: -1 },
    el('div', { class: 'row' }, el('span', { class: 'toggle leaf', 'aria-hidden': 'true' }), badge(e), labelInput(e, '')),
    editNotes(e, ''),
  )
}

function labelInput(e: Edit, _current: string): HTMLInputElement {
  const input = el('input', {
    id: 'edit-label',
    class: 'edit-label',
    type: 'text',
    value: e.value,
    'aria-label': e.id
      ? 'Label (Enter saves, Escape cancels)'
      : `New ${TYPE_NAMES[e.type].toLowerCase()}'s label (Enter saves, Escape cancels)`,
    'aria-invalid': e.error ? 'true' : null,
    'aria-describedby': e.error ? 'edit-error' : null,
    autocomplete: 'off',
    maxlength: 500,
    placeholder: e.id ? '' : `Name the new ${TYPE_NAMES[e.type].toLowerCase()}`,
  })
  input.addEventListener('input', () => {
    e.value = input.value
  })
  return input
}

/** Under the input: the API's refusal, or a change someone else made to this label meanwhile. */
function editNotes(e: Edit, current: string): HTMLElement | null {
  const error = e.error ? el('p', { id: 'edit-error', class: 'field-error', role: 'alert', text: e.error }) : null
  const conflict =
    e.id && current !== e.original
      ? el(
          'p',
          { class: 'conflict', role: 'status' },
          `Changed elsewhere to “${current}”. `,
          el('button', { type: 'button', 'data-conflict': 'theirs', text: 'Use theirs' }),
          el('button', { type: 'button', 'data-conflict': 'mine', text: 'Keep mine' }),
        )
      : null
  return error || conflict ? el('div', { class: 'edit-notes' }, error, conflict) : null
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
