import type { FieldName } from '../../ports/node-data'
import { mayEdit, update } from './actions.ts'
import type { Ui } from './ctx.ts'
import { el } from './dom.ts'
import { type NodeType, PARENT_TYPE, type PlanNode, TYPE_NAMES } from './model.ts'

/**
 * The details panel's form: every field of the node's type, each saved on its own (Enter, a
 * choice, or leaving the field) as one update. What a person typed is kept across live redraws;
 * when someone else changes that field meanwhile, the form says so and lets them choose.
 */
type Kind = 'text' | 'area' | 'select' | 'check' | 'ids' | 'refs' | 'demand'
interface Field {
  name: FieldName
  label: string
  kind: Kind
  on: NodeType[]
  options?: string[]
  hint?: string
}

const ALL: NodeType[] = ['goal', 'need', 'approach', 'job', 'task']
const FIELDS = [
  { name: 'label', label: 'Label', kind: 'text', on: ALL },
  { name: 'description', label: 'Description', kind: 'area', on: ALL },
  { name: 'goalStatus', label: 'Goal status', kind: 'select', on: ['goal'], options: ['', 'focus', 'later', 'done'] },
  { name: 'iteration', label: 'Iteration', kind: 'select', on: ['job', 'task'] },
  { name: 'status', label: 'Done', kind: 'check', on: ['job', 'task'] },
  { name: 'maturity', label: 'Maturity', kind: 'select', on: ['job'], options: ['', 'mvp', 'releasable'] },
  {
    name: 'approachStatus',
    label: 'Bet status',
    kind: 'select',
    on: ['approach'],
    options: ['', 'development', 'validation', 'resolved', 'retired'],
  },
  { name: 'size', label: 'Size', kind: 'select', on: ['approach'], options: ['', 'skateboard', 'vespa', 'car', 'truck', 'antonov'] },
  { name: 'kano', label: 'Kano', kind: 'select', on: ['approach'], options: ['', 'must-have', 'incremental', 'delighter'] },
  { name: 'measure', label: 'Measure', kind: 'text', on: ['approach'] },
  { name: 'blockedBy', label: 'Blocked by', kind: 'ids', on: ['approach'], hint: 'ids of bets, separated by commas' },
  { name: 'serves', label: 'Also serves', kind: 'ids', on: ['approach'], hint: 'ids of needs (at most 5), separated by commas' },
  { name: 'urgent', label: 'Urgent', kind: 'check', on: ['task'] },
  { name: 'notes', label: 'Notes', kind: 'area', on: ['approach', 'job'] },
  { name: 'demand', label: 'Demand', kind: 'demand', on: ['need'], hint: 'one per line: who | date (YYYY-MM-DD) | ask' },
  { name: 'externalRefs', label: 'Links', kind: 'refs', on: ALL, hint: 'one per line: system key https://…' },
] satisfies Field[]
/** Every node field has a control here, but those the service sets (a new field fails to compile until it has one). */
const everyField: Exclude<FieldName, (typeof FIELDS)[number]['name'] | 'kind' | 'completedAt'> extends never ? true : never = true
void everyField

/** A field's value as the text of its control. */
/** One entry of a node's externalRefs or demand, as stored (src/ports/node-data.ts); read loosely. */
type Entry = Record<string, unknown>

function toText(f: Field, v: unknown): string {
  if (f.kind === 'check') return f.name === 'status' ? String(v === 'done') : String(!!v)
  if (f.kind === 'ids') return Array.isArray(v) ? v.join(', ') : ''
  if (f.kind === 'refs') return Array.isArray(v) ? v.map((r: Entry) => `${r.system} ${r.key} ${r.url}`).join('\n') : ''
  if (f.kind === 'demand')
    return Array.isArray(v) ? v.map((d: Entry) => [d.who, d.at, d.ask].filter((x) => x !== undefined).join(' | ')).join('\n') : ''
  return v === undefined || v === null ? '' : String(v)
}

