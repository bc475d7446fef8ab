import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { ApiError, ValidationError } from '../http/errors'
import { type Node, toNode } from '../nodes/model'
import * as q from '../nodes/queries'
import { requireProject } from '../projects/access'

export const DIRECTIONS = ['up', 'down', 'lateral', 'context'] as const
const SUBTREE_TIP_OVER = 50

type Depthed = Node & { depth: number }

/** Lay a subtree out depth-first (pre-order), children in creation order. Rows come sorted by depth then creation. */
function depthFirst(rows: q.TreeRow[], rootId: string): Depthed[] {
  const children = new Map<string, q.TreeRow[]>()
  for (const r of rows) if (r.parent_id) (children.get(r.parent_id) ?? children.set(r.parent_id, []).get(r.parent_id)!).push(r)
  const out: Depthed[] = []
  const root = rows.find((r) => r.id === rootId)
  if (!root) return out
  const stack: q.TreeRow[] = [root]
  while (stack.length) {
    const r = stack.pop()!
    out.push({ ...toNode(r, true), depth: r.depth })
    const kids = children.get(r.id) ?? []
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!)
  }
  return out
}

const notFound = (id: string) =>
  new ApiError(404, `Node ${id} not found`, { _meta: { _tip: 'List node ids with GET /api/v1/nodes?projectId=…' } })

/**
 * GET /tree in its four directions (api.md). Each direction is one to three queries, started
 * beside the access check rather than after it (one round trip less); nothing is returned
 * unless the check passes.
 */
export async function walk(deps: Deps, user: User, query: { projectId?: string; nodeId?: string; direction?: string }) {
  const access = requireProject(deps.db, user, query.projectId)
  access.catch(() => {}) // awaited below; an early refusal must not count as unhandled
  if (!DIRECTIONS.includes(query.direction as any)) throw new ApiError(400, `direction must be one of: ${DIRECTIONS.join(', ')}`)
  if (!query.nodeId) throw new ValidationError(['nodeId is required'])
  const reads = read(deps, String(query.projectId), query.nodeId, query.direction!)
  reads.catch(() => {})
  await access
  return reads
}

async function read(deps: Deps, projectId: string, nodeId: string, direction: string) {
  const db = deps.db
  const project = { id: projectId }
  switch (direction) {
    case 'up': {
      const nodes = (await q.ancestors(db, project.id, nodeId)).map((r) => toNode(r, true))
      if (!nodes.length) throw notFound(nodeId)
      return { nodes, path: nodes.map((n) => n.id) }
    }
    case 'down': {
      const nodes = depthFirst(await q.subtree(db, project.id, [nodeId]), nodeId)
      if (!nodes.length) throw notFound(nodeId)
      const meta: Record<string, unknown> = { nodeCount: nodes.length, maxDepth: Math.max(...nodes.map((n) => n.depth)) }
      if (nodes.length > SUBTREE_TIP_OVER)
        meta._tip = `This subtree has ${nodes.length} nodes. For a narrower read, walk down from one of its children, or use GET /nodes?type=… or GET /search.`
      return { nodes, _meta: meta }
    }
    case 'lateral': {
      const [self] = await q.getMany(db, project.id, [nodeId])
      if (!self) throw notFound(nodeId)
      if (!self.parent_id) return { nodes: [], _meta: { _tip: `${nodeId} is a root ${self.type}: it has no parent, so no siblings.` } }
      return { nodes: (await q.siblings(db, project.id, self.parent_id, nodeId)).map((r) => toNode(r, true)) }
    }
    default: {
      const [up, sub, sibs] = await Promise.all([
        q.ancestors(db, project.id, nodeId),
        q.subtree(db, project.id, [nodeId]),
        q.siblingsOf(db, project.id, nodeId),
      ])
      if (!up.length) throw notFound(nodeId)
      const self = up[0]!
      const siblings = sibs.map((r) => toNode(r, true))
      const ancestors = up.map((r) => toNode(r, true))
      return {
        ancestors,
        path: ancestors.map((n) => n.id),
        siblings,
        children: depthFirst(sub, nodeId).slice(1),
        ...(self.parent_id ? {} : { _meta: { _tip: `${nodeId} is a root ${self.type}: it has no siblings.` } }),
      }
    }
  }
}
