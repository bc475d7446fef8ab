import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { checkExpectation, type Locked } from '../history/precondition'
import { LATER } from '../iterations/model'
import { type IterationRow, readIterations } from '../iterations/service'
import { parseRev } from '../ports/rev'
import type { IntentRow } from '../presence/intents'
import type { AccessRow } from '../projects/service'
import { limitsOf } from '../tiers/service'
import type { WriteCtx, WriteState } from './context'
import type { NewNode, NodeEntry, NodeUpdate } from './input'
import { NODE_TYPES, type Node, type NodeType, PARENT_TYPE, parseNodeId, toNode } from './model'
import * as q from './queries'

/**
 * The first of a node write's three calls, the read: the write's context opened (`openCtx`, a dry run's too;
 * its type in ./context.ts, whose fields only src/nodes assigns), then what the rules (./rules.ts, the second call) are checked on, read into it in as few
 * statements as it can, and nothing checked here. The nodes it reads and locks (`getNode`, `getNodeWithIntent`, `loadNodes`, `readAround`
 * for what the rules check beside the node), all an add's rules need (`readAdd`) and all an
 * update's (`readUpdate`), a batch's (`readNamed` ahead of its entries, `readEntry` for each), the
 * iterations (`iterationsOf`), new ids (`nextId`, `askIds`, `reserveIds`), the owner's node cap
 * (`readNodeCap`) and the project's open memos that an add's answer reports (`openMemos`, `reserveTaskCountingMemos`). An ifRev is read
 * here too (`expectRev`): a stale one is kept in the context's `stale`, and refused, a batch's
 * too, by the write's sequence before it is saved (src/mutate/sequence.ts `runWrite`). The second
 * call is ./rules.ts, the third ./write.ts.
 */

/**
 * A node write of `projectId` opened, inside its transaction (`deps.db`): nothing read yet.
 * `dryRun`: a proposal's preview or a revert's dry run, which saving stores nothing of.
 */
export async function openCtx(deps: Deps, projectId: string, { dryRun = false } = {}): Promise<WriteCtx> {
  return {
    deps,
    projectId,
    dryRun,
    nodes: new Map(),
    drafts: new Map(),
    pending: [],
    events: [],
    tips: [],
    advisories: [],
    created: { nodes: 0, iterations: 0 },
    idPool: new Map(),
    changes: [],
    beside: [],
    locked: new Map(),
    stale: [],
  }
}

/**
 * The project's iterations by name, as they stand in this write: read once, when first needed (a
 * job's or a task's iteration). An add of a job or a task asks before it reserves its id, and
 * awaits them after: on PostgreSQL the two statements then go out together (postgres.js sends a
 * transaction's statements without waiting for the answer of the one before), one round trip.
 */
export function iterationsOf(ctx: WriteState): Promise<Map<string, IterationRow>> {
  if (!ctx.iterations) {
    ctx.iterations = readIterations(ctx.deps.db, ctx.projectId).then((rows) => new Map(rows.map((i) => [i.name, i])))
    // asked for ahead of its use, it may fail while nothing awaits it yet: the use that awaits it throws
    ctx.iterations.catch(() => {})
  }
  return ctx.iterations
}

/**
 * Whether an add of a job or a task with `data` lands in Later: it names no iteration (null is
 * none) or Later itself. Such an add reads no iterations (`readAround`).
 */
export const landsInLater = (data: Record<string, unknown> | undefined) => data?.iteration == null || data.iteration === LATER

/**
 * The iterations as an add that lands in Later needs them, without a read: Later alone. It is the
 * system iteration every project is created with (src/projects/service.ts), and the iteration
 * actions refuse to delete, rename or close a system one (src/iterations/service.ts), so it stands
 * and is active in every project.
 */
const laterAlone = (): Map<string, IterationRow> =>
  new Map([[LATER, { name: LATER, status: 'active', system: true, sort_order: 0, git_tags: [], completed_at: null }]])

/** Read the project's iterations again at their next use (a revert put one back or took one away). */
export async function reloadIterations(ctx: WriteState): Promise<void> {
  ctx.iterations = undefined
}

/** The stored blockedBy of every approach of the project, read once per write. */
export async function storedBlockers(ctx: WriteState): Promise<Map<string, readonly unknown[]>> {
  if (!ctx.blockers) ctx.blockers = new Map((await q.blockerEdges(ctx.deps.db, ctx.projectId)).map((r) => [r.id, r.blocked_by]))
  return ctx.blockers
}

