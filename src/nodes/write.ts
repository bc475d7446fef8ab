import { parseInput } from '../http/action-schema'
import { LATER } from '../iterations/model'
import { dataSchema } from '../ports/node-data'
import { intentProbe, refuseIfHeld } from '../presence/intents'
import {
  expectRev,
  getNode,
  getNodeWithIntent,
  iterationsOf,
  loadNodes,
  nextId,
  noteChange,
  storedBlockers,
  type WriteCtx,
} from './context'
import type { NewNode, NodeUpdate } from './input'
import { an, FieldError, type Node, type NodeData, type NodeType, PARENT_TYPE, parseNodeId, SHAPES } from './model'

/**
 * The rules of add and update that need the database: parents, referenced ids, iterations,
 * and the job/task status machine. Each returns the node to write and queues its event;
 * a broken rule throws FieldError, which the caller turns into a 400 (prefixed in a batch).
 */

const fail = (message: string, tip?: string): never => {
  throw new FieldError(message, tip)
}

const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1)

/** The real id behind an id a client sent (draft ids map to the ids of earlier batch entries). */
export const resolveId = (ctx: WriteCtx, id: string) => ctx.drafts.get(id) ?? id

async function checkParent(ctx: WriteCtx, type: NodeType, parentId: unknown): Promise<string | null> {
  const expected = PARENT_TYPE[type]
  if (expected === null) {
    if (parentId !== undefined && parentId !== null) fail(`${cap(an(type))} has no parent; send parentId: null or leave it out`)
    return null
  }
  if (typeof parentId !== 'string' || parentId === '')
    fail(
      `parentId is required: ${an(type)} sits under ${an(expected)}`,
      `Send node:{type:"${type}", parentId:"<${expected} id>", data:{label}}`,
    )
  const id = resolveId(ctx, parentId as string)
  if ((parentId as string).startsWith('draft-') && id === parentId) fail(`parentId ${parentId} names no earlier draft of this batch`)
  const parent = await getNode(ctx, id)
  if (!parent) fail(`Parent node ${id} not found`)
  if (parent!.type !== expected) fail(`${cap(an(type))}'s parent must be ${an(expected)}; ${id} is ${an(parent!.type)}`)
  return id
}

async function checkRefs(ctx: WriteCtx, node: { id: string; parentId: string | null }, data: Record<string, unknown>) {
  for (const field of ['serves', 'blockedBy'] as const) {
    if (!Array.isArray(data[field])) continue
    const ids = data[field].map((id: string) => resolveId(ctx, id))
    await loadNodes(ctx, ids)
    const wanted = field === 'serves' ? 'need' : 'approach'
    for (const id of ids) {
      const target = ctx.nodes.get(id)
      if (!target) fail(`${field} names ${id}, which is not an existing ${wanted}`, SHAPES[field])
      if (target!.type !== wanted)
        fail(`${field} must name ${wanted === 'need' ? 'needs' : 'approaches'}; ${id} is ${an(target!.type)}`, SHAPES[field])
      if (field === 'serves' && id === node.parentId) fail(`serves must not name the bet's own parent ${id}`, SHAPES.serves)
      if (field === 'blockedBy' && id === node.id) fail('blockedBy must not name the approach itself', SHAPES.blockedBy)
    }
    if (field === 'blockedBy') await checkNoCycle(ctx, node.id, ids)
    data[field] = ids
  }
}

/** Steps of the cycle walk between two yields to the event loop: a large project never holds other requests up. */
const WALK_SLICE = 20_000

/**
 * Refuses a blockedBy that would close a cycle: `id` must not be reachable from its new blockers
 * along the blockedBy of other approaches, as they stand in this write (earlier entries of a
 * batch included, read from the context) or are stored. Each approach is visited once.
 */
