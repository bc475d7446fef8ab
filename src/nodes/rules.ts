import { invalid, RefusalError } from '../errors'
import { LATER } from '../iterations/model'
import type { IterationRow } from '../iterations/service'
import { refuseIfHeld } from '../presence/intents'
import type { WriteCtx } from './context'
import type { NewNode, NodeUpdate } from './input'
import { an, type Node, type NodeData, type NodeType, PARENT_TYPE, parseNodeId, SHAPES } from './model'
import type { AddRead, Around, CapRead, EntryRead, UpdateRead } from './read'

/**
 * The second of a node write's three calls: the rules of add and update on what the write read first
 * (./read.ts): the id, the parent, the referenced nodes, the iterations, the status machine.
 * Each is checked on what is passed to it and reads nothing more; a broken rule throws the 400 of
 * docs/reference/resources.md with its tip (an ErrorListError, which a batch prefixes with its
 * entry's index). An add's rules are `checkAdd`, an update's `checkUpdate` (a batch's entries
 * come through them, `checkEntry`; a revert's fields set back through `checkUpdate`), each in the
 * order of docs/reference/mutate.md. A precondition on a field goes here, as one more line of
 * `checkFields`, the rules the two share, even a rule that reads nothing (so that it holds for a
 * revert's fields set back too); what it needs read goes into ./read.ts `readAround` (and
 * `readNamed`, for a batch to read it ahead with its other nodes). A field's
 * schema (src/ports/node-data.ts `NodeFields`, checked with the body) says its shape alone: its
 * JSON type and its length. A refusal of the whole write is here too: the owner's node cap
 * (`checkNodeCap`, 403, an add's or a batch's first rule).
 */

const fail = (message: string, tip?: string): never => {
  throw invalid(message, tip ? { _tip: tip } : undefined)
}

const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1)

/** An add sends no kind: the classifier assigns it. */
export function checkNoKind(patch: Record<string, unknown>): void {
  if ('kind' in patch && patch.kind !== null)
    fail(
      'kind is not supplied on creation; it is assigned by classification',
      'Add the task without kind; it is classified within seconds, or call {action:"classify", projectId, nodeId} at once.',
    )
}

/**
 * The id an add sent (`sent`, inside a batch only): a draft- id used once in the batch
 * (`duplicate`: an earlier entry used it), or a `<type>-<number>` id of the node's type that no
 * node has (`existing`: the node read under it).
 */
export function checkSentId(type: NodeType, sent: string, allowId: boolean, duplicate: boolean, existing: Node | null): void {
  if (!allowId) fail('node.id cannot be supplied: ids are generated (draft- ids are allowed inside a batch only)')
  if (sent.startsWith('draft-')) {
    if (duplicate) fail(`draft id ${sent} is used twice in this batch`)
    return
  }
  const parsed = parseNodeId(sent)
  if (!parsed || parsed.type !== type) fail(`node.id ${sent} must be a draft- id or ${an(type)}-<number> id`)
  if (existing) fail(`Node with id ${sent} already exists`)
}

/**
 * The fields a write sends (checked against their schema as sent), as they are to be stored: the
 * label without the spaces around it. The rules after it read `patch` and the data built from it
 * so, as stored: a rule on the label sees `"WIP x"` when `" WIP x"` was sent.
 */
function asStored(sent: Record<string, unknown>): Record<string, unknown> {
  return typeof sent.label === 'string' ? { ...sent, label: sent.label.trim() } : sent
}

/**
 * The check of an add (a single one, a batch's entry), on what ./read.ts `readAdd` read: the rules
 * in the order of docs/reference/mutate.md, on data the body's check has held against its type's
 * schema (src/mutate/check.ts `checkedBody`, the row's `nodeData`). `allowId`: inside a
 * batch, where an id may be sent. Returns the node to store (./write.ts `storeAdd`).
 */
export async function checkAdd(
  ctx: WriteCtx,
  input: NewNode,
  { id, duplicate, existing, around }: AddRead,
  allowId: boolean,
): Promise<Node> {
  const { type, id: sent } = input
  const patch = asStored(input.data)
  checkNoKind(patch)
  if (sent !== undefined) checkSentId(type, sent, allowId, duplicate, existing)
  const parentId = checkParent(type, input.parentId, around)
  const data = dropNulls({ ...patch })
  await checkFields(ctx, { id, type, parentId }, data, patch, around)
  return { id, type, parentId, data, createdAt: new Date().toISOString() }
}

/** An update as its rules leave it (`checkUpdate`), for ./write.ts `storeUpdate` to store. */
export interface CheckedUpdate {
  id: string
  /** the node as this write saw it before the update */
  before: Node
  parentId: string | null
  data: NodeData
  /** the update sets kind (or clears it): the classifier's mark goes with it */
  setsKind: boolean
  /** the one data key the update sets (a label's edit), a hint for the stored revs; null: compare every key */
  only: string | null
}