/** The real id behind an id a client sent (draft ids map to the ids of earlier batch entries). */
export const resolveId = (ctx: WriteCtx, id: string) => ctx.drafts.get(id) ?? id

/** What the rules of an add or an update read beside the node itself (`readAround`). */
export interface Around {
  /** the parent sent (a draft resolved), and the node under it as this write sees it (null: none, or not found) */
  parentId?: string
  parent: Node | null
  /** the ids `serves` and `blockedBy` send (drafts resolved), each read into this write */
  refs: { serves?: string[]; blockedBy?: string[] }
  /** the stored blockedBy of the project, when a blockedBy is sent that may close a cycle */
  stored?: Map<string, readonly unknown[]>
  /** the project's iterations, for a job or a task (Later alone for an add that lands there) */
  iterations?: Map<string, IterationRow>
}

/**
 * Read what the rules of a node of `type` (./rules.ts) need beside the node: the parent it sends
 * (`parentId`), the nodes its `serves` and `blockedBy` name (in `data`; one statement), the
 * stored blockedBy when a cycle is looked for, and the iterations of a job or a task: none read
 * for an add that lands in Later (`inLater`, `landsInLater`), where Later alone is all its rules ask.
 */
export async function readAround(
  ctx: WriteCtx,
  parentId: unknown,
  data: Record<string, unknown>,
  type?: NodeType,
  inLater = false,
): Promise<Around> {
  const resolved = typeof parentId === 'string' && parentId !== '' ? resolveId(ctx, parentId) : undefined
  const parent = resolved === undefined ? null : await getNode(ctx, resolved)
  // data no schema checked may come here (a revert's fields set back are history's values; an
  // update whose id names no type skips step 2's data check, src/mutate/check.ts `typeNamed`, and
  // its rules refuse it as not found): what is no string is left as it is, not read as an id
  const refs: Around['refs'] = {}
  for (const f of ['serves', 'blockedBy'] as const)
    if (Array.isArray(data[f])) refs[f] = data[f].map((id: unknown) => (typeof id === 'string' ? resolveId(ctx, id) : id)) as string[]
  await loadNodes(
    ctx,
    [...(refs.serves ?? []), ...(refs.blockedBy ?? [])].filter((id) => typeof id === 'string'),
  )
  const stored = refs.blockedBy?.length && !ctx.cycleFree ? await storedBlockers(ctx) : undefined
  const iterations = type === 'job' || type === 'task' ? (inLater ? laterAlone() : await iterationsOf(ctx)) : undefined
  return { parentId: resolved, parent, refs, stored, iterations }
}

/** Read the given ids into the context in one query (those not known yet). */
export async function loadNodes(ctx: WriteCtx, ids: Iterable<string>): Promise<void> {
  const missing = [...new Set(ids)].filter((id) => !ctx.nodes.has(id) && !id.startsWith('draft-'))
  if (missing.length === 0) return
  const rows = await (missing.length === 1
    ? q.lockOne(ctx.deps.db, ctx.projectId, missing[0]!)
    : q.lockMany(ctx.deps.db, ctx.projectId, missing))
  for (const id of missing) ctx.nodes.set(id, null)
  for (const row of rows) noteLocked(ctx, row)
}

/** A node this write read and locked: as it stands in the write, and as it was first read (what an ifRev is checked against). */
function noteLocked(ctx: WriteCtx, row: q.NodeRow): void {
  const node = toNode(row, true)
  ctx.nodes.set(row.id, node)
  ctx.locked.set(row.id, { node, rev: row.rev, fieldRevs: row.field_revs ?? {} })
}

/**
 * The node an update names (getNode) and the live edit intents on the fields it sets (`fields`:
 * empty, none is looked for), read in one statement (sql/nodes/lock-with-intent.sql). A node this
 * write read before is not read again: its intents alone are, when they are looked for.
 */
export async function getNodeWithIntent(ctx: WriteCtx, id: string, fields: string[]): Promise<{ node: Node | null; intents: IntentRow[] }> {
  const known = ctx.nodes.has(id)
  if ((known && fields.length === 0) || (!known && id.startsWith('draft-'))) return { node: ctx.nodes.get(id) ?? null, intents: [] }
  const row = await q.lockWithIntent(ctx.deps.db, ctx.projectId, id, fields, ctx.deps.now())
  if (!known) {
    ctx.nodes.set(id, null)
    if (row.id != null) noteLocked(ctx, row as q.NodeRow)
  }
  return { node: ctx.nodes.get(id) ?? null, intents: row.intents ?? [] }
}

