import type { Node } from '../nodes/model'
import type { FieldName } from '../ports/node-data'

/**
 * A project (or one node's neighbourhood) as a compact text outline for a language model,
 * within a budget of characters. Every shown node keeps its id (`<type>-<n>`, so its type),
 * its label and its status fields, indented under its parent, so the path to it is the
 * lines above it. Nodes are admitted breadth-first (goals, then needs, approaches, jobs;
 * tasks last), so a small budget keeps the upper levels whole; what does not fit is
 * summarised under its nearest shown ancestor as counts per type ("… 9 more below: 2
 * approaches, 7 jobs (3 done)").
 */
export const OUTLINE_BUDGET = { default: 12_000, min: 200, max: 200_000 } as const
const LABEL_CHARS = 100

export type Counts = Map<string, { all: number; done: number }>

export interface Outline {
  text: string
  /** nodes in the rendered set */
  nodeCount: number
  /** nodes shown on a line of their own */
  shown: number
}

export const PLURAL: Record<string, string> = { goal: 'goals', need: 'needs', approach: 'approaches', job: 'jobs', task: 'tasks' }
export const TYPE_ORDER = ['goal', 'need', 'approach', 'job', 'task']

/** A goal's status, an approach's status and size: the first facts of both outlines (this one and token-outline.ts). */
export function planFacts(n: Node): string[] {
  const d = n.data ?? {}
  const out: string[] = []
  if (n.type === 'goal' && d.goalStatus) out.push(d.goalStatus)
  if (n.type === 'approach') {
    if (d.approachStatus) out.push(d.approachStatus)
    if (d.size) out.push(d.size)
  }
  return out
}

type Fact = (d: Node['data'], type: Node['type']) => string | null | undefined
const isWork = (type: string) => type === 'job' || type === 'task'

/**
 * What a node's line shows of each node field, so a new field does not compile until the outline
 * says: the plan facts first (planFacts), then these facts in this order, or nothing.
 */
const SHOWN: Record<FieldName, Fact | 'label' | 'planFacts' | 'not shown'> = {
  label: 'label',
  goalStatus: 'planFacts',
  approachStatus: 'planFacts',
  size: 'planFacts',
  kano: (d, type) => (type === 'approach' ? d.kano : null),
  status: (d, type) => (isWork(type) ? (d.status === 'done' ? 'done' : 'open') : null),
  iteration: (d, type) => (isWork(type) && d.iteration ? `iteration: ${d.iteration}` : null),
  maturity: (d, type) => (isWork(type) ? d.maturity : null),
  kind: (d, type) => (isWork(type) ? d.kind : null),
  urgent: (d, type) => (isWork(type) && d.urgent ? 'urgent' : null),
  description: 'not shown',
  notes: 'not shown',
  measure: 'not shown',
  blockedBy: 'not shown',
  serves: 'not shown',
  externalRefs: 'not shown',
  demand: 'not shown',
  completedAt: 'not shown',
}
const FACTS = Object.values(SHOWN).filter((shown): shown is Fact => typeof shown === 'function')

/** The status fields a planner needs to see, per type, in one bracket. */
function facts(n: Node): string {
  const d = n.data ?? {}
  const out = [...planFacts(n), ...FACTS.flatMap((fact) => fact(d, n.type) || [])]
  return out.length ? ` [${out.join(', ')}]` : ''
}

export function nodeLine(n: Node): string {
  const raw = typeof n.data?.label === 'string' ? n.data.label : ''
  const label = raw.length > LABEL_CHARS ? `${raw.slice(0, LABEL_CHARS - 1)}…` : raw
  return `${n.id} ${JSON.stringify(label)}${facts(n)}`
}

function describe(counts: Counts): string {
  const parts: string[] = []
  for (const type of TYPE_ORDER) {
    const c = counts.get(type)
    if (!c) continue
    parts.push(`${c.all} ${c.all === 1 ? type : PLURAL[type]}${c.done ? ` (${c.done} done)` : ''}`)
  }
  return parts.join(', ')
}

export function add(into: Counts, from: Counts) {
  for (const [type, c] of from) {
    const t = into.get(type) ?? { all: 0, done: 0 }
    t.all += c.all
    t.done += c.done
    into.set(type, t)
  }
}

/**
 * Render `nodes` (any order) within `budget` characters. `pinned` ids (a node's ancestors)
 * are admitted before anything else.
 */
export function renderOutline(nodes: Node[], budget: number, opts: { title?: string; pinned?: string[] } = {}): Outline {
  const byId = new Map(nodes.map((n) => [n.id, n]))
  const children = new Map<string | null, Node[]>()
  for (const n of nodes) {
    const parent = n.parentId && byId.has(n.parentId) ? n.parentId : null
    const list = children.get(parent) ?? []
    list.push(n)
    children.set(parent, list)
  }
  const roots = children.get(null) ?? []
  const hierarchyRoots = roots.filter((n) => n.type !== 'task')
  const tasks = roots.filter((n) => n.type === 'task')

  // admission order: pinned, then breadth-first through the hierarchy, then tasks
  const order: Node[] = []
  const seen = new Set<string>()
  const admit = (n: Node) => {
    if (!seen.has(n.id)) {
      seen.add(n.id)
      order.push(n)
    }
  }
  for (const id of opts.pinned ?? []) {
    const n = byId.get(id)
    if (n) admit(n)
  }
  let level = hierarchyRoots
  while (level.length) {
    for (const n of level) admit(n)
    level = level.flatMap((n) => children.get(n.id) ?? [])
  }
  for (const n of tasks) admit(n)
  // anything a cycle or odd parentage left out still counts
  for (const n of nodes) admit(n)
  const rank = new Map(order.map((n, i) => [n.id, i]))

  // per-subtree counts, for the summaries
  const subtree = new Map<string, Counts>()
  const countsOf = (n: Node): Counts => {
    const known = subtree.get(n.id)
    if (known) return known
    const c: Counts = new Map([[n.type, { all: 1, done: n.data?.status === 'done' ? 1 : 0 }]])
    subtree.set(n.id, c) // set first: a cycle ends here
    for (const k of children.get(n.id) ?? []) add(c, countsOf(k))
    return c
  }
  for (const n of order.slice().reverse()) countsOf(n)

  const header = opts.title ? `${opts.title}\n` : ''
  const render = (k: number): string => {
    const lines: string[] = []
    const shown = (n: Node) => rank.get(n.id)! < k
    const walk = (list: Node[], depth: number) => {
      const hidden: Counts = new Map()
      for (const n of list) {
        if (shown(n)) {
          lines.push(`${'  '.repeat(depth)}- ${nodeLine(n)}`)
          walk(children.get(n.id) ?? [], depth + 1)
        } else add(hidden, countsOf(n))
      }
      if (hidden.size) lines.push(`${'  '.repeat(depth)}- … not shown: ${describe(hidden)}`)
    }
    walk(hierarchyRoots, 0)
    if (tasks.length) {
      lines.push('Tasks (standalone, outside the hierarchy):')
      walk(tasks, 0)
    }
    if (!nodes.length) lines.push('(no nodes yet)')
    return header + lines.join('\n')
  }

  // the largest prefix of the admission order that fits (length grows with k, nearly monotone)
  let lo = 0
  let hi = order.length
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (render(mid).length <= budget) lo = mid
    else hi = mid - 1
  }
  let text = render(lo)
  while (lo > 0 && text.length > budget) text = render(--lo)
  return { text, nodeCount: nodes.length, shown: lo }
}
