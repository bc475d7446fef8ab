import type { User } from '../accounts/model'
import { liveClaims, withClaim } from '../claims/service'
import type { Db } from '../db'
import type { Deps } from '../deps'
import { ErrorListError, invalid, notFound, RefusalError } from '../errors'
import type { EventNode, Outbox } from '../events/outbox'
import { nodeChange, nodeState } from '../history/change'
import { afterAccess } from '../http/action-schema'
import { currentOf } from '../iterations/model'
import { readIterations } from '../iterations/service'
import { requireProject } from '../projects/access'
import type { AccessRow } from '../projects/service'
import { classifyTask } from './classify'
import type { WriteCtx } from './context'
import { type AddInput, ChangelogQuery, type ClassifyBody, type DeleteBody, NodesQuery, type RestoreBody, type UpdateBody } from './input'
import { an, NODE_TYPES, type Node, type NodeData, toNode } from './model'
import * as q from './queries'
import { expectRev, getNode, iterationsOf, openCtx, openMemos, readAdd, readNodeCap, readUpdate, reserveTaskCountingMemos } from './read'
import { checkAdd, checkNodeCap, checkUpdate } from './rules'
import { bringBack, deleteNode, flush, noteChange, storeAdd, storeUpdate } from './write'

/**
 * The node actions of POST /mutate, each the handler of the write's sequence
 * (src/mutate/sequence.ts), in the project whose access the edge asked (src/mutate/routes.ts,
 * once per write): the node read (./read.ts), checked (./rules.ts) and written (./write.ts),
 * then its answer, built here where the write is; saving its events and changes is left to the
 * sequence. Then the advisories and `_meta` every node write's answer shows (batch's and
 * revert's too), and the node reads.
 */

const nodeFocus = (projectId: string, node: Node) => focus(projectId, node.id)
const publicNode = (n: Node): Node => ({ id: n.id, rev: n.rev, type: n.type, parentId: n.parentId, data: n.data })

/**
 * add: the write opened (no statement); then read, rules, stored, each step in its file, each
 * entered once (./read.ts, ./rules.ts, ./write.ts). The read: the owner's node cap and count (its
 * lock is the write's first), for a task the project's open memos (their kept count) in the
 * statement that reserves its id (the inbox it may overflow), then the add's own. The rules: the
 * cap first (403 when reached, before any 400: the reads raise none), then the add's. Stored at
 * once, as an update is, so that its answer has the rev its node was stored with; with the cap's
 * and the inbox's advisories.
 */
export async function add(deps: Deps, project: AccessRow, body: AddInput) {
  const ctx = await openCtx(deps, project.id)
  const counted = await readNodeCap(deps, project)
  // a task is added unclassified (no memo): the inbox it may overflow is read with its id
  const memos = body.node.type === 'task' ? await reserveTaskCountingMemos(ctx, body.node.data) : undefined
  const read = await readAdd(ctx, body.node)
  const capped = checkNodeCap(counted)
  const checked = await checkAdd(ctx, body.node, read, false)
  const node = storeAdd(ctx, checked)
  await flush(ctx)
  await capAdvisory(ctx, capped)
  if (memos !== undefined) await inboxAdvisory(ctx, memos)
  return { ctx, answer: { success: true, node: publicNode(node), _meta: writeMeta(ctx, { focus: nodeFocus(ctx.projectId, node) }) } }
}

export async function update(deps: Deps, project: AccessRow, body: UpdateBody) {
  const ctx = await openCtx(deps, project.id)
  // read, rules, stored: each step in its file (./read.ts, ./rules.ts, ./write.ts)
  const read = await readUpdate(ctx, body)
  const checked = await checkUpdate(ctx, body, read)
  const saved = await storeUpdate(ctx, checked)
  return { ctx, answer: { success: true, node: publicNode(saved), _meta: writeMeta(ctx, { focus: nodeFocus(ctx.projectId, saved) }) } }
}

