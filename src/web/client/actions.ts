import { describe, mutate } from './api.ts'
import type { Ui } from './ctx.ts'
import { CHILD_TYPE, type NodeType, type PlanNode } from './model.ts'

/**
 * Every change a person makes: one POST /mutate each (with its Idempotency-Key), the answer put
 * into the plan at once, a refusal kept beside the node it was about (ui.errors).
 */
const touch = (ui: Ui, id: string) => ui.mine.set(id, Date.now())

/** What POST /mutate answers to the page's writes: the node an add or update wrote, a batch's results. */
interface Written {
  node: PlanNode
  results?: { nodeId: string; changelogId: number }[]
}

async function write(ui: Ui, id: string | null, body: Record<string, unknown>, errorKey = id): Promise<Written | null> {
  if (errorKey) ui.errors.delete(errorKey)
  try {
    const res = await mutate<Written>({ projectId: ui.projectId, ...body })
    if (id) touch(ui, id)
    return res
  } catch (err) {
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
    ? { action: 'update', nodeId: e.id, data: { label } }
    : { action: 'add', node: { type: e.type, parentId: e.parentId, data: { label, ...iterationFor(ui, e.type) } } }
  let res: Written
  try {
    res = await mutate<Written>({ projectId: ui.projectId, ...body })
  } catch (err) {
    e.error = describe(err)
    return ui.render()
  }
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
  const res = await write(ui, id, { action: 'update', nodeId: id, data, ...(parentId ? { parentId } : {}) }, errorKey)
  if (!res) return false
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
 * Delete a node and what is beneath it in one batch, deepest first, so each node gets its own
 * changelog entry: the undo restores every one of them with its id, parents first.
 */
export async function remove(ui: Ui, n: PlanNode) {
  const depth = new Map<string, number>([[n.id, 0]])
  const nodes = ui.plan.subtree(n.id)
  for (const x of nodes) if (x.parentId && depth.has(x.parentId)) depth.set(x.id, depth.get(x.parentId)! + 1)
  const order = [...nodes].reverse()
  const res = await write(ui, n.id, { action: 'batch', mutations: order.map((x) => ({ action: 'delete', nodeId: x.id })) })
  if (!res) return
  const results = res.results ?? []
  const undo = {
    label: n.data.label,
    restore: results
      .map((r) => ({ nodeId: r.nodeId, changelogId: r.changelogId, depth: depth.get(r.nodeId) ?? 0 }))
      .sort((a, b) => a.depth - b.depth),
  }
  ui.undo.push(undo)
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

/**
 * Undo: the one way back for the keyboard (Ctrl+Z / ⌘Z, keyboard.ts) and the status line's Undo
 * button alike. Today it brings back the last deletion from the changelog, level by level; a
 * server-side revert can take its place here without touching either caller.
 */
export async function undoLast(ui: Ui) {
  const u = ui.undo.pop()
  if (!u) return ui.say('Nothing to undo.')
  const levels = [...new Set(u.restore.map((r) => r.depth))]
  try {
    for (const d of levels) {
      const here = u.restore.filter((r) => r.depth === d)
      const restored = await Promise.all(
        here.map((r) => mutate<{ node: PlanNode }>({ action: 'restore', projectId: ui.projectId, changelogId: r.changelogId })),
      )
      for (const r of restored) {
        touch(ui, r.node.id)
        ui.plan.upsert(r.node)
      }
    }
  } catch (err) {
    ui.say(`Could not restore “${u.label}”: ${describe(err)}`)
    return ui.render()
  }
  const top = u.restore[0]?.nodeId ?? null
  if (top) {
    ui.view.selected = top
    ui.view.reveal(top)
  }
  ui.render()
  ui.say(`Restored “${u.label}”.`)
}
