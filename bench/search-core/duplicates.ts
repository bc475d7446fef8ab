// Cosine distributions that could back a near-duplicate warning: how alike
// are sibling nodes (distinct items under one parent), random pairs, and
// rewrites of the same node that a person might type as a duplicate.

import type { Embedder } from '../../src/search/embedder/types.ts'
import { dot } from '../../src/search/rank.ts'
import { percentile } from './metrics.ts'

interface Node {
  id: string
  parentId: string | null
  data: { label?: string | null; description?: string | null }
}

const text = (label: string, description?: string | null) => (description ? `${label}. ${description}` : label)

// Generic word swaps a person re-entering an item might make.
const SWAPS: [RegExp, string][] = [
  [/\bcan\b/gi, 'are able to'],
  [/\bcustomers?\b/gi, 'clients'],
  [/\busers?\b/gi, 'people'],
  [/\bautomatically\b/gi, 'on their own'],
  [/\bshows?\b/gi, 'displays'],
  [/\bsend(s)?\b/gi, 'email$1'],
]

/** Near-identical rewrites of a node's label + description. */
function rewrites(label: string, description?: string | null): [string, string][] {
  const words = label.split(/\s+/)
  const swapped = SWAPS.reduce((s, [re, to]) => s.replace(re, to), label)
  return [
    ['case + punctuation', text(label.toLowerCase().replace(/[.,;:!?'"]/g, ''), description?.toLowerCase())],
    ['label only', label],
    ['last word dropped', text(words.length > 3 ? words.slice(0, -1).join(' ') : label, description)],
    ['word swaps', text(swapped, description)],
    ['label reworded, no description', swapped],
  ]
}

function stats(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b)
  const f = (p: number) => percentile(s, p).toFixed(3)
  return `n=${s.length} min ${s[0]?.toFixed(3)} p5 ${f(5)} p50 ${f(50)} p95 ${f(95)} max ${s[s.length - 1]?.toFixed(3)}`
}

export async function printDuplicateStats(embedder: Embedder, tree: Node[]): Promise<void> {
  const base = await embedder.embed(tree.map((n) => text(n.data.label ?? '', n.data.description)))
  const byId = new Map(tree.map((n, i) => [n.id, i]))

  const siblings: number[] = []
  for (let i = 0; i < tree.length; i++)
    for (let j = i + 1; j < tree.length; j++)
      if (tree[i]!.parentId && tree[i]!.parentId === tree[j]!.parentId) siblings.push(dot(base[i]!, base[j]!))

  // Deterministic "random" pairs: every node against the node 37 places on.
  const random = tree.map((_, i) => dot(base[i]!, base[(i + 37) % tree.length]!))

  const parentChild = tree
    .filter((n) => n.parentId && byId.has(n.parentId))
    .map((n) => dot(base[byId.get(n.id)!]!, base[byId.get(n.parentId!)!]!))

  const kinds = new Map<string, number[]>()
  // Only rewrites that differ from the original text (a job without a
  // description is unchanged by "label only").
  const all = tree.flatMap((n, i) => {
    const original = text(n.data.label ?? '', n.data.description)
    return rewrites(n.data.label ?? '', n.data.description)
      .filter(([, t]) => t !== original)
      .map(([k, t]) => ({ i, k, t }))
  })
  const vectors = await embedder.embed(all.map((r) => r.t))
  all.forEach((r, j) => {
    if (!kinds.has(r.k)) kinds.set(r.k, [])
    kinds.get(r.k)!.push(dot(base[r.i]!, vectors[j]!))
  })

  console.log(`\nnear-duplicate cosine (label + description, ${embedder.id}):`)
  console.log(`  random pairs          ${stats(random)}`)
  console.log(`  parent-child          ${stats(parentChild)}`)
  console.log(`  siblings              ${stats(siblings)}`)
  for (const [k, xs] of kinds) console.log(`  rewrite: ${k.padEnd(30)} ${stats(xs)}`)
}
