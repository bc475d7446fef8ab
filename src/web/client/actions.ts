import { api, describe, mutate, q, Refused } from './api.ts'
import type { Ui, Undo } from './ctx.ts'
import { CHILD_TYPE, type NodeType, type PlanNode } from './model.ts'
import { askStale, resend, conflictWords as staleWords, takeStale } from './stale.ts'

/**
 * Every change a person makes: one POST /mutate each (with its Idempotency-Key), the answer put
 * into the plan at once, a refusal kept beside the node it was about (ui.errors).
 */
const touch = (ui: Ui, id: string) => ui.mine.set(id, Date.now())

/** What POST /mutate answers to the page's writes: the node an add or update wrote, the changes it recorded. */
interface Written {
  node: PlanNode
  changeIds?: string[]
}

/** Keep one write of this page for Ctrl+Z (a write that recorded no change has nothing to take back). */
function remember(ui: Ui, res: Written, undo: Omit<Undo, 'changeIds'>) {
  if (res.changeIds?.length) ui.undo.push({ ...undo, changeIds: res.changeIds })
}

/**
 * One write of this page; its edits carry the rev they were based on (ifRev, live.md 1). A stale
 * one (409 stale_write) is never sent over someone else's change unasked: a field of the details
 * form keeps what was typed and says who changed it (editor.ts); anything else asks in a dialog,
 * and `kept` applies the answer when the person keeps theirs.
 */
async function write(
  ui: Ui,
  id: string | null,
  body: Record<string, unknown>,
  errorKey = id,
  kept?: (res: Written) => void,
): Promise<Written | null> {
  if (errorKey) ui.errors.delete(errorKey)
  if (errorKey) ui.stale.delete(errorKey)
  try {
    const res = await mutate<Written>({ projectId: ui.projectId, ...body })
    if (id) touch(ui, id)
    return res
  } catch (err) {
    const stale = takeStale(ui, err)
    if (stale) {
      if (errorKey && ui.drafts.has(errorKey)) ui.stale.set(errorKey, stale.map((c) => staleWords(ui, c)).join(' '))
      else
        askStale(ui, stale, async () => {
          const res = await resend<Written>(ui, body)
          if (id) touch(ui, id)
          kept?.(res)
          ui.render()
        })
      ui.render()
      return null
    }
    if (errorKey) ui.errors.set(errorKey, describe(err))
    else ui.say(describe(err))
    ui.render()
    return null
  }
}

/** Start a new node's label in place: a child of the next type, or (Shift+A, or under a job) a sibling. */
export function startAdd(ui: Ui, from: PlanNode | null, sibling: boolean) {
  let type: NodeType
  let parentId: string | null
  if (!from) [type, parentId] = ['goal', null]
  else if (sibling || !CHILD_TYPE[from.type]) [type, parentId] = [from.type, from.parentId]
  else [type, parentId] = [CHILD_TYPE[from.type]!, from.id]
  startAddOf(ui, type, parentId)
}

export function startAddOf(ui: Ui, type: NodeType, parentId: string | null) {
  if (parentId) ui.view.expanded.add(parentId)
  ui.edit = { id: null, type, parentId, value: '', original: '' }
  ui.render()
}

export function startRename(ui: Ui, n: PlanNode) {
  if (!mayEdit(ui, n.id, 'label', 'Label')) return
  ui.edit = { id: n.id, type: n.type, parentId: n.parentId, value: n.data.label, original: n.data.label }
  ui.render()
}