async function checkNoCycle(ctx: WriteCtx, id: string, blockers: string[]): Promise<void> {
  if (ctx.cycleFree) return
  const stored = await storedBlockers(ctx)
  const next = (at: string): readonly unknown[] => {
    if (ctx.nodes.has(at)) {
      const node = ctx.nodes.get(at)
      const list = node?.type === 'approach' ? node.data.blockedBy : undefined
      return Array.isArray(list) ? list : []
    }
    return stored.get(at) ?? []
  }
  const cameFrom = new Map<string, string>(blockers.map((b) => [b, id]))
  const stack = [...new Set(blockers)]
  let steps = 0
  while (stack.length) {
    const at = stack.pop()!
    for (const to of next(at)) {
      if (++steps % WALK_SLICE === 0) await new Promise((resolve) => setImmediate(resolve))
      if (typeof to !== 'string') continue
      if (to === id) {
        const path = [id, at]
        for (let back = cameFrom.get(at); back !== undefined && back !== id; back = cameFrom.get(back)) path.splice(1, 0, back)
        fail(`blockedBy would make a cycle (each blocked by the next): ${[...path, id].join(' → ')}`, SHAPES.blockedBy)
      }
      if (cameFrom.has(to)) continue
      cameFrom.set(to, at)
      stack.push(to)
    }
  }
}

async function checkIteration(ctx: WriteCtx, name: unknown) {
  const iterations = await iterationsOf(ctx)
  const it = iterations.get(name as string)
  if (!it) fail(`Iteration ${name} not found; iterations: ${[...iterations.keys()].join(', ')}`)
  return it!
}

/**
 * The status machine of docs/reference/resources.md for jobs and tasks, applied to the data after the patch.
 * `before` is the stored data (undefined on add).
 */
async function applyStatus(
  ctx: WriteCtx,
  id: string,
  data: Record<string, unknown>,
  patch: Record<string, unknown>,
  before?: Record<string, unknown>,
) {
  const wasDone = before?.status === 'done'
  const iteration = await checkIteration(ctx, data.iteration)
  if ('status' in patch) {
    const status = patch.status
    if (status === 'done') {
      if (!wasDone && before && iteration.status === 'done')
        fail(
          `Cannot mark ${id} done: its iteration ${iteration.name} is done`,
          `Iteration ${iteration.name} is done. Either reopen it ({action:"updateIteration", iterationName:"${iteration.name}", data:{status:"active"}}) and retry, or move the node in the same call: data:{status:"done", iteration:"<an active iteration>"}.`,
        )
      data.status = 'done'
      data.completedAt = wasDone ? before!.completedAt : (patch.completedAt ?? ctx.deps.now().toISOString())
    } else if (status === 'delivered') {
      data.status = 'delivered' // deprecated: accepted, means not done yet
      delete data.completedAt
    } else {
      delete data.status // open is stored as absent
      delete data.completedAt
    }
  } else if (patch.completedAt !== undefined) {
    fail('completedAt is set by the service when status becomes done')
  }
  if (data.status !== 'done' && iteration.status === 'done') {
    ctx.tips.push(`${id} is not done and sat in done iteration ${iteration.name}; it moved to ${LATER}.`)
    data.iteration = LATER
  }
}

/** The data to store: its fields were checked against dataSchema, so it is a NodeData once nulls are gone. */
function dropNulls(data: Record<string, unknown>): NodeData {
  for (const k of Object.keys(data)) if (data[k] === null) delete data[k]
  if (typeof data.label === 'string') data.label = data.label.trim()
  return data as NodeData
}

function checkUrgent(data: Record<string, unknown>, patch: Record<string, unknown>) {
  if (patch.urgent !== undefined && patch.urgent !== null && data.kind !== 'do-it')
    fail('urgent is only valid on a do-it task (kind: do-it, stored or sent in the same call)')
  if (data.kind !== 'do-it') delete data.urgent
}

/**
 * Validate an add and queue its row; returns the new node. `allowId`: inside a batch. The node's
 * shape (an object with a known type and a data object) was checked by its schema
 * (./input.ts); the rules here are the ones that need the type or the database.
 */
