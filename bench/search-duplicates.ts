// The near-duplicate threshold, measured (issue 4): with the server's embedder, how close are
// distinct nodes of the same type (an add of one of them must not be flagged), and how close
// are near-identical re-entries of a node (they should be). Full texts, label with description,
// as the advisory compares them. Printed by `bun run eval:search --duplicates`.

import { loadConfig } from '../src/config'
import { embeddingTexts } from '../src/search/document'
import { chooseEmbedder } from '../src/search/embedder/runtime'
import { dot } from '../src/search/rank'

interface Node {
  id: string
  type: string
  data: Record<string, any>
}

const full = (data: Record<string, any>) => embeddingTexts(data).at(-1)!

// Generic edits a person re-entering an item makes; none is specific to the dev set.
const SWAPS: [RegExp, string][] = [
  [/\bcan\b/gi, 'is able to'],
  [/\bcustomers?\b/gi, 'clients'],
  [/\busers?\b/gi, 'people'],
  [/\bautomatically\b/gi, 'on their own'],
  [/\bshows?\b/gi, 'displays'],
]
const REWRITES: [string, (d: Record<string, any>) => Record<string, any>][] = [
  [
    'case and punctuation',
    (d) => ({ ...d, label: d.label.toLowerCase().replace(/[.,;:!?'"]/g, ''), description: d.description?.toLowerCase() }),
  ],
  ['typo in one word', (d) => ({ ...d, label: d.label.replace(/(\w{5,})/, (w: string) => w.slice(0, 2) + w[3] + w[2] + w.slice(4)) })],
  ['last word dropped', (d) => ({ ...d, label: d.label.split(' ').length > 3 ? d.label.split(' ').slice(0, -1).join(' ') : d.label })],
  ['a few words swapped', (d) => ({ ...d, label: SWAPS.reduce((s, [re, to]) => s.replace(re, to), d.label) })],
]

export async function printThresholds(tree: Node[]): Promise<void> {
  const { embedder, duplicateCosine } = chooseEmbedder(loadConfig())
  const base = await embedder.embed(tree.map((n) => full(n.data)))
  // the closest other node of the same type, per node: an add of it must stay quiet
  const nearestOther = tree.map((n, i) => {
    let best = -1
    tree.forEach((m, j) => {
      if (j !== i && m.type === n.type) best = Math.max(best, dot(base[i]!, base[j]!))
    })
    return best
  })
  const kinds = new Map<string, number[]>()
  for (const [kind, edit] of REWRITES) {
    const changed = tree.map((n, i) => [i, full(edit(n.data))] as const).filter(([i, t]) => t !== full(tree[i]!.data))
    const vs = await embedder.embed(changed.map(([, t]) => t))
    kinds.set(
      kind,
      changed.map(([i], k) => dot(base[i]!, vs[k]!)),
    )
  }
  const share = (xs: number[], t: number) => xs.filter((x) => x >= t).length / xs.length
  console.log(`\nnear-duplicate threshold (${embedder.id}, cosine of label + description, same type):`)
  console.log(`| cosine >= | distinct nodes flagged | ${[...kinds.keys()].map((k) => `re-entry caught: ${k}`).join(' | ')} |`)
  console.log(`|---|---|${[...kinds.keys()].map(() => '---').join('|')}|`)
  for (let t = 0.8; t <= 0.96; t += 0.02)
    console.log(
      `| ${t.toFixed(2)}${Math.abs(t - duplicateCosine) < 0.005 ? ' (used)' : ''} | ${(share(nearestOther, t) * 100).toFixed(1)}% | ${[...kinds.values()].map((xs) => `${(share(xs, t) * 100).toFixed(0)}%`).join(' | ')} |`,
    )
  const sorted = [...nearestOther].sort((a, b) => b - a)
  console.log(
    `closest distinct same-type pairs: ${sorted
      .slice(0, 5)
      .map((x) => x.toFixed(3))
      .join(', ')}`,
  )
}