/** Enter in the label input: add the new node, or rename. Empty or unchanged: nothing is sent. */
export async function saveEdit(ui: Ui) {
  const e = ui.edit
  if (!e) return
  const label = e.value.trim()
  if (!label) {
    e.error = 'A label is needed (Escape cancels).'
    return ui.render()
  }
  if (e.id) {
    const n = ui.plan.nodes.get(e.id)
    if (!n || label === n.data.label) {
      ui.edit = null
      return ui.render()
    }
  }
  const body = e.id
    ? { action: 'update', nodeId: e.id, data: { label }, ifRev: ui.plan.nodes.get(e.id)?.rev }
    : { action: 'add', node: { type: e.type, parentId: e.parentId, data: { label, ...iterationFor(ui, e.type) } } }
  let res: Written
  try {
    res = await mutate<Written>({ projectId: ui.projectId, ...body })
  } catch (err) {
    const stale = takeStale(ui, err)
    if (stale)
      // the label typed stays in its input until the person chooses
      return askStale(ui, stale, async () => {
        const kept = await resend<Written>(ui, body)
        touch(ui, kept.node.id)
        ui.plan.upsert(kept.node)
        if (ui.edit === e) ui.edit = null
      })
    e.error = describe(err)
    return ui.render()
  }
  if (e.id) {
    const was = ui.plan.nodes.get(e.id)?.data.label ?? e.original
    remember(ui, res, { nodes: [e.id], focus: e.id, what: `the rename of “${was}”`, done: `Renamed back to “${was}”.` })
  } else remember(ui, res, { nodes: [res.node.id], focus: null, what: `the new “${label}”`, done: `Removed the new “${label}”.` })
  if (ui.edit !== e) return // cancelled meanwhile; the live loop shows what was written
  touch(ui, res.node.id)
  ui.plan.upsert(res.node)
  ui.edit = null
  ui.view.selected = res.node.id
  ui.render()
}

/** A new job or task goes to the iteration the person is looking at, when it is an open one. */
function iterationFor(ui: Ui, type: NodeType): { iteration?: string } {
  if (type !== 'job' && type !== 'task') return {}
  const it = ui.plan.iterations.find((i) => i.name === ui.view.iteration)
  return it && it.status === 'active' ? { iteration: it.name } : {}
}

/** One update; a refusal is kept under `errorKey` (the node, or one field of the panel: `<id>:<field>`). */
export async function update(ui: Ui, id: string, data: Record<string, unknown>, parentId?: string, errorKey = id): Promise<boolean> {
  const label = ui.plan.nodes.get(id)?.data.label ?? id
  const ifRev = ui.plan.nodes.get(id)?.rev
  // a field someone else is editing, which the person chose to edit anyway (live.md, 4)
  const force = [...Object.keys(data), ...(parentId ? ['parentId'] : [])].some((f) => ui.forced.has(`${id}:${f}`))
  const res = await write(
    ui,
    id,
    { action: 'update', nodeId: id, data, ...(parentId ? { parentId } : {}), ifRev, ...(force ? { force: true } : {}) },
    errorKey,
    (kept) => ui.plan.upsert(kept.node),
  )
  if (!res) return false
  const fields = Object.keys(data)
  const [what, done] = parentId
    ? [`the move of “${label}”`, `Moved “${label}” back.`]
    : fields.length === 1 && fields[0] === 'status'
      ? data.status === 'done'
        ? [`marking “${label}” done`, `Reopened “${label}”.`]
        : [`reopening “${label}”`, `Marked “${label}” done again.`]
      : [
          `the change of “${label}”${fields.length === 1 ? ` (${fields[0]})` : ''}`,
          `Set “${label}” back${fields.length === 1 ? ` (${fields[0]})` : ''}.`,
        ]
  remember(ui, res, { nodes: [id], focus: id, what, done })
  ui.plan.upsert(res.node)
  if (parentId) ui.view.reveal(id) // moved: open its new parent, so it stays in sight
  ui.render()
  return true
}

export function toggleDone(ui: Ui, n: PlanNode) {
  if (n.type !== 'job' && n.type !== 'task') return ui.say('Only jobs and tasks are done or open.')
  return update(ui, n.id, { status: n.data.status === 'done' ? null : 'done' })
}