/** The control's text as the value to send; '' clears the field. */
function fromText(f: Field, text: string, old: unknown): unknown {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
  if (f.kind === 'check') return f.name === 'status' ? (text === 'true' ? 'done' : null) : text === 'true'
  if (f.kind === 'ids') return text.split(/[\s,]+/).filter(Boolean)
  if (f.kind === 'refs')
    return lines.map((l) => {
      const [system = '', key = '', ...rest] = l.split(/\s+/)
      return { system, key, url: rest.join(' ') }
    })
  if (f.kind === 'demand')
    return lines.map((l, i) => {
      const [who = '', at = '', ask] = l.split('|').map((x) => x.trim())
      return { ...(Array.isArray(old) ? old[i] : {}), who, at, ...(ask ? { ask } : {}) }
    })
  return text.trim() === '' ? null : text
}

export function editorFields(ui: Ui, n: PlanNode): HTMLElement[] {
  const fields = (FIELDS as Field[]).filter(
    (f) => f.on.includes(n.type) && (f.name !== 'urgent' || n.data.kind === 'do-it' || n.data.urgent),
  )
  return [parentField(ui, n), ...fields.map((f) => field(ui, n, f))].filter((x): x is HTMLElement => x !== null)
}

function field(ui: Ui, n: PlanNode, f: Field): HTMLElement {
  const key = `${n.id}:${f.name}`
  const current = toText(f, n.data[f.name])
  const draft = ui.drafts.get(key)
  const id = `f-${f.name}`
  const keep = (value: string) => ui.drafts.set(key, { value, original: ui.drafts.get(key)?.original ?? current })
  const save = async () => {
    const d = ui.drafts.get(key)
    const now = ui.plan.nodes.get(n.id)
    // one save of a field at a time: Ctrl+Enter, then the blur of the redrawn field, would send the
    // same text twice on the same rev, and the second would meet the first as a change made since
    if (!d || !now || ui.saving.has(key)) return
    const nowText = toText(f, now.data[f.name])
    if (d.original !== nowText) return // changed elsewhere: the note under the field asks the person to choose first
    if (d.value === nowText) {
      ui.drafts.delete(key)
      return
    }
    ui.saving.add(key)
    try {
      if (await update(ui, n.id, { [f.name]: fromText(f, d.value, now.data[f.name]) }, undefined, key)) {
        // what was typed while it was on its way stays a draft, saved by the next Enter or blur
        if (ui.drafts.get(key)?.value === d.value) ui.drafts.delete(key)
        else ui.drafts.set(key, { value: ui.drafts.get(key)?.value ?? d.value, original: d.value })
        ui.stale.delete(key)
      }
    } finally {
      ui.saving.delete(key)
    }
    ui.render()
  }
  let control: HTMLElement
  const value = draft?.value ?? current
  /** the person may change it: nobody else edits it, or they chose to go ahead */
  const allowed = () => mayEdit(ui, n.id, f.name, f.label)
  if (f.kind === 'select') {
    const options = f.name === 'iteration' ? iterationOptions(ui, value) : f.options!
    control = el(
      'select',
      { id, name: f.name },
      options.map((o) => el('option', { value: o, text: o || '—', selected: o === value })),
    )
    control.addEventListener('change', () => {
      if (!allowed()) return ui.render()
      keep((control as HTMLSelectElement).value)
      void save()
    })
  } else if (f.kind === 'check') {
    control = el('input', { id, name: f.name, type: 'checkbox', checked: value === 'true' })
    control.addEventListener('change', () => {
      if (!allowed()) return ui.render()
      keep(String((control as HTMLInputElement).checked))
      void save()
    })
  } else {
    const area = f.kind === 'area' || f.kind === 'refs' || f.kind === 'demand'
    control = area
      ? el('textarea', { id, name: f.name, rows: f.kind === 'area' ? 3 : 2 })
      : el('input', { id, name: f.name, type: 'text', autocomplete: 'off' })
    ;(control as HTMLInputElement).value = value
    // asked once, when the person starts typing in a field someone else is editing
    control.addEventListener('keydown', (e) => {
      if (!e.key.startsWith('Arrow') && e.key !== 'Tab' && e.key !== 'Escape' && !allowed()) {
        // declined: the field is left (its edit intent ends with it), the focus back on the item,
        // not on the page's <body>
        e.preventDefault()
        ui.select(n.id)
      }
    })
    control.addEventListener('input', () => keep((control as HTMLInputElement).value))
    control.addEventListener('blur', () => void save()) // not 'change': a field redrawn by a live update keeps the typing but would not fire it
    control.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (!area || e.ctrlKey || e.metaKey)) {
        e.preventDefault()
        void save()
      } else if (e.key === 'Escape' && ui.drafts.has(key)) {
        e.stopPropagation()
        ui.drafts.delete(key)
        ui.render()
      }
    })
  }
  const error = ui.errors.get(key)
  if (error) control.setAttribute('aria-invalid', 'true')
  // the server refused the save as stale (who changed it, when, both values), or a live change arrived while typing
  const stale = ui.stale.get(key)
  const changedElsewhere = draft && (draft.original !== current || stale)
  return el(
    'div',
    { class: `field f-${f.kind}` },
    f.kind === 'check' ? el('label', { class: 'check' }, control, ` ${f.label}`) : [el('label', { for: id, text: f.label }), control],
    f.hint ? el('small', { class: 'hint', text: f.hint }) : null,
    editingNote(ui, n.id, f.name),
    changedElsewhere
      ? el(
          'p',
          { class: 'conflict', role: 'status' },
          stale ? `Not saved: ${stale} ` : `Changed elsewhere to “${current || '(empty)'}” while you typed. `,
          el('button', {
            type: 'button',
            text: 'Use theirs',
            onclick: () => {
              ui.drafts.delete(key)
              ui.stale.delete(key)
              ui.render()
            },
          }),
          el('button', {
            type: 'button',
            text: 'Keep mine',
            onclick: () => {
              ui.drafts.set(key, { value: draft.value, original: current })
              void save()
            },
          }),
        )
      : null,
    error ? el('p', { class: 'field-error', role: 'alert', text: error }) : null,
  )
}

