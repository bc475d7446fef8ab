import type { User } from '../accounts/model'
import { type ClaimView, liveClaims, withClaim } from '../claims/service'
import type { Deps } from '../deps'
import { RefusalError } from '../errors'
import { afterAccess } from '../http/action-schema'
import { type Node, toNode } from '../nodes/model'
import { readAncestors, readNodesById, readProjectNodes, readSiblings, readSiblingsOf, readSubtrees, type TreeRow } from '../nodes/service'
import { requireProject } from '../projects/access'
import { OutlineQuery, TOKEN_BUDGET, TreeOutlineQuery, TreeWalkQuery } from './model'
import { OUTLINE_BUDGET, renderOutline } from './outline'
import { renderTokenOutline } from './token-outline'

const SUBTREE_TIP_OVER = 50

type Depthed = Node & { depth: number }

/** Lay a subtree out depth-first (pre-order), children in creation order. Rows come sorted by depth then creation. */
function depthFirst(rows: TreeRow[], rootId: string): Depthed[] {
  const children = new Map<string, TreeRow[]>()
  for (const r of rows) if (r.parent_id) (children.get(r.parent_id) ?? children.set(r.parent_id, []).get(r.parent_id)!).push(r)
  const out: Depthed[] = []
  const root = rows.find((r) => r.id === rootId)
  if (!root) return out
  const stack: TreeRow[] = [root]
  while (stack.length) {
    const r = stack.pop()!
    out.push({ ...toNode(r, true), depth: r.depth })
    const kids = children.get(r.id) ?? []
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!)
  }
  return out
}

const notFound = (id: string) =>
  new RefusalError(404, `Node ${id} not found`, { _meta: { _tip: 'List node ids with GET /api/v1/nodes?projectId=…' } })

/**
 * GET /tree in its four directions (docs/reference/reads.md). Each direction is one to three queries, started
 * beside the access check rather than after it (one round trip less); nothing is returned
 * unless the check passes.
 */
export async function walk(deps: Deps, user: User, query: Record<string, string>) {
  if (query.format !== undefined) return outline(deps, user, query)
  const {
    project,
    input: { direction, nodeId },
  } = await afterAccess((id) => requireProject(deps, user, id), 'query', TreeWalkQuery, query)
  return deps.reads.answer(project.id, `tree\n${direction}\n${nodeId}`, { claims: true }, async () => {
    const [result, claims] = await Promise.all([read(deps, project.id, nodeId, direction), liveClaims(deps.db, project.id, deps.now())])
    return claims.size ? withClaims(result, claims) : result
  })
}

/** The walk with each node's live claim beside its data (docs/agents.md). */
function withClaims<T extends Record<string, unknown>>(result: T, claims: Map<string, ClaimView>): T {
  const out: Record<string, unknown> = { ...result }
  for (const part of ['nodes', 'ancestors', 'siblings', 'children'])
    if (Array.isArray(out[part])) out[part] = (out[part] as Node[]).map((n) => withClaim(n, claims))
  return out as T
}