export async function remove(deps: Deps, project: AccessRow, body: DeleteBody) {
  const ctx = await openCtx(deps, project.id)
  await expectRev(ctx, body.nodeId, body.ifRev, null) // its ifRev read, then the node and its subtree removed
  const { node, changelogId, orphanedChildren, removed } = await deleteNode(ctx, body.nodeId)
  ctx.tips.push(
    `Deleted ${node.id}` +
      (removed > 1 ? ` and ${removed - 1} node(s) beneath it` : '') +
      `. Undo with {action:"restore", projectId:"${ctx.projectId}", nodeId:"${node.id}"} (children are not restored with it).`,
  )
  const answer = {
    success: true,
    deleted: { id: node.id, type: node.type },
    orphanedChildren,
    changelogId,
    _meta: writeMeta(ctx, { focus: node.parentId ? focus(ctx.projectId, node.parentId) : undefined }),
  }
  return { ctx, answer }
}

/** restore: a node deleted by name brought back (./write.ts `bringBack`), stored at once, its changelog entry marked restored. */
export async function restore(deps: Deps, project: AccessRow, body: RestoreBody) {
  const ctx = await openCtx(deps, project.id)
  const db = deps.db
  let entry: Awaited<ReturnType<typeof q.changelogGet>>
  if (body.changelogId !== undefined) {
    entry = await q.changelogGet(db, project.id, Number(body.changelogId)) // a positive integer, or its digits (schema)
  } else entry = await q.changelogLatest(db, project.id, body.nodeId!) // RestoreBody: nodeId when there is no changelogId
  if (!entry)
    throw notFound('not_found', {
      message: `No deletion of ${body.nodeId ?? `changelog entry ${body.changelogId}`} is on record`,
      _meta: { _tip: 'Only a node deleted by name is in the changelog; a node removed as a descendant comes back only by re-adding it.' },
    })
  const saved = entry.node as Node
  if (await getNode(ctx, saved.id)) throw new RefusalError(409, 'node_exists', { message: `Node ${saved.id} already exists` })
  if (entry.restored_at)
    throw notFound('not_found', {
      message: `No deletion of ${saved.id} is on record since it was last restored`,
      _meta: { _tip: 'It was removed later as a descendant of another delete; restore that ancestor-level delete instead.' },
    })
  if (saved.parentId && !(await getNode(ctx, saved.parentId)))
    throw new ErrorListError(
      ['Failed to restore node'],
      { _tip: `Its parent ${saved.parentId} does not exist: restore the parent first.` },
      500,
    )
  const data = { ...saved.data }
  if ((saved.type === 'job' || saved.type === 'task') && data.iteration && !(await iterationsOf(ctx)).has(data.iteration)) {
    ctx.tips.push(`Its iteration ${data.iteration} no longer exists; it is in Later.`)
    data.iteration = 'Later'
  }
  const node: Node = { id: saved.id, type: saved.type, parentId: saved.parentId, data }
  // a task deleted before the classifier reached it is classified once it is back
  bringBack(ctx, node, saved.createdAt ?? null, node.type !== 'task' || data.kind !== undefined)
  // stored at once, so that its answer has the rev it was stored with; its changelog entry marked restored
  await flush(ctx)
  await q.changelogMarkRestored(db, entry.id)
  return { ctx, answer: { success: true, node, _meta: writeMeta(ctx, { focus: nodeFocus(ctx.projectId, node) }) } }
}

/** classify: decide a task's kind (and urgency) now, with the same offline classifier as the background loop. */
export async function classify(deps: Deps, project: AccessRow, body: ClassifyBody) {
  const ctx = await openCtx(deps, project.id)
  const node = await getNode(ctx, body.nodeId)
  if (!node) throw invalid(`Node with id ${body.nodeId} not found`)
  if (node.type !== 'task') throw invalid(`Only tasks are classified; ${node.id} is ${an(node.type)}`)
  const saved = await classifyNode(ctx, node)
  if (saved.data.kind === 'memo') await inboxAdvisory(ctx)
  ctx.tips.push(`Classified as ${saved.data.kind}${saved.data.urgent ? ', urgent' : ''}. Correct it with update data:{kind}.`)
  return { ctx, answer: { success: true, node: publicNode(saved), _meta: writeMeta(ctx, { focus: nodeFocus(ctx.projectId, saved) }) } }
}