/** What an update's rules (./rules.ts `checkUpdate`) are checked on: read by `readUpdate`. */
export interface UpdateRead {
  /** the node named (a draft resolved) */
  id: string
  /** the node as this write sees it (null: not found) */
  before: Node | null
  /** the live edit intents on the fields the update sets, whoever holds them (src/presence/intents.ts `refuseIfHeld` picks out the writer's own) */
  intents: IntentRow[]
  around: Around
}

/**
 * The read of an update (a single one, a batch's entry, a revert's fields set back): the node,
 * with the edit intents on the fields it sets in the same statement (live.md, 4; none looked for
 * with force, nor for Arbor's own write, which no intent holds) and the iterations along for a
 * job or a task; its parent, its references; last its ifRev (live.md, 1): a field changed since
 * refuses the whole write when it is saved.
 */
export async function readUpdate(ctx: WriteCtx, input: NodeUpdate): Promise<UpdateRead> {
  const patch: Record<string, unknown> = input.data ?? {}
  const sets = [...Object.keys(patch), ...(input.parentId === undefined ? [] : ['parentId'])]
  const looked = input.force === true || !ctx.deps.author?.actor.userId ? [] : sets
  // a job's or a task's iterations: its id says its type (a draft's were read with its add)
  const named = parseNodeId(input.nodeId)?.type
  if (named === 'job' || named === 'task') void iterationsOf(ctx)
  const id = resolveId(ctx, input.nodeId)
  const { node: before, intents } = await getNodeWithIntent(ctx, id, looked)
  // only the reference arrays this update sends are checked: a stored one may name a node deleted
  // since, which must not block an unrelated change such as a move
  const around = await readAround(ctx, input.parentId, patch, before?.type)
  await expectRev(ctx, id, input.ifRev, { ...(input.parentId === undefined ? {} : { parentId: input.parentId }), ...patch })
  return { id, before, intents, around }
}

/** What an add's rules (./rules.ts `checkAdd`) are checked on: read by `readAdd`. */
export interface AddRead {
  /** the new node's id: reserved (a draft's mapped to it), or the one sent */
  id: string
  /** the draft id sent was taken by an earlier add of the batch */
  duplicate: boolean
  /** the node under the id sent, when it is no draft (null: none, as it must be) */
  existing: Node | null
  around: Around
}

/**
 * The read of an add (a single one, a batch's entry): a job's or a task's iterations asked for
 * first, so that on PostgreSQL their read goes with the id's (none when it lands in Later,
 * `readAround`); its id: a new one reserved with its parent read in the same statement, a
 * draft's mapped to it (later entries of the batch, and this one's references, name it so), or
 * the one sent, whose node is read (it must be free); then its parent and its references. Its
 * data was checked against its type's schema with the body (src/mutate/check.ts `checkedBody`).
 */
export async function readAdd(ctx: WriteCtx, input: NewNode): Promise<AddRead> {
  const { type, id: sent } = input
  const data: Record<string, unknown> = input.data ?? {}
  const inLater = landsInLater(data)
  if ((type === 'job' || type === 'task') && !inLater) void iterationsOf(ctx)
  const hasParent = PARENT_TYPE[type] !== null && typeof input.parentId === 'string'
  const draft = sent?.startsWith('draft-') === true
  const duplicate = draft && ctx.drafts.has(sent!)
  const id =
    sent === undefined || draft
      ? await nextId(ctx, type, sent === undefined && hasParent ? resolveId(ctx, input.parentId as string) : undefined)
      : sent
  if (draft && !duplicate) ctx.drafts.set(sent!, id)
  const existing = sent === undefined || draft ? null : await getNode(ctx, sent)
  const around = await readAround(ctx, hasParent ? input.parentId : undefined, data, type, inLater)
  return { id, duplicate, existing, around }
}

/**
 * A batch's nodes, read (and locked) in one statement before its first entry instead of as each
 * entry comes (issue 50, item 3): every node an entry names as its parent or in `serves` and
 * `blockedBy`, a delete's with an ifRev, and the nodes its updates change (but the node of a
 * batch's only update, read with its edit intent in one statement as a single update's is).
 * Reading them first changes nothing an entry sees: an entry changes no node in the database
 * without keeping it in the context as it then stands (an add, an update), or marking it gone
 * (a delete, for each node of its subtree), and later entries read the context first. Draft ids,
 * and the ids the batch adds under their own name (read by src/nodes/batch-ids.ts), are left out.
 * The new ids its adds need were asked for before (src/nodes/batch-ids.ts, `askIds`): on
 * PostgreSQL the first read after them (this one, unless a proposal preview's nodes or the cycle
 * check's were read first, src/nodes/batch.ts) goes in their round trip, after their counters' locks.
 */
