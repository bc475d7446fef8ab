// The shapes of agents-and-app.md (1) and the spread-first order of a claim with count. Which
// work item is ready is kept by the database, in every write's transaction (work_items,
// sql/migrations/0016-work-state.sql), so a read never walks the whole project.

import type { NodeData } from '../ports/node-data'

export interface TreeNode {
  id: string
  rev?: string
  type: string
  parentId: string | null
  data: NodeData
}

/** Why a node is or is not ready; `not_work` for anything that is not a job or a do-it task. */
export type WorkState = 'ready' | 'claimed' | 'done' | 'blocked' | 'not_work'

export interface ReadyItem {
  node: TreeNode
  ancestors: { id: string; type: string; label: string }[]
  blockedBy: string[]
}

/**
 * Ready items (in GET /ready's order) in the order claims take them with `count`: spread first,
 * one per approach (`group`; null for a task, which is its own) in GET /ready's order, then a
 * second per approach, and so on. `round` is 0 for the first of each approach.
 */
export function spreadFirst<T extends { id: string; group: string | null }>(ready: T[]): (T & { round: number })[] {
  const seen = new Map<string, number>()
  const ranked = ready.map((n, i) => {
    const group = n.group ?? `self:${n.id}`
    const round = seen.get(group) ?? 0
    seen.set(group, round + 1)
    return { ...n, round, i }
  })
  return ranked.sort((a, b) => a.round - b.round || a.i - b.i).map(({ i: _, ...r }) => r as T & { round: number })
}