/** A task's data with the classifier's kind (and urgent, for a do-it). */
export function withClassification(data: NodeData): NodeData {
  const { kind, urgent } = classifyTask({ label: data.label, description: data.description })
  const out: NodeData = { ...data, kind }
  if (kind === 'do-it') out.urgent = urgent
  else delete out.urgent
  return out
}

async function classifyNode(ctx: WriteCtx, node: Node): Promise<Node> {
  const data = withClassification(node.data)
  const row = await q.setClassified(ctx.deps.db, ctx.projectId, node.id, data)
  const saved = toNode(row!, true)
  ctx.events.push({ type: 'node.updated', node: saved })
  noteChange(ctx, 'update', saved, node, saved)
  return saved
}

/**
 * Moves every job and task naming iteration `from` to `to` (an iteration renamed or deleted),
 * notes each in `outbox` as an update (its change and its `node.updated` event, after the
 * iteration's own), and returns them as nodes. `revertOf`: the change a revert takes back by
 * this move (the iteration's), noted as part of that revert, its events marked `revert`.
 */
export async function moveIterationNodes(deps: Deps, outbox: Outbox, from: string, to: string, revertOf?: number): Promise<EventNode[]> {
  const moved = (await q.moveIteration(deps.db, outbox.projectId, from, to)).map((r) => toNode(r))
  for (const n of moved) {
    const before = nodeState({ parentId: n.parentId, data: { ...n.data, iteration: from } })
    outbox.changes.push(nodeChange(revertOf ? 'revert' : 'update', n, before, nodeState(n), revertOf))
    outbox.events.push({ type: 'node.updated', node: n, ...(revertOf ? { revert: true as const } : {}) })
  }
  return moved
}

// ---- what a node write's answer shows (add, restore, classify, batch, revert) ----

/** After an add or batch under the cap: the advisory when it reached or crossed it. */
export async function capAdvisory(ctx: WriteCtx, capped: { ownerId: string; cap: number } | null): Promise<void> {
  if (!capped) return
  const current = await q.countOwned(ctx.deps.db, capped.ownerId)
  if (current >= capped.cap) {
    ctx.advisories.push({ type: 'node_cap_reached', current, node_cap: capped.cap })
    ctx.tips.push(`You have reached the free plan's ${capped.cap}-node cap: further adds are refused until you delete nodes.`)
  }
}

/** The memo inbox threshold past which writes suggest the task-curate workflow. */
export const MEMO_INBOX_THRESHOLD = 20

/**
 * The advisory when the project's memo inbox overflows. `counted`: the count, read earlier in the
 * write (an add of a task, which adds no memo: it is not classified yet, and reads them in the
 * statement that reserves its id).
 */
export async function inboxAdvisory(ctx: WriteCtx, counted?: number): Promise<void> {
  const memos = counted ?? (await openMemos(ctx))
  if (memos > MEMO_INBOX_THRESHOLD)
    ctx.advisories.push({ type: 'inbox_overflow', memos, threshold: MEMO_INBOX_THRESHOLD, suggestedFlow: 'task-curate' })
}

/** `_meta.focus` after a write: the node, and a complete POST /view-command body that shows it. */
export function focus(projectId: string, nodeId: string) {
  return { nodeId, viewCommand: { projectId, command: { type: 'selectNode', nodeId } } }
}

/**
 * `_meta` of a write: its `summary` (a batch's, a revert's) and its tips joined, the first
 * advisory, and `focus` when given.
 */
export function writeMeta(
  ctx: WriteCtx,
  { summary, focus }: { summary?: string; focus?: Record<string, unknown> } = {},
): Record<string, unknown> {
  const meta: Record<string, unknown> = {}
  const tips = summary === undefined ? ctx.tips : [summary, ...ctx.tips]
  if (tips.length) meta._tip = tips.join(' ')
  if (ctx.advisories.length) meta.advisory = ctx.advisories[0]
  if (ctx.advisories.length > 1) meta.advisories = ctx.advisories
  if (focus) meta.focus = focus
  return meta
}

// ---- reads ----