export async function readNamed(ctx: WriteCtx, entries: readonly (NodeEntry | { action: 'addIteration' })[]): Promise<void> {
  const updates = entries.filter((e) => e.action === 'update').length
  const named: unknown[] = []
  for (const e of entries) {
    if (e.action === 'addIteration') continue
    if (e.action === 'delete') {
      if (e.ifRev !== undefined) named.push(e.nodeId)
      continue
    }
    const { parentId, data } = e.action === 'add' ? e.node : e
    if (e.action === 'update' && updates > 1) named.push(e.nodeId)
    named.push(parentId)
    for (const f of ['serves', 'blockedBy'] as const) {
      const ids = (data as Record<string, unknown> | undefined)?.[f]
      if (Array.isArray(ids)) named.push(...ids)
    }
  }
  await loadNodes(
    ctx,
    named.filter((id): id is string => typeof id === 'string' && id !== ''),
  )
}

/** What a batch's node entry was read into (`readEntry`), for ./rules.ts `checkEntry`. */
export type EntryRead =
  | { action: 'add'; input: NewNode; read: AddRead }
  | { action: 'update'; input: NodeUpdate; read: UpdateRead }
  | { action: 'delete'; id: string }

/**
 * The read of a batch's node entry (./batch.ts), as the single action's: an add's
 * `readAdd`, an update's `readUpdate`, a delete's ifRev (`expectRev`; its subtree is read when it
 * is stored, ./write.ts `deleteNode`), mostly from what `readNamed` read ahead.
 */
export async function readEntry(ctx: WriteCtx, e: NodeEntry): Promise<EntryRead> {
  switch (e.action) {
    case 'add':
      return { action: 'add', input: e.node, read: await readAdd(ctx, e.node) }
    case 'update':
      return { action: 'update', input: e, read: await readUpdate(ctx, e) }
    case 'delete': {
      const id = resolveId(ctx, e.nodeId)
      await expectRev(ctx, id, e.ifRev, null)
      return { action: 'delete', id }
    }
  }
}

/**
 * The precondition of a node write (live.md, 1): `ifRev` is the rev the caller read, `sets` the
 * fields the write sets with their values (null: a delete). The node was read, locked, by this
 * write; a field changed since ifRev is kept and refuses the whole write when it finishes.
 */
export async function expectRev(ctx: WriteCtx, id: string, ifRev: string | undefined, sets: Record<string, unknown> | null) {
  if (ifRev === undefined) return
  await loadNodes(ctx, [id])
  const target = lockedTarget(ctx, id)
  if (!target) return // not found: the write says so
  // the stored rev it names for this node (null: none it ever had), then the fields changed since
  const seq = parseRev('node', id, ifRev)
  ctx.stale.push(...(await checkExpectation(ctx.deps, ctx.projectId, { target, seq, sets })))
}

/** The node `id` as this write first read and locked it, as the precondition reads a target. */
export function lockedTarget(ctx: WriteCtx, id: string): Locked | undefined {
  const read = ctx.locked.get(id)
  if (!read) return undefined
  const { createdAt: _, ...current } = read.node
  return {
    kind: 'node',
    id,
    rev: read.rev,
    fieldRevs: read.fieldRevs,
    values: { parentId: read.node.parentId, ...read.node.data },
    current,
  }
}

/** The node `id` as this write sees it (read and locked at its first use; null: none). */
export async function getNode(ctx: WriteCtx, id: string): Promise<Node | null> {
  await loadNodes(ctx, [id])
  return ctx.nodes.get(id) ?? null
}

/**
 * Reserve ids for the adds to come, one counter update per type, always in the order of
 * NODE_TYPES: concurrent writes then lock the counters in one order and cannot deadlock. The
 * updates are sent together, in that order (on PostgreSQL one round trip).
 */
export async function reserveIds(ctx: WriteCtx, counts: Partial<Record<NodeType, number>>): Promise<void> {
  const types = NODE_TYPES.filter((type) => counts[type])
  const firsts = await Promise.all(types.map((type) => q.allocateIds(ctx.deps.db, ctx.projectId, type, counts[type]!)))
  for (const [i, type] of types.entries()) ctx.idPool.set(type, { next: firsts[i]!, end: firsts[i]! + counts[type]! })
}