/**
 * The check of an update (a single one, a batch's entry, a revert's fields set back): the rules, in
 * the order of docs/reference/mutate.md, on what `readUpdate` (./read.ts) read; last another
 * actor's edit intent on a field it sets (409 being_edited unless force, live.md, 4). Its data
 * was held against the schema of the type its id names with the body (src/mutate/check.ts
 * `checkedBody`); a revert's is the node's as history recorded it. Returns the node's parent and
 * data as they are to be stored.
 */
export async function checkUpdate(ctx: WriteCtx, input: NodeUpdate, { id, before, intents, around }: UpdateRead): Promise<CheckedUpdate> {
  const sent: Record<string, unknown> = input.data ?? {}
  checkTarget(id, before, input)
  const type = before!.type
  const patch = asStored(sent)
  const parentId = input.parentId === undefined ? before!.parentId : checkParent(type, input.parentId, around)
  const data = dropNulls({ ...before!.data, ...patch })
  if (patch.kind === null) delete data.urgent
  if (type === 'approach' && parentId !== before!.parentId && Array.isArray(data.serves) && !('serves' in patch))
    data.serves = data.serves.filter((s: string) => s !== parentId) // moved under a need it served
  await checkFields(ctx, { id, type, parentId }, data, patch, around, before!.data)
  refuseIfHeld(ctx.projectId, id, intents, ctx.deps.author?.actor)
  const keys = Object.keys(patch)
  const only = input.parentId === undefined && keys.length === 1 ? keys[0]! : null
  return { id, before: before!, parentId, data, setsKind: 'kind' in patch, only }
}

/**
 * The rules an add and an update share, in this order, on the node's data as it is to be stored
 * (`data`: an add's `patch`, an update's the stored data with `patch` over it, nulls dropped;
 * `before`: the stored data, undefined for an add): the ids `serves` and `blockedBy` send, a job's or a task's
 * iteration (Later when it names none) and the status machine, a task's `urgent`. A precondition
 * on a field goes here, one more line: it then holds for an add, an update, a batch's entries and
 * a revert's fields set back, which all come through `checkAdd` or `checkUpdate`. `patch` says
 * which fields the write sets, with their values as they are to be stored (`asStored`: the
 * label trimmed); an update's rule on a field it does not set would refuse a write of another
 * field of a node stored before the rule.
 */
async function checkFields(
  ctx: WriteCtx,
  node: { id: string; type: NodeType; parentId: string | null },
  data: NodeData,
  patch: Record<string, unknown>,
  around: Around,
  before?: NodeData,
): Promise<void> {
  const { id, type, parentId } = node
  await checkRefs(ctx, { id, parentId }, around)
  Object.assign(data, around.refs)
  if (around.iterations) {
    if (data.iteration === undefined) {
      data.iteration = LATER
      if (!before) ctx.tips.push(`${id} has no iteration, so it landed in ${LATER}.`)
    }
    applyStatus(ctx, id, data, patch, around.iterations, before)
  }
  if (type === 'task') checkUrgent(data, patch)
}

/** A batch's node entry as its rules leave it (`checkEntry`), for ./write.ts `storeEntry`. */
export type CheckedEntry =
  | { action: 'add'; node: Node; sentId?: string }
  | { action: 'update'; update: CheckedUpdate }
  | { action: 'delete'; id: string }

/**
 * The check of a batch's node entry (./batch.ts), on what ./read.ts `readEntry` read, as
 * the single action's: an add's `checkAdd` (an id may be sent), an update's `checkUpdate`; a
 * delete has no rule of its own (a node not found is said where its subtree is read, ./write.ts `deleteNode`).
 */
export async function checkEntry(ctx: WriteCtx, entry: EntryRead): Promise<CheckedEntry> {
  switch (entry.action) {
    case 'add':
      return { action: 'add', node: await checkAdd(ctx, entry.input, entry.read, true), sentId: entry.input.id }
    case 'update':
      return { action: 'update', update: await checkUpdate(ctx, entry.input, entry.read) }
    case 'delete':
      return entry
  }
}

/**
 * The owner's node cap (docs/reference/limits.md), on the count ./read.ts `readNodeCap` read
 * under the owner's cap lock, the write's first statement: at or over the cap a new add or batch
 * is refused (403 node_cap_reached) before any other rule; the one that crosses it succeeds.
 * Returns the cap (null: none), for the advisory of the answer (src/nodes/service.ts `capAdvisory`).
 */