export async function listNodes(deps: Deps, user: User, raw: Record<string, string>) {
  const { project, input: query } = await afterAccess((id) => requireProject(deps, user, id), 'query', NodesQuery, raw)
  const key = `nodes\n${query.type ?? ''}\n${query.iteration === undefined ? '' : `=${query.iteration}`}`
  return deps.reads.answer(project.id, key, { claims: true }, () => nodesAnswer(deps, project.id, query))
}

async function nodesAnswer(deps: Deps, projectId: string, query: { type?: string; iteration?: string }) {
  const project = { id: projectId }
  const [rows, counts, iterations, claims] = await Promise.all([
    q.list(deps.db, project.id, query.type ?? null, query.iteration ?? null),
    q.countByType(deps.db, project.id),
    readIterations(deps.db, project.id),
    liveClaims(deps.db, project.id, deps.now()),
  ])
  const nodeCounts = Object.fromEntries(NODE_TYPES.map((t) => [t, counts.find((c) => c.type === t)?.count ?? 0]))
  const active = iterations.filter((i) => i.status === 'active').map((i) => i.name)
  const meta: Record<string, unknown> = {
    currentIteration: currentOf(iterations)?.name ?? null,
    iterations: { active, total: iterations.length },
    nodeCounts,
  }
  if (query.iteration !== undefined && !iterations.some((i) => i.name === query.iteration))
    meta._tip = `No iteration is named ${query.iteration}; active: ${active.join(', ')}`
  return { nodes: rows.map((r) => withClaim(toNode(r), claims)), _meta: meta }
}

export async function listChangelog(deps: Deps, user: User, query: Record<string, string>) {
  const { project, input: checked } = await afterAccess((id) => requireProject(deps, user, id), 'query', ChangelogQuery, query)
  const limit = checked.limit === undefined ? 100 : Number(checked.limit)
  const rows = await q.changelogList(deps.db, project.id, limit)
  return {
    changelog: rows.map((r) => ({
      id: Number(r.id),
      nodeId: r.node_id,
      action: r.action,
      node: r.node,
      deletedAt: new Date(r.deleted_at).toISOString(),
    })),
  }
}

/** The type of each of `ids` that is a node of the project (for other modules: the view's targets). */
export async function nodeTypesOf(db: Deps['db'], projectId: string, ids: string[]): Promise<Map<string, string>> {
  return new Map((await q.getMany(db, projectId, ids)).map((r) => [r.id, r.type]))
}

// The stored nodes, for the modules that read them (tree, work, workflow): reads only, each named
// for what it reads. Other modules write nodes through one call into this module: a node action's
// handler above, a batch's ./batch.ts `batch`, a revert's ./undo.ts `undoAll`, each making the
// same three calls on a WriteCtx (./read.ts, ./rules.ts, ./write.ts) where a node goes through its
// rules; `moveIterationNodes`, for an iteration renamed or deleted, moves its nodes in one
// statement without them (./write.ts lists every writer of node data).

/** Every node of the project. */
export const readProjectNodes = (db: Db, projectId: string) => q.list(db, projectId, null, null)

/** The nodes of `ids` that the project has (in no order). */
export const readNodesById = (db: Db, projectId: string, ids: string[]) => q.getMany(db, projectId, ids)

/** The nodes of `ids` with every ancestor of each (GET /ready's items). */
export const readWithAncestors = (db: Db, projectId: string, ids: string[]) => q.withAncestors(db, projectId, ids)

/** The nodes of `rootIds` with everything beneath them, each with its depth under its root. */
export const readSubtrees = (db: Db, projectId: string, rootIds: string[]) => q.subtree(db, projectId, rootIds)

/** The ancestors of `id`, root first. */
export const readAncestors = (db: Db, projectId: string, id: string) => q.ancestors(db, projectId, id)

/** The other children of `parentId` than `id`. */
export const readSiblings = (db: Db, projectId: string, parentId: string, id: string) => q.siblings(db, projectId, parentId, id)

/** The siblings of `id` (the other children of its parent). */
export const readSiblingsOf = (db: Db, projectId: string, id: string) => q.siblingsOf(db, projectId, id)
export type { NodeRow, TreeRow } from './queries'