async function read(deps: Deps, projectId: string, nodeId: string, direction: string) {
  const db = deps.db
  const project = { id: projectId }
  switch (direction) {
    case 'up': {
      const nodes = (await readAncestors(db, project.id, nodeId)).map((r) => toNode(r, true))
      if (!nodes.length) throw notFound(nodeId)
      return { nodes, path: nodes.map((n) => n.id) }
    }
    case 'down': {
      const nodes = depthFirst(await readSubtrees(db, project.id, [nodeId]), nodeId)
      if (!nodes.length) throw notFound(nodeId)
      const meta: Record<string, unknown> = { nodeCount: nodes.length, maxDepth: Math.max(...nodes.map((n) => n.depth)) }
      if (nodes.length > SUBTREE_TIP_OVER)
        meta._tip = `This subtree has ${nodes.length} nodes. For a narrower read, walk down from one of its children, or use GET /nodes?type=… or GET /search.`
      return { nodes, _meta: meta }
    }
    case 'lateral': {
      const [self] = await readNodesById(db, project.id, [nodeId])
      if (!self) throw notFound(nodeId)
      if (!self.parent_id) return { nodes: [], _meta: { _tip: `${nodeId} is a root ${self.type}: it has no parent, so no siblings.` } }
      return { nodes: (await readSiblings(db, project.id, self.parent_id, nodeId)).map((r) => toNode(r, true)) }
    }
    default: {
      const [up, sub, sibs] = await Promise.all([
        readAncestors(db, project.id, nodeId),
        readSubtrees(db, project.id, [nodeId]),
        readSiblingsOf(db, project.id, nodeId),
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

/**
 * GET /tree?format=outline (additive): the project, or the path to `nodeId` and its subtree,
 * as a text outline within `budget` characters (tree/outline.ts says what is kept and how the
 * rest is summarised). `direction` does not apply.
 */
async function outline(deps: Deps, user: User, query: Record<string, string>) {
  const { project, input: checked } = await afterAccess((id) => requireProject(deps, user, id), 'query', TreeOutlineQuery, query)
  const budget = checked.budget === undefined ? OUTLINE_BUDGET.default : Number(checked.budget)
  const key = `tree-outline\n${budget}\n${query.nodeId ?? ''}`
  return deps.reads.answer(project.id, key, {}, () => textOutline(deps, project.id, query.nodeId, budget))
}

async function textOutline(deps: Deps, projectId: string, nodeId: string | undefined, budget: number) {
  const project = { id: projectId }
  const query = { nodeId }
  let nodes: Node[]
  let pinned: string[] = []
  if (query.nodeId) {
    const [up, sub] = await Promise.all([
      readAncestors(deps.db, project.id, query.nodeId),
      readSubtrees(deps.db, project.id, [query.nodeId]),
    ])
    if (!up.length) throw notFound(query.nodeId)
    pinned = up.map((r) => r.id).reverse()
    nodes = [...up.slice(1), ...sub].map((r) => toNode(r))
  } else nodes = (await readProjectNodes(deps.db, project.id)).map((r) => toNode(r))
  const title = query.nodeId ? `Project ${project.id}, around ${query.nodeId}:` : `Project ${project.id}:`
  const out = renderOutline(nodes, budget, { title, pinned })
  return {
    outline: out.text,
    _meta: {
      format: 'outline',
      budget,
      chars: out.text.length,
      nodeCount: out.nodeCount,
      shown: out.shown,
      ...(out.shown < out.nodeCount
        ? {
            _tip: `${out.nodeCount - out.shown} node(s) are summarised as counts; raise budget (at most ${OUTLINE_BUDGET.max}) or pass nodeId for a narrower outline.`,
          }
        : {}),
    },
  }
}

/**
 * The o200k_base tokenizer, imported by the first outline request rather than at start: its
 * tables take ~0.7 s to load and ~70 MB resident, which a server nobody asks for outlines
 * should not pay. A failed import is tried again by the next request.
 */
let tokenizer: Promise<(text: string) => number> | undefined
const loadTokenizer = () =>
  (tokenizer ??= import('gpt-tokenizer/encoding/o200k_base').then(
    // special tokens such as <|endoftext|> in a label count as the plain text they are, never an error
    (m) => {
      const plain = { disallowedSpecial: new Set<string>() }
      return (text: string) => m.countTokens(text, plain)
    },
    (err) => {
      tokenizer = undefined
      throw err
    },
  ))

/**
 * GET /outline (docs/outline-and-mcp.md): the project, or the subtree of `nodeId`, as
 * indented markdown within `budget` o200k_base tokens (tree/token-outline.ts says what is kept
 * and how the rest is folded). Access as GET /tree.
 */
export async function tokenOutline(deps: Deps, user: User, query: Record<string, string>) {
  const count = loadTokenizer()
  count.catch(() => {}) // awaited below, after the checks
  const { project, input: checked } = await afterAccess((id) => requireProject(deps, user, id), 'query', OutlineQuery, query)
  const budget = checked.budget === undefined ? TOKEN_BUDGET.default : Number(checked.budget)
  const key = `outline\n${budget}\n${query.nodeId ?? ''}`
  return deps.reads.answer(project.id, key, { claims: true }, () => modelOutline(deps, project.id, query.nodeId, budget, count))
}

async function modelOutline(
  deps: Deps,
  projectId: string,
  nodeId: string | undefined,
  budget: number,
  count: Promise<(text: string) => number>,
) {
  const project = { id: projectId }
  const query = { nodeId }
  const [rows, claims] = await Promise.all([
    query.nodeId ? readSubtrees(deps.db, project.id, [query.nodeId]) : readProjectNodes(deps.db, project.id),
    liveClaims(deps.db, project.id, deps.now()),
  ])
  if (query.nodeId && !rows.length) throw notFound(query.nodeId)
  const claimOf = (id: string) => claims.get(id)?.agent
  const out = renderTokenOutline({ nodes: rows.map((r) => toNode(r)), budget, count: await count, claimOf })
  const elided = out.nodeCount - out.shown
  return {
    outline: out.text,
    tokens: out.tokens,
    elided,
    _meta: {
      budget,
      nodeCount: out.nodeCount,
      shown: out.shown,
      ...(elided
        ? {
            _tip: `${elided} node(s) are folded into "… more" lines; raise budget (at most ${TOKEN_BUDGET.max}) or pass nodeId for one subtree.`,
          }
        : out.nodeCount
          ? {}
          : { _tip: 'This project has no nodes yet; add a goal or a task with POST /api/v1/mutate.' }),
    },
  }
}