export function checkNodeCap(capped: CapRead | null): CapRead | null {
  if (!capped) return null
  const { cap, current } = capped
  if (current >= cap)
    throw new RefusalError(403, 'node_cap_reached', {
      message: `The free plan holds ${cap} nodes across your projects; delete ${current - cap + 1} to add more`,
      current,
      node_cap: cap,
      delete_to_resume: current - cap + 1,
    })
  return capped
}

/** An update names a node that exists (`before`, read under its id) and sends something to change. */
export function checkTarget(id: string, before: Node | null, input: NodeUpdate): void {
  if (!before) fail(`Node with id ${id} not found`)
  if (input.data === undefined && input.parentId === undefined) fail('Send data (fields to change) and/or parentId')
}

/** The parent a node of `type` sends (`sent`; `around`: its id with drafts resolved, and the node under it); returns that id. */
export function checkParent(type: NodeType, sent: unknown, around: Around): string | null {
  const expected = PARENT_TYPE[type]
  if (expected === null) {
    if (sent !== undefined && sent !== null) fail(`${cap(an(type))} has no parent; send parentId: null or leave it out`)
    return null
  }
  const { parentId: id, parent } = around
  if (typeof sent !== 'string' || sent === '' || id === undefined)
    return fail(
      `parentId is required: ${an(type)} sits under ${an(expected)}`,
      `Send node:{type:"${type}", parentId:"<${expected} id>", data:{label}}`,
    )
  if (sent.startsWith('draft-') && id === sent) fail(`parentId ${sent} names no earlier draft of this batch`)
  if (!parent) fail(`Parent node ${id} not found`)
  if (parent!.type !== expected) fail(`${cap(an(type))}'s parent must be ${an(expected)}; ${id} is ${an(parent!.type)}`)
  return id
}

/**
 * The ids `serves` and `blockedBy` send (`around.refs`, drafts resolved): each an existing need
 * (an approach), neither the bet's own parent nor the approach itself, and no blockedBy closing a
 * cycle (walked over `around.stored`, read when a cycle may close).
 */
export async function checkRefs(ctx: WriteCtx, node: { id: string; parentId: string | null }, around: Around): Promise<void> {
  for (const field of ['serves', 'blockedBy'] as const) {
    const ids = around.refs[field]
    if (!ids) continue
    const wanted = field === 'serves' ? 'need' : 'approach'
    for (const id of ids) {
      const target = ctx.nodes.get(id)
      if (!target) fail(`${field} names ${id}, which is not an existing ${wanted}`, SHAPES[field])
      if (target!.type !== wanted)
        fail(`${field} must name ${wanted === 'need' ? 'needs' : 'approaches'}; ${id} is ${an(target!.type)}`, SHAPES[field])
      if (field === 'serves' && id === node.parentId) fail(`serves must not name the bet's own parent ${id}`, SHAPES.serves)
      if (field === 'blockedBy' && id === node.id) fail('blockedBy must not name the approach itself', SHAPES.blockedBy)
    }
    if (field === 'blockedBy' && around.stored) await checkNoCycle(ctx, node.id, ids, around.stored)
  }
}

/** Steps of the cycle walk between two yields to the event loop: a large project never holds other requests up. */
const WALK_SLICE = 20_000

/**
 * Refuses a blockedBy that would close a cycle: `id` must not be reachable from its new blockers
 * along the blockedBy of other approaches, as they stand in this write (earlier entries of a
 * batch included, read from the context) or are stored. Each approach is visited once.
 */
async function checkNoCycle(ctx: WriteCtx, id: string, blockers: string[], stored: Map<string, readonly unknown[]>): Promise<void> {
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

/**
 * The status machine of docs/reference/resources.md for jobs and tasks, applied to the data after the patch,
 * in the iteration it names (one of `iterations`, the project's). `before` is the stored data (undefined on add).
 */
export function applyStatus(
  ctx: WriteCtx,
  id: string,
  data: Record<string, unknown>,
  patch: Record<string, unknown>,
  iterations: Map<string, IterationRow>,
  before?: Record<string, unknown>,
): void {
  const wasDone = before?.status === 'done'
  const iteration =
    iterations.get(data.iteration as string) ??
    fail(`Iteration ${data.iteration} not found; iterations: ${[...iterations.keys()].join(', ')}`)
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
export function dropNulls(data: Record<string, unknown>): NodeData {
  for (const k of Object.keys(data)) if (data[k] === null) delete data[k]
  return data as NodeData
}

/** urgent belongs to a do-it task only. */
export function checkUrgent(data: Record<string, unknown>, patch: Record<string, unknown>): void {
  if (patch.urgent !== undefined && patch.urgent !== null && data.kind !== 'do-it')
    fail('urgent is only valid on a do-it task (kind: do-it, stored or sent in the same call)')
  if (data.kind !== 'do-it') delete data.urgent
}