/**
 * Delete a node and what is beneath it in one batch, deepest first: every node gets its own
 * change, and the undo (a revert of those changes) brings each back with its id, parents first.
 */
export async function remove(ui: Ui, n: PlanNode) {
  const nodes = ui.plan.subtree(n.id)
  const order = [...nodes].reverse()
  const mutations = order.map((x) => ({ action: 'delete', nodeId: x.id, ifRev: x.rev }))
  const res = await write(ui, n.id, { action: 'batch', mutations }, n.id, () => ui.plan.drop(n.id))
  if (!res) return
  remember(ui, res, {
    nodes: nodes.map((x) => x.id),
    focus: n.id,
    what: `the delete of “${n.data.label}”`,
    done: `Restored “${n.data.label}”.`,
  })
  const next = neighbour(n, new Set(nodes.map((x) => x.id)))
  for (const x of nodes) touch(ui, x.id)
  ui.plan.drop(n.id)
  ui.view.selected = next
  ui.render()
  // nothing left to select: the focus stays in the plan (its empty state's button, or the tree), not on <body>
  if (!next && document.activeElement === document.body)
    document.querySelector<HTMLElement>('#canvas [tabindex="0"], #empty-add-goal, #canvas .card')?.focus()
  ui.say(`Deleted “${n.data.label}”${nodes.length > 1 ? ` and ${nodes.length - 1} beneath it` : ''}.`, () => void undoLast(ui))
}

/**
 * The item to select after a delete: the row shown after it (past what was beneath it), else the
 * one before it; with none left, null (the focus then goes to the tree's empty state).
 */
function neighbour(n: PlanNode, gone: Set<string>): string | null {
  const shown = [...document.querySelectorAll<HTMLElement>('#tree [role=treeitem][data-id], [data-card][data-id]')].map(
    (x) => x.dataset.id!,
  )
  const i = shown.indexOf(n.id)
  if (i < 0) return n.parentId && !gone.has(n.parentId) ? n.parentId : null
  return (
    shown.slice(i + 1).find((id) => !gone.has(id)) ??
    shown
      .slice(0, i)
      .reverse()
      .find((id) => !gone.has(id)) ??
    null
  )
}

/** A refusal of `revert` (history.md, 3): what stands in the way, one per change and field. */
interface Conflict {
  changeId: string
  target: { kind: string; id: string }
  field?: string
  laterChangeId: string | null
  reason: 'changed_later' | 'gone' | 'has_children'
}

/** Undos run one after another: the second press waits for the first, so it knows what that one took back. */
let undoing: Promise<void> = Promise.resolve()

/**
 * Undo: the one way back for the keyboard (Ctrl+Z / ⌘Z, keyboard.ts) and the status line's Undo
 * button alike. It takes back this page's last change through `revert` with the ids of the
 * changes that change's request recorded; the next press the one before it.
 *
 * A change of a node this page already changed again and took back (rename, rename, undo,
 * undo) has that later change and its revert after it: `revert` would call them conflicts, so
 * they are taken back with it (their net effect is none). Change ids grow with time (history.md, 2). A change by anyone else since is a
 * conflict: nothing is written, the page says what stands in the way, and forces nothing.
 */
export function undoLast(ui: Ui): Promise<void> {
  undoing = undoing.then(() => undoOne(ui))
  return undoing
}

