import type { Node } from '../nodes/model'
import { add, type Counts, PLURAL, planFacts, TYPE_ORDER } from './outline'

/**
 * GET /outline's text (docs/outline-and-mcp.md): a project or a subtree as indented
 * markdown, one line per node (`- [job-12] label · open · Sprint 1 · claimed by x`), within a
 * budget of o200k_base tokens. Nodes are admitted open parts first, then done ones (a done job
 * or task, a resolved or retired approach, a done goal, and everything under them), each part
 * breadth-first, so a small budget keeps the upper levels of the live plan; what is not shown
 * is folded under its nearest shown parent as `- … 14 more jobs (9 done)`. Descriptions are
 * added to shown lines, in the same order, while they fit.
 *
 * Cost: tokens are counted per line, each line with its newline. The o200k_base pre-tokenizer
 * never joins a newline to the start of the next line (no line starts with whitespace that
 * is followed by a newline, and no chunk starts with a newline and goes on past it), so the
 * token count of a text is the sum over its lines: admitting a node re-counts three short
 * lines, never the whole text (test/outline.test.ts checks the sum against a count of the
 * whole text on odd labels).
 */
export interface TokenOutlineInput {
  /** the nodes, parents before children or in any order; a node whose parent is absent is a root */
  nodes: Node[]
  budget: number
  /** o200k_base token count of a text */
  count: (text: string) => number
  /** the agent holding a live claim on a node, if any */
  claimOf?: (nodeId: string) => string | undefined
}

export interface TokenOutline {
  text: string
  tokens: number
  nodeCount: number
  shown: number
}

const LABEL_CHARS = 100
const DESCRIPTION_CHARS = 240

const oneLine = (v: unknown, max: number) => {
  const s = typeof v === 'string' ? v.replace(/\s+/g, ' ').trim() : ''
  return s.length > max ? `${s.slice(0, max - 1)}…` : s
}

/** Done work, and the parts of the plan that are settled. */
export function isDone(n: Node): boolean {
  const d = n.data ?? {}
  if (n.type === 'job' || n.type === 'task') return d.status === 'done'
  if (n.type === 'approach') return d.approachStatus === 'resolved' || d.approachStatus === 'retired'
  if (n.type === 'goal') return d.goalStatus === 'done'
  return false
}

function facts(n: Node, claimedBy: string | undefined): string[] {
  const d = n.data ?? {}
  const out = planFacts(n)
  if (n.type === 'job' || n.type === 'task') {
    out.push(typeof d.status === 'string' ? d.status : 'open')
    if (d.iteration) out.push(oneLine(d.iteration, LABEL_CHARS))
    if (n.type === 'task' && d.kind) out.push(d.kind)
    if (d.urgent === true) out.push('urgent')
  }
  if (claimedBy) out.push(`claimed by ${oneLine(claimedBy, LABEL_CHARS)}`)
  return out
}

export function outlineLine(n: Node, depth: number, claimedBy?: string, withDescription = false): string {
  const label = oneLine(n.data?.label, LABEL_CHARS)
  const head = [`[${n.id}]${label ? ` ${label}` : ''}`, ...facts(n, claimedBy)].join(' · ')
  const description = withDescription ? oneLine(n.data?.description, DESCRIPTION_CHARS) : ''
  return `${'  '.repeat(depth)}- ${head}${description ? ` — ${description}` : ''}`
}

/** `… 3 more approaches, 20 jobs (9 done)`; empty when nothing is folded. */
export function foldLine(counts: Counts, depth: number): string {
  const parts: string[] = []
  for (const type of TYPE_ORDER) {
    const c = counts.get(type)
    if (!c?.all) continue
    const first = parts.length === 0 ? 'more ' : ''
    parts.push(`${c.all} ${first}${c.all === 1 ? type : PLURAL[type]}${c.done ? ` (${c.done} done)` : ''}`)
  }
  return parts.length ? `${'  '.repeat(depth)}- … ${parts.join(', ')}` : ''
}

const minus = (from: Counts, what: Counts): Counts => {
  const out: Counts = new Map()
  for (const [type, c] of from) {
    const w = what.get(type)
    out.set(type, { all: c.all - (w?.all ?? 0), done: c.done - (w?.done ?? 0) })
  }
  return out
}