export async function prepareAdd(ctx: WriteCtx, input: NewNode, allowId: boolean): Promise<Node> {
  const n = input as NewNode & { id?: string }
  const type = n.type
  const patch: Record<string, unknown> = parseInput(dataSchema.add[type], n.data) // first, so kind on a goal reads as a field on the wrong type
  if ('kind' in patch && patch.kind !== null)
    fail(
      'kind is not supplied on creation; it is assigned by classification',
      'Add the task without kind; it is classified within seconds, or call {action:"classify", projectId, nodeId} at once.',
    )

  // a job's or a task's iteration is checked below: asked for now, its read goes with the id's
  if (type === 'job' || type === 'task') void iterationsOf(ctx)
  let id: string
  if (n.id !== undefined) {
    if (!allowId) fail('node.id cannot be supplied: ids are generated (draft- ids are allowed inside a batch only)')
    if (n.id.startsWith('draft-')) {
      if (ctx.drafts.has(n.id)) fail(`draft id ${n.id} is used twice in this batch`)
      id = await nextId(ctx, type)
      ctx.drafts.set(n.id, id)
    } else {
      const parsed = parseNodeId(n.id)
      if (!parsed || parsed.type !== type) fail(`node.id ${n.id} must be a draft- id or ${an(type)}-<number> id`)
      if (await getNode(ctx, n.id)) fail(`Node with id ${n.id} already exists`)
      id = n.id
    }
  } else id = await nextId(ctx, type, PARENT_TYPE[type] !== null && typeof n.parentId === 'string' ? resolveId(ctx, n.parentId) : undefined)

  const parentId = await checkParent(ctx, type, n.parentId)
  const data = dropNulls({ ...patch })
  await checkRefs(ctx, { id, parentId }, data)
  if (type === 'job' || type === 'task') {
    if (data.iteration === undefined) {
      data.iteration = LATER
      ctx.tips.push(`${id} has no iteration, so it landed in ${LATER}.`)
    }
    await applyStatus(ctx, id, data, patch)
  }
  if (type === 'task') checkUrgent(data, patch)
  const node: Node = { id, type, parentId, data, createdAt: new Date().toISOString() }
  ctx.nodes.set(id, node)
  ctx.pending.push({ id, type, parent_id: parentId, data, created_at: null, classified: type !== 'task' })
  ctx.events.push({ type: 'node.added', node })
  noteChange(ctx, 'add', node, null, node)
  ctx.created.nodes++
  return node
}

/** Validate an update (PATCH semantics; arrays replaced whole) and return the node after it. */
export async function prepareUpdate(ctx: WriteCtx, input: NodeUpdate): Promise<{ node: Node; classified: boolean; before: Node }> {
  const id = resolveId(ctx, input.nodeId)
  // a job's or a task's iteration is checked below: its id says its type, so the read goes with the node's
  const named = parseNodeId(id)?.type
  if (named === 'job' || named === 'task') void iterationsOf(ctx)
  const patch: Record<string, unknown> = input.data ?? {}
  // the fields it sets: another actor's edit intent on one refuses it (live.md, 4), read with the node
  const sets = [...Object.keys(patch), ...(input.parentId === undefined ? [] : ['parentId'])]
  const { node: before, intent } = await getNodeWithIntent(ctx, id, intentProbe(sets, ctx.deps.author?.actor, input.force))
  if (!before) fail(`Node with id ${id} not found`)
  if (input.data === undefined && input.parentId === undefined) fail('Send data (fields to change) and/or parentId')
  const type = before!.type
  parseInput(dataSchema.update[type], patch)
  await expectRev(ctx, id, input.ifRev, { ...(input.parentId === undefined ? {} : { parentId: input.parentId }), ...patch })

  const parentId = input.parentId === undefined ? before!.parentId : await checkParent(ctx, type, input.parentId)
  const data = dropNulls({ ...before!.data, ...patch })
  if (patch.kind === null) delete data.urgent
  if (type === 'approach' && parentId !== before!.parentId && Array.isArray(data.serves) && !('serves' in patch))
    data.serves = data.serves.filter((s: string) => s !== parentId) // moved under a need it served
  // check only the reference arrays this update sent: a stored one may name a node deleted
  // since, which must not block an unrelated change such as a move (the filter above already
  // keeps a moved bet from serving its new parent)
  const refs: Record<string, unknown> = {}
  for (const f of ['serves', 'blockedBy'] as const) if (f in patch && Array.isArray(data[f])) refs[f] = data[f]
  await checkRefs(ctx, { id, parentId }, refs)
  Object.assign(data, refs)
  if (type === 'job' || type === 'task') {
    if (data.iteration === undefined) data.iteration = LATER
    await applyStatus(ctx, id, data, patch, before!.data)
  }
  if (type === 'task') checkUrgent(data, patch)
  // another actor's edit intent on a field this sets: 409 being_edited unless force (live.md, 4)
  refuseIfHeld(ctx.projectId, id, intent)
  const node: Node = { ...before!, parentId, data }
  ctx.nodes.set(id, node)
  return { node, classified: 'kind' in patch, before: before! }
}
