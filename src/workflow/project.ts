import type { Db } from '../db'
import { LATER } from '../iterations/model'
import { type IterationRow, readIterations } from '../iterations/service'
import { type Node, toNode } from '../nodes/model'
import { readProjectNodes } from '../nodes/service'
import { renderOutline } from '../tree/outline'
import { LIMITS } from './model'

/** The project as one step of a flow reads it: every node and iteration. */
export interface Snapshot {
  nodes: Node[]
  byId: Map<string, Node>
  iterations: IterationRow[]
}

export async function loadSnapshot(db: Db, projectId: string): Promise<Snapshot> {
  const [rows, iterations] = await Promise.all([readProjectNodes(db, projectId), readIterations(db, projectId)])
  const nodes = rows.map((r) => toNode(r))
  return { nodes, byId: new Map(nodes.map((n) => [n.id, n])), iterations }
}

export const isOpen = (n: Node) => n.data?.status !== 'done'
export const inLater = (n: Node) => (n.data?.iteration ?? LATER) === LATER

/** The open tasks, oldest first: the inbox task-curate works on. */
export const inbox = (snap: Snapshot) => snap.nodes.filter((n) => n.type === 'task' && isOpen(n))

/** Open jobs in Later, oldest first: what phase-assign plans. */
export const unplannedJobs = (snap: Snapshot) => snap.nodes.filter((n) => n.type === 'job' && isOpen(n) && inLater(n))

/** The outline of a prompt: the whole project, or only its hierarchy (when the prompt lists tasks itself). */
export function treeText(snap: Snapshot, projectId: string, opts: { tasks: boolean }): string {
  const nodes = opts.tasks ? snap.nodes : snap.nodes.filter((n) => n.type !== 'task')
  return renderOutline(nodes, LIMITS.treeBudget, { title: `Project ${projectId}:` }).text
}

/** `goal-1 › need-2 › approach-3 "Weekly summary"`: the ids above a node, its parent's label clipped. */
export function pathOf(snap: Snapshot, node: Node): string {
  const parts: string[] = []
  let at = node.parentId ? snap.byId.get(node.parentId) : undefined
  for (let depth = 0; at && depth < 10; depth++) {
    const label = String(at.data?.label ?? '')
    parts.unshift(depth === 0 ? `${at.id} ${JSON.stringify(label.length > 60 ? `${label.slice(0, 59)}…` : label)}` : at.id)
    at = at.parentId ? snap.byId.get(at.parentId) : undefined
  }
  return parts.join(' › ')
}