export function renderTokenOutline({ nodes, budget, count, claimOf }: TokenOutlineInput): TokenOutline {
  const byId = new Map(nodes.map((n) => [n.id, n]))
  const ROOT = '' // the parent key of the roots
  const children = new Map<string, Node[]>()
  const parentKey = (n: Node) => (n.parentId && byId.has(n.parentId) && n.parentId !== n.id ? n.parentId : ROOT)
  for (const n of nodes) {
    const k = parentKey(n)
    ;(children.get(k) ?? children.set(k, []).get(k)!).push(n)
  }
  // the hierarchy's roots first, standalone tasks after them
  const roots = children.get(ROOT) ?? []
  children.set(ROOT, [...roots.filter((n) => n.type !== 'task'), ...roots.filter((n) => n.type === 'task')])

  // depth, doneness (inherited), breadth-first sequence; a cycle never reached from a root is left out
  const depth = new Map<string, number>()
  const done = new Map<string, boolean>()
  const seq: Node[] = []
  for (const r of children.get(ROOT)!) {
    depth.set(r.id, 0)
    done.set(r.id, isDone(r))
    seq.push(r)
  }
  for (let i = 0; i < seq.length; i++) {
    const p = seq[i]!
    for (const c of children.get(p.id) ?? []) {
      if (depth.has(c.id)) continue
      depth.set(c.id, depth.get(p.id)! + 1)
      done.set(c.id, done.get(p.id)! || isDone(c))
      seq.push(c)
    }
  }
  // standalone tasks rank with approaches, so a long inbox does not crowd out the goals' needs
  const rankDepth = (n: Node) => (n.type === 'task' && parentKey(n) === ROOT ? 2 : depth.get(n.id)!)
  const index = new Map(seq.map((n, i) => [n.id, i]))
  const order = seq
    .slice()
    .sort((a, b) => +done.get(a.id)! - +done.get(b.id)! || rankDepth(a) - rankDepth(b) || index.get(a.id)! - index.get(b.id)!)

  // per-subtree counts
  const subtree = new Map<string, Counts>()
  for (let i = seq.length - 1; i >= 0; i--) {
    const n = seq[i]!
    const c: Counts = new Map([[n.type, { all: 1, done: isDone(n) ? 1 : 0 }]])
    for (const k of children.get(n.id) ?? []) if (subtree.has(k.id) && depth.get(k.id) === depth.get(n.id)! + 1) add(c, subtree.get(k.id)!)
    subtree.set(n.id, c)
  }

  const memo = new Map<string, number>()
  const cost = (line: string) => {
    if (!line) return 0
    let c = memo.get(line)
    if (c === undefined) memo.set(line, (c = count(`${line}\n`)))
    return c
  }
  const lineOf = (n: Node, withDescription = false) => outlineLine(n, depth.get(n.id)!, claimOf?.(n.id), withDescription)

  // what is folded under each shown node (and under ROOT), and what each fold line costs
  const folded = new Map<string, Counts>()
  const foldCost = new Map<string, number>()
  const rootFold: Counts = new Map()
  for (const r of children.get(ROOT)!) add(rootFold, subtree.get(r.id)!)
  folded.set(ROOT, rootFold)
  foldCost.set(ROOT, cost(foldLine(rootFold, 0)))
  let total = foldCost.get(ROOT)!
  const shown = new Set<string>()
  const lineCost = new Map<string, number>()

  for (const n of order) {
    const p = parentKey(n)
    const own = subtree.get(n.id)!
    const parentFold = minus(folded.get(p)!, own)
    const parentFoldCost = cost(foldLine(parentFold, depth.get(n.id)!))
    const below = minus(own, new Map([[n.type, { all: 1, done: isDone(n) ? 1 : 0 }]]))
    const belowCost = cost(foldLine(below, depth.get(n.id)! + 1))
    const line = cost(lineOf(n))
    const next = total + line + parentFoldCost - foldCost.get(p)! + belowCost
    if (next > budget) break
    total = next
    shown.add(n.id)
    lineCost.set(n.id, line)
    folded.set(p, parentFold)
    foldCost.set(p, parentFoldCost)
    folded.set(n.id, below)
    foldCost.set(n.id, belowCost)
  }

  // descriptions, in the order the nodes were admitted, while they fit
  const described = new Set<string>()
  for (const n of order) {
    if (!shown.has(n.id)) break
    if (!oneLine(n.data?.description, DESCRIPTION_CHARS)) continue
    const extra = cost(lineOf(n, true)) - lineCost.get(n.id)!
    if (total + extra > budget) continue
    total += extra
    described.add(n.id)
  }

  const lines: string[] = []
  const walk = (key: string, d: number) => {
    for (const n of children.get(key) ?? []) {
      if (!shown.has(n.id) || depth.get(n.id) !== d) continue
      lines.push(lineOf(n, described.has(n.id)))
      walk(n.id, d + 1)
    }
    const fold = folded.get(key)
    const line = fold && foldLine(fold, d)
    if (line && (key === ROOT || shown.has(key))) lines.push(line)
  }
  if (total <= budget) walk(ROOT, 0)
  // total counts every line with its newline; the text has none after its last line
  const last = lines.at(-1)
  const tokens = last === undefined ? 0 : total - cost(last) + count(last)
  return { text: lines.join('\n'), tokens, nodeCount: nodes.length, shown: shown.size }
}