function iterationOptions(ui: Ui, value: string): string[] {
  const names = ui.plan.iterations.filter((i) => i.status === 'active' || i.name === value).map((i) => i.name)
  return names.includes(value) || !value ? names : [value, ...names]
}

/** Move: the node's parent, among the nodes of the type its type needs. */
function parentField(ui: Ui, n: PlanNode): HTMLElement | null {
  const type = PARENT_TYPE[n.type]
  if (!type) return null
  const key = `${n.id}:parentId`
  const select = el(
    'select',
    { id: 'f-parent', name: 'parentId' },
    ui.plan.ofType(type).map((p) => el('option', { value: p.id, text: `${p.data.label} (${p.id})`, selected: p.id === n.parentId })),
  )
  select.addEventListener('change', () => {
    if (!mayEdit(ui, n.id, 'parentId', 'the parent')) return ui.render()
    void update(ui, n.id, {}, select.value, key)
  })
  const error = ui.errors.get(key)
  return el(
    'div',
    { class: 'field' },
    el('label', { for: 'f-parent', text: `Move to another ${TYPE_NAMES[type].toLowerCase()}` }),
    select,
    editingNote(ui, n.id, 'parentId'),
    error ? el('p', { class: 'field-error', role: 'alert', text: error }) : null,
  )
}

/** A field's label as the form shows it (the details panel says who edits which). */
export const fieldLabel = (name: string) =>
  (FIELDS as Field[]).find((f) => f.name === name)?.label ?? (name === 'parentId' ? 'Parent' : name)

/** “Ada is editing this field”, under a field someone else has open (live.md, 4). */
function editingNote(ui: Ui, id: string, field: string): HTMLElement | null {
  const by = ui.presence.editing(id, field)
  if (!by) return null
  const who = by.actor.agent ? `${by.actor.agent} (agent)` : by.actor.userName
  return el('p', {
    class: 'editing-by',
    role: 'status',
    text: `${who} is editing this field${ui.forced.has(`${id}:${field}`) ? ' — you chose to edit it too' : ''}.`,
  })
}
