// Offline evaluation of the search core on the dev set.
//
//   bun bench/search-core/eval.ts [--file path] [--embedder use|glove|mix]
//                                 [--ratio 0.5] [--sweep] [--no-dups]
//
// Embeds every node and query with the built-in embedder, then prints
// recall@5, MRR@10 and nDCG@5 overall and per query kind for keyword-only
// (semanticRatio 0), semantic-only (1) and hybrid ranking, honouring each
// query's optional node-type filter. Also prints embedder load/embed timings
// and the cosine distributions that could back a near-duplicate threshold.

import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { embeddingTexts, keywordDoc, type NodeData } from '../../src/search/document.ts'
import { type BuiltinKind, createBuiltinEmbedder, DEFAULT_BUILTIN } from '../../src/search/embedder/builtin.ts'
import {
  buildKeywordIndex,
  buildVectorIndex,
  DEFAULT_SEMANTIC_RATIO,
  hybridRank,
  scoreKeyword,
  scoreVectors,
} from '../../src/search/rank.ts'
import { printDuplicateStats } from './duplicates.ts'
import { scoreQuery, summarise } from './metrics.ts'

interface DevSet {
  tree: { id: string; type: string; parentId: string | null; data: NodeData }[]
  queries: { q: string; relevant: string[]; kind: string; type?: string }[]
}

const args = process.argv.slice(2)
const flag = (name: string) => args.includes(`--${name}`)
const option = (name: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : undefined
}

const file = option('file') ?? process.env.SEARCH_DEV_FILE ?? join(import.meta.dir, '../../../shared/eval/search-dev.json')
if (!existsSync(file)) {
  console.error(`dev set not found at ${file} (pass --file)`)
  process.exit(1)
}
const dev = (await Bun.file(file).json()) as DevSet
const kind = (option('embedder') ?? DEFAULT_BUILTIN) as BuiltinKind
const hybridRatio = Number(option('ratio') ?? DEFAULT_SEMANTIC_RATIO)

// --- embed ---------------------------------------------------------------
const rssBefore = process.memoryUsage().rss
const embedder = createBuiltinEmbedder(kind)
let t0 = performance.now()
await embedder.embed(['warm-up']) // loads the model / word vectors
const loadMs = performance.now() - t0
const rssLoaded = process.memoryUsage().rss

const nodeTexts = dev.tree.map((n) => embeddingTexts(n.data))
const flat = nodeTexts.flat()
t0 = performance.now()
const flatVectors = await embedder.embed(flat)
const docMs = performance.now() - t0
let k = 0
const docs = dev.tree.map((n, i) => ({ id: n.id, type: n.type, vectors: nodeTexts[i]!.map(() => flatVectors[k++]!) }))
t0 = performance.now()
const queryVectors: Float32Array[] = []
for (const q of dev.queries) queryVectors.push((await embedder.embed([q.q]))[0]!) // one at a time, as in serving
const queryMs = (performance.now() - t0) / dev.queries.length

console.log(`embedder ${embedder.id} (${embedder.dims} dims)`)
console.log(
  `  load ${loadMs.toFixed(0)} ms, RSS +${((rssLoaded - rssBefore) / 1e6).toFixed(0)} MB (process ${(rssLoaded / 1e6).toFixed(0)} MB)`,
)
console.log(`  batch embed ${(docMs / flat.length).toFixed(2)} ms/text (${flat.length} node texts), single query ${queryMs.toFixed(2)} ms`)

// --- rank ------------------------------------------------------------------
t0 = performance.now()
const index = buildKeywordIndex(dev.tree.map((n) => keywordDoc(n.id, n.data)))
const vectorIndex = buildVectorIndex(docs)
const indexMs = performance.now() - t0

function rankQuery(qi: number, ratio: number): string[] {
  const q = dev.queries[qi]!
  const allowed = (id: string) => !q.type || typeById.get(id) === q.type
  const keyword = new Map([...scoreKeyword(index, q.q)].filter(([id]) => allowed(id)))
  const semantic = scoreVectors(vectorIndex, queryVectors[qi]!, undefined, allowed)
  return hybridRank({ keyword, semantic, semanticRatio: ratio, limit: 10 }).map((h) => h.id)
}
const typeById = new Map(dev.tree.map((n) => [n.id, n.type]))

function evaluate(ratio: number) {
  return summarise(dev.queries.map((q, qi) => ({ kind: q.kind, m: scoreQuery(rankQuery(qi, ratio), new Set(q.relevant)) })))
}

const KINDS = ['paraphrase', 'keyword', 'concept', 'all']
function printTable(rows: [string, ReturnType<typeof evaluate>][]) {
  console.log(`\n| mode | ${KINDS.map((c) => `${c} R@5 / MRR@10 / nDCG@5`).join(' | ')} |`)
  console.log(`|---|${KINDS.map(() => '---').join('|')}|`)
  for (const [name, s] of rows) {
    const cells = KINDS.map((c) => {
      const m = s.get(c)!
      return `${m.recall5.toFixed(3)} / ${m.mrr10.toFixed(3)} / ${m.ndcg5.toFixed(3)}`
    })
    console.log(`| ${name} | ${cells.join(' | ')} |`)
  }
}

const counts = summarise(dev.queries.map((q) => ({ kind: q.kind, m: { recall5: 0, mrr10: 0, ndcg5: 0 } })))
console.log(
  `\nqueries: ${KINDS.map((c) => `${c} ${counts.get(c)?.n ?? 0}`).join(', ')}; keyword + vector index built in ${indexMs.toFixed(1)} ms`,
)
const ratios: [string, number][] = flag('sweep')
  ? [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1].map((r) => [`ratio ${r}`, r])
  : [
      ['keyword only (ratio 0)', 0],
      ['semantic only (ratio 1)', 1],
      [`hybrid (ratio ${hybridRatio})`, hybridRatio],
    ]
printTable(ratios.map(([name, r]) => [name, evaluate(r)]))

// --- search latency ----------------------------------------------------------
t0 = performance.now()
const reps = 20
for (let rep = 0; rep < reps; rep++) for (let qi = 0; qi < dev.queries.length; qi++) rankQuery(qi, hybridRatio)
console.log(
  `\nrank (keyword + cosine + blend, ${dev.tree.length} nodes, vectors precomputed): ${((performance.now() - t0) / (reps * dev.queries.length)).toFixed(3)} ms/query`,
)

if (!flag('no-dups')) await printDuplicateStats(embedder, dev.tree)