async function undoOne(ui: Ui) {
  const u = ui.undo.pop()
  if (!u) return ui.say('Nothing to undo.')
  const mine = new Set(u.nodes)
  const since = Math.min(...u.changeIds.map(Number))
  // taken back after this change was made (an undo before it belongs to an older one), on its nodes
  const cancelled = ui.undone.filter((x) => x.changeIds.every((id) => Number(id) > since) && x.nodes.some((id) => mine.has(id)))
  const changeIds = [...new Set([...u.changeIds, ...cancelled.flatMap((x) => x.changeIds)])]
  // where the focus goes when the node itself goes (an add taken back): its neighbour, found while it is shown
  const gone = u.focus === null ? ui.plan.nodes.get(u.nodes[0]!) : undefined
  const after = u.focus ?? (gone ? neighbour(gone, new Set(ui.plan.subtree(gone.id).map((x) => x.id))) : null)
  let res: { changeIds: string[] }
  try {
    res = await mutate<{ changeIds: string[] }>({ action: 'revert', projectId: ui.projectId, changeIds })
  } catch (err) {
    const conflicts = err instanceof Refused && err.code === 'revert_conflict' ? (err.body.conflicts as Conflict[] | undefined) : undefined
    ui.say(conflicts?.length ? await conflictWords(ui, u, conflicts) : `Could not undo ${u.what}: ${describe(err)}`)
    return ui.render()
  }
  ui.undone.push({ changeIds: [...u.changeIds, ...res.changeIds], nodes: u.nodes })
  for (const id of u.nodes) touch(ui, id)
  try {
    await ui.reload()
  } catch (err) {
    ui.say(`${u.done} (The plan could not be read again: ${describe(err)})`)
    return
  }
  const focus = after && ui.plan.nodes.has(after) ? after : null
  ui.view.selected = focus
  if (focus) ui.view.reveal(focus)
  ui.render()
  if (focus) ui.select(focus)
  else if (!document.activeElement || document.activeElement === document.body)
    document.querySelector<HTMLElement>('#canvas [tabindex="0"], #empty-add-goal, #canvas .card')?.focus()
  ui.say(u.done)
}

const REASONS: Record<Conflict['reason'], string> = {
  changed_later: 'changed it since',
  gone: 'deleted it since',
  has_children: 'added items under it since',
}

/**
 * The conflicts of an undo in words: whose later change stands in the way (read from the
 * node's history) and what it did. The change stays as it is; it is not put back on the stack,
 * so the next Ctrl+Z takes back the change before it.
 */
async function conflictWords(ui: Ui, u: Undo, conflicts: Conflict[]): Promise<string> {
  const first = conflicts[0]!
  const label = ui.plan.nodes.get(first.target.id)?.data.label ?? first.target.id
  let who = 'Someone else'
  if (first.laterChangeId && first.target.kind === 'node') {
    try {
      const h = await api<{ changes: { changeId: string; actor: { userName: string | null; agent?: string } }[] }>(
        'GET',
        `/history?projectId=${q(ui.projectId)}&nodeId=${q(first.target.id)}&limit=50`,
      )
      const a = h.changes.find((c) => c.changeId === first.laterChangeId)?.actor
      if (a) who = a.agent ? `${a.agent} (${a.userName ?? 'someone'})` : (a.userName ?? who)
    } catch {
      // the history could not be read: the message names no one, and says the rest
    }
  }
  const field = first.field && first.field !== 'parentId' ? ` (${first.field})` : first.field === 'parentId' ? ' (its place)' : ''
  const more = conflicts.length > 1 ? ` and ${conflicts.length - 1} more conflict${conflicts.length > 2 ? 's' : ''}` : ''
  return `Could not undo ${u.what}: ${who} ${REASONS[first.reason]} — “${label}”${field}${more}. Nothing was changed.`
}

/**
 * Someone else is editing this field (an edit intent, live.md 4): say so and ask before the
 * person edits it too. True when nobody else is, or the person chose to go ahead (their save
 * then overrules with force).
 */
export function mayEdit(ui: Ui, id: string, field: string, label: string): boolean {
  const key = `${id}:${field}`
  const by = ui.presence.editing(id, field)
  if (!by || ui.forced.has(key)) return true
  const who = by.actor.agent ? `${by.actor.agent} (an agent of ${by.actor.userName})` : by.actor.userName
  if (!confirm(`${who} is editing ${label} of this item right now.\n\nEdit it anyway? What you save replaces what they write.`))
    return false
  ui.forced.add(key)
  return true
}
