import type { NodeData } from '../../ports/node-data'

/**
 * What the page knows: the project's nodes and iterations, and the view the person sees. View
 * commands change the view here, the same whether an agent sent them or the person clicked.
 */
export type NodeType = 'goal' | 'need' | 'approach' | 'job' | 'task'

export interface PlanNode {
  id: string
  /** the revision the page read (live.md, 1): every edit sends it back as ifRev */
  rev?: string
  type: NodeType
  parentId: string | null
  data: NodeData
  createdAt?: string
  /** a live claim by an agent (GET /nodes adds it; never the token) */
  claim?: { agent: string; expiresAt: string }
}

/** Who is present (live.md, 3): history.md's actor. */
export interface PresenceActor {
  userId: string
  userName: string
  agent?: string
  via: string
}
/** One presence on the plan: where an actor is, the field it edits, or the claim it holds. */
export interface PresenceEntry {
  actor: PresenceActor
  nodeId?: string
  field?: string
  note?: string
  claim?: true
}

export interface Iteration {
  name: string
  /** the revision the page read: its edits send it back as ifRev */
  rev?: string
  status: 'active' | 'done'
  system: boolean
  sortOrder: number
}

/** A command as GET /view/commands hands it over: the sender's fields plus the server's decision. */
export interface Command {
  id?: number
  type: string
  mode?: 'tree' | 'matrix'
  iterationName?: string
  nodeId?: string
  goalIds?: string[]
  switchTo?: 'matrix'
}

/** The five fields of the view state the page reports (docs/reference/view.md). */
export interface Shown {
  view_mode: 'tree' | 'matrix'
  selected_iteration: string | null
  expanded_nodes: string[]
  focused_goals: string[]
  selected_node: string | null
}

export const TYPE_NAMES: Record<NodeType, string> = { goal: 'Goal', need: 'Need', approach: 'Bet', job: 'Job', task: 'Task' }
export const CHILD_NAMES: Partial<Record<NodeType, string>> = { goal: 'need', need: 'bet', approach: 'job' }

/** The type a new child gets (goal → need → approach → job), and the parent type a node needs. */
export const CHILD_TYPE: Partial<Record<NodeType, NodeType>> = { goal: 'need', need: 'approach', approach: 'job' }
export const PARENT_TYPE: Partial<Record<NodeType, NodeType>> = { need: 'goal', approach: 'need', job: 'approach' }

export class Plan {
  nodes = new Map<string, PlanNode>()
  children = new Map<string, PlanNode[]>()
  iterations: Iteration[] = []

  set(nodes: PlanNode[], iterations: Iteration[]) {
    this.nodes = new Map(nodes.map((n) => [n.id, n]))
    this.children = new Map()
    for (const n of nodes)
      if (n.parentId && this.nodes.has(n.parentId)) {
        const list = this.children.get(n.parentId)
        if (list) list.push(n)
        else this.children.set(n.parentId, [n])
      }
    this.iterations = iterations
  }

  /** One node as a write returned it: replaced in place, or added at the end. */
  upsert(n: PlanNode) {
    const old = this.nodes.get(n.id)
    const next = { ...old, ...n }
    const nodes = [...this.nodes.values()].map((x) => (x.id === n.id ? next : x))
    if (!old) nodes.push(next)
    this.set(nodes, this.iterations)
  }

  /** A node and everything beneath it, parents before children. */
  subtree(id: string): PlanNode[] {
    const out: PlanNode[] = []
    const walk = (n: PlanNode | undefined) => {
      if (!n) return
      out.push(n)
      for (const k of this.kids(n.id)) walk(k)
    }
    walk(this.nodes.get(id))
    return out
  }

  drop(id: string) {
    const gone = new Set(this.subtree(id).map((n) => n.id))
    this.set(
      [...this.nodes.values()].filter((n) => !gone.has(n.id)),
      this.iterations,
    )
  }

  kids(id: string): PlanNode[] {
    return this.children.get(id) ?? []
  }

  /** Ids from the parent up to the root (a corrupt cycle stops after 16 steps). */
  ancestors(id: string): string[] {
    const out: string[] = []
    for (let n = this.nodes.get(id); n?.parentId && out.length < 16; n = this.nodes.get(n.parentId)) out.push(n.parentId)
    return out
  }

  goalOf(id: string): string | null {
    return [id, ...this.ancestors(id)].find((x) => this.nodes.get(x)?.type === 'goal') ?? null
  }

