// The readiness rule of agents-and-app.md (1), pure: the project's nodes, iterations and live
// claims in; each work item's state and the order of GET /ready out.

import type { NodeData } from '../ports/node-data'

export interface TreeNode {
  id: string
  type: string
  parentId: string | null
  data: NodeData
}
export interface IterationInfo {
  name: string
  status: string
  system: boolean
}

/** Why a node is or is not ready; `not_work` for anything that is not a job or a do-it task. */
export type WorkState = 'ready' | 'claimed' | 'done' | 'blocked' | 'not_work'

export interface ReadyItem {
  node: TreeNode
  ancestors: { id: string; type: string; label: string }[]
  blockedBy: string[]
}

export const isWork = (n: TreeNode) => n.type === 'job' || (n.type === 'task' && n.data.kind === 'do-it')

/** The project as the rule reads it. `nodes` in creation order. */
export function assess(nodes: TreeNode[], iterations: IterationInfo[], claimed: Set<string>) {
  const byId = new Map(nodes.map((n) => [n.id, n]))
  const jobs = new Map<string, { all: number; done: number }>()
  for (const n of nodes)
    if (n.type === 'job' && n.parentId) {
      const c = jobs.get(n.parentId) ?? { all: 0, done: 0 }
      c.all++
      if (n.data.status === 'done') c.done++
      jobs.set(n.parentId, c)
    }
  /** A blocker is clear when gone, resolved or retired, or when it has jobs and all are done. */
  const clear = (id: string) => {
    const a = byId.get(id)
    if (a?.type !== 'approach') return true
    if (a.data.approachStatus === 'resolved' || a.data.approachStatus === 'retired') return true
    const c = jobs.get(id)
    return !!c && c.all > 0 && c.all === c.done
  }
  const goalOf = (n: TreeNode) => {
    let at: TreeNode | undefined = n
    while (at && at.type !== 'goal') at = at.parentId ? byId.get(at.parentId) : undefined
    return at
  }
  /** The ids still blocking a job (its approach's blockedBy that are not clear), worked out once per approach. */
  const blockedByApproach = new Map<string, string[]>()
  const blockers = (n: TreeNode): string[] => {
    if (n.type !== 'job' || !n.parentId) return []
    let found = blockedByApproach.get(n.parentId)
    if (!found) {
      const list: unknown = byId.get(n.parentId)?.data.blockedBy
      // a Set: a list stored before blockedBy was bounded may repeat one id thousands of times
      found = Array.isArray(list) ? [...new Set(list)].filter((id): id is string => typeof id === 'string' && !clear(id)) : []
      blockedByApproach.set(n.parentId, found)
    }
    return found
  }
  const state = (n: TreeNode): WorkState => {
    if (!isWork(n)) return 'not_work'
    if (n.data.status === 'done') return 'done'
    if (n.type === 'job') {
      const approach = n.parentId ? byId.get(n.parentId) : undefined
      const status = approach?.data.approachStatus
      if (status === 'retired' || status === 'resolved') return 'blocked'
      if (blockers(n).length) return 'blocked'
      if (goalOf(n)?.data.goalStatus === 'done') return 'blocked'
    }
    return claimed.has(n.id) ? 'claimed' : 'ready'
  }
  const ancestors = (n: TreeNode) => {
    const out: ReadyItem['ancestors'] = []
    for (let at = n.parentId ? byId.get(n.parentId) : undefined; at; at = at.parentId ? byId.get(at.parentId) : undefined)
      out.unshift({ id: at.id, type: at.type, label: String(at.data.label ?? '') })
    return out
  }

  // GET /ready's order: urgent tasks; the current iteration, other active ones by sortOrder,
  // then Later; jobs under a focus goal; creation
  const current = iterations.find((i) => i.status === 'active' && !i.system)
  const rank = new Map<string, number>()
  if (current) rank.set(current.name, 0)
  let next = 1
  for (const i of iterations) if (i.status === 'active' && !i.system && i !== current) rank.set(i.name, next++)
  for (const i of iterations) if (i.system) rank.set(i.name, iterations.length + 1)
  const created = new Map(nodes.map((n, k) => [n.id, k]))
  const key = (n: TreeNode) => [
    n.type === 'task' && n.data.urgent === true ? 0 : 1,
    (n.data.iteration === undefined ? undefined : rank.get(n.data.iteration)) ?? iterations.length + 2,
    n.type === 'job' && goalOf(n)?.data.goalStatus === 'focus' ? 0 : 1,
    created.get(n.id)!,
  ]

  return {
    byId,
    state,
    blockers,
    /** Every work item in GET /ready's order, with its state. */
    ordered(iteration?: string): { node: TreeNode; state: WorkState }[] {
      const work = nodes.filter((n) => isWork(n) && (iteration === undefined || n.data.iteration === iteration))
      const keys = new Map(work.map((n) => [n.id, key(n)]))
      const compare = (a: TreeNode, b: TreeNode) => {
        const ka = keys.get(a.id)!
        const kb = keys.get(b.id)!
        for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i]! - kb[i]!
        return 0
      }
      return work.sort(compare).map((node) => ({ node, state: state(node) }))
    },
    item: (n: TreeNode): ReadyItem => ({
      node: { id: n.id, type: n.type, parentId: n.parentId, data: n.data },
      ancestors: ancestors(n),
      blockedBy: blockers(n),
    }),
  }
}

/**
 * Ready items in the order claims take them with `count`: spread first, one per approach (a task
 * its own) in GET /ready's order, then a second per approach, and so on.
 */
export function spreadFirst(ready: TreeNode[]): TreeNode[] {
  const seen = new Map<string, number>()
  const ranked = ready.map((n, i) => {
    const group = n.type === 'job' && n.parentId ? n.parentId : `self:${n.id}`
    const round = seen.get(group) ?? 0
    seen.set(group, round + 1)
    return { n, round, i }
  })
  return ranked.sort((a, b) => a.round - b.round || a.i - b.i).map((r) => r.n)
}