/**
 * Ask for the ids of the adds to come ahead of their first use (a batch's, src/nodes/batch-ids.ts):
 * the counters are sent now (`reserveIds`) and awaited by the first new id (`nextId`), so that the
 * statements sent before it (the nodes a batch names, `readNamed`) take their locks after the
 * counters', as a single add takes its parent's after its id's, and on PostgreSQL go in the same
 * round trip (postgres.js sends a transaction's statements without waiting for the answer of the
 * one before).
 */
export function askIds(ctx: WriteState, counts: Partial<Record<NodeType, number>>): void {
  ctx.asked = reserveIds(ctx, counts)
  // it may fail while nothing awaits it yet: the nextId that awaits it throws
  ctx.asked.catch(() => {})
}

/**
 * The id of a new node of `type`. `parentId`: the parent it goes under, when this write has not
 * read it yet: read and locked (loadNodes) in the statement that reserves the id, so the add's
 * parent check that follows finds it without a round trip of its own.
 */
export async function nextId(ctx: WriteCtx, type: NodeType, parentId?: string): Promise<string> {
  if (ctx.asked) await ctx.asked
  let pool = ctx.idPool.get(type)
  if (!pool || pool.next >= pool.end) {
    if (parentId !== undefined && !ctx.nodes.has(parentId) && !parentId.startsWith('draft-')) {
      const row = await q.allocateIdLockingParent(ctx.deps.db, ctx.projectId, type, parentId)
      ctx.idPool.set(type, { next: row.last, end: row.last + 1 })
      ctx.nodes.set(parentId, null)
      if (row.id != null) noteLocked(ctx, row as q.NodeRow)
    } else await reserveIds(ctx, { [type]: 1 })
    pool = ctx.idPool.get(type)!
  }
  return `${type}-${pool.next++}`
}

/**
 * The free-tier node cap (docs/reference/limits.md): counted over every project the
 * owner has. The owner's plan is the access row's (sql/projects/get-access.sql, read or cached
 * with the caller's access: a change of plan empties that cache, src/accounts/auth-cache.ts), so
 * an owner without a cap costs the write no statement.
 */
export function nodeCap(deps: Deps, project: AccessRow): { ownerId: string; cap: number } | null {
  const owner = { tier: project.owner_tier as User['tier'], lapsed: project.owner_lapsed, contributor: project.owner_contributor }
  const cap = limitsOf(deps.config, owner).node_cap
  return cap !== null ? { ownerId: project.owner_id, cap } : null
}

/** The owner's node cap and the nodes the owner has (`readNodeCap`), for ./rules.ts `checkNodeCap`. */
export interface CapRead {
  ownerId: string
  cap: number
  current: number
}

/**
 * The first read of an add or a batch: the owner's node cap (null: none, and no statement) and,
 * under the owner's cap lock, the nodes the owner has. The lock, taken inside the write's
 * transaction (deps.db) and held until the commit, makes concurrent writes count one after
 * another, so only the first of them can start under the cap (./rules.ts `checkNodeCap`).
 */
export async function readNodeCap(deps: Deps, project: AccessRow): Promise<CapRead | null> {
  const capped = nodeCap(deps, project)
  if (!capped) return null
  await q.lockCapOwner(deps.db, capped.ownerId)
  return { ...capped, current: await q.countOwned(deps.db, capped.ownerId) }
}

/** The project's open memos (the inbox an add or a classification may overflow: inboxAdvisory), as the writes keep their count (migration 0049). */
export const openMemos = (ctx: WriteCtx): Promise<number> => q.countOpenMemos(ctx.deps.db, ctx.projectId)

/**
 * A single add of a task, before its `readAdd`: its id reserved (for `nextId`) and the project's
 * open memos read (the inbox it may overflow: inboxAdvisory; their kept count, migration 0049), in one statement, the
 * iterations its `data` names asked for first (on PostgreSQL one round trip with it); returns the count.
 */
export async function reserveTaskCountingMemos(ctx: WriteCtx, data: Record<string, unknown>): Promise<number> {
  if (!landsInLater(data)) void iterationsOf(ctx)
  const row = await q.allocateTaskIdCountingMemos(ctx.deps.db, ctx.projectId)
  ctx.idPool.set('task', { next: row.last, end: row.last + 1 })
  return row.memos
}