  ofType(type: NodeType): PlanNode[] {
    return [...this.nodes.values()].filter((n) => n.type === type)
  }

  /** Jobs beneath a node (itself included when it is one), with how many are done. */
  progress(id: string): { done: number; total: number } {
    let done = 0
    let total = 0
    const stack = [id]
    while (stack.length) {
      const n = this.nodes.get(stack.pop()!)
      if (!n) continue
      if (n.type === 'job') {
        total++
        if (n.data.status === 'done') done++
      }
      for (const k of this.kids(n.id)) stack.push(k.id)
    }
    return { done, total }
  }

  /** Iterations the matrix shows: the active ones in display order, plus a done one when it is the selected one. */
  columns(selected: string | null): Iteration[] {
    return this.iterations.filter((it) => it.status === 'active' || it.name === selected)
  }

  /** The current iteration: the first active, non-system one in display order (docs/reference/resources.md). */
  current(): string | null {
    return this.iterations.find((it) => it.status === 'active' && !it.system)?.name ?? null
  }
}

export class View {
  mode: 'tree' | 'matrix' = 'tree'
  iteration: string | null = null
  expanded = new Set<string>()
  focused: string[] = []
  selected: string | null = null
  /** the node to bring into sight after the next render (zoomToNode, selectNode) */
  zoomTo: string | null = null

  constructor(private readonly plan: Plan) {}

  adopt(s: Shown) {
    this.mode = s.view_mode
    this.iteration = s.selected_iteration
    this.expanded = new Set(s.expanded_nodes)
    this.focused = [...s.focused_goals]
    this.selected = s.selected_node
  }

  shown(): Shown {
    // expanded nodes in the order the tree shows them, so a reader gets a stable list
    const order = new Map([...this.plan.nodes.keys()].map((id, i) => [id, i]))
    const expanded = [...this.expanded].sort((a, b) => (order.get(a) ?? 1e9) - (order.get(b) ?? 1e9))
    return {
      view_mode: this.mode,
      selected_iteration: this.iteration,
      expanded_nodes: expanded,
      focused_goals: [...this.focused],
      selected_node: this.selected,
    }
  }

  /** Open every ancestor, so the node is in sight in the tree. */
  reveal(id: string) {
    for (const a of this.plan.ancestors(id)) this.expanded.add(a)
  }

  /** Apply one view command (docs/reference/view.md). A command on a node that no longer exists changes nothing. */
  apply(c: Command) {
    const known = (id: string | undefined): id is string => !!id && this.plan.nodes.has(id)
    switch (c.type) {
      case 'setViewMode':
        if (c.mode === 'tree' || c.mode === 'matrix') this.mode = c.mode
        break
      case 'selectIteration':
        if (c.iterationName) this.iteration = c.iterationName
        break
      case 'selectNode':
      case 'zoomToNode':
        if (c.switchTo) this.mode = c.switchTo
        if (c.type === 'selectNode') this.selected = known(c.nodeId) ? c.nodeId : null
        if (known(c.nodeId)) {
          this.reveal(c.nodeId)
          this.zoomTo = c.nodeId
        }
        break
      case 'expandNode':
        if (known(c.nodeId)) this.expanded.add(c.nodeId)
        break
      case 'collapseNode':
        if (c.nodeId) this.expanded.delete(c.nodeId)
        break
      case 'expandAll': {
        if (!known(c.nodeId)) break
        const stack = [c.nodeId]
        while (stack.length) {
          const id = stack.pop()!
          const kids = this.plan.kids(id)
          if (kids.length || id === c.nodeId) this.expanded.add(id)
          for (const k of kids) stack.push(k.id)
        }
        break
      }
      case 'focusGoals':
        this.focused = (c.goalIds ?? []).filter((id) => this.plan.nodes.get(id)?.type === 'goal')
        break
    }
  }

  /** After the plan changed: forget nodes that are gone. True when the view changed. */
  prune(): boolean {
    const before = JSON.stringify(this.shown())
    for (const id of this.expanded) if (!this.plan.nodes.has(id)) this.expanded.delete(id)
    this.focused = this.focused.filter((id) => this.plan.nodes.has(id))
    if (this.selected && !this.plan.nodes.has(this.selected)) this.selected = null
    return JSON.stringify(this.shown()) !== before
  }

  visibleGoals(): PlanNode[] {
    const goals = this.plan.ofType('goal')
    return this.focused.length ? goals.filter((g) => this.focused.includes(g.id)) : goals
  }
}
