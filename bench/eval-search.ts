// Search quality through the API (issue 4): loads the dev set into a fresh project with one
// batch, waits until every node has its vectors, then asks GET /search?limit=10 for every query
// in three modes (keyword-only, semantic-only, hybrid) and prints recall@5, MRR@10 and nDCG@5
// overall and per query kind, exactly as ../shared/eval/README.md defines them, plus nDCG@10 and
// a fourth row: reciprocal-rank fusion of the keyword-only and semantic-only lists.
//
//   bun run eval:search [--file path] [--url http://host:3000 --key arb_...] [--duplicates] [--json out.json]
//
// Without --url it starts the app in-process on a throw-away embedded database with the
// configured backend and embedder (EMBEDDINGS_URL, MEILI_URL as for the server). --duplicates
// also prints the cosine distributions behind the near-duplicate threshold.

import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { bootstrapOwner } from '../src/accounts/service'
import { createApp } from '../src/app'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/create-deps'
import { openDb } from '../src/db'
import type { Deps } from '../src/deps'
import { createLogger } from '../src/log'
import { tick } from '../src/search/loop'
import { scoreQuery, summarise } from './search-core/metrics'
import { printThresholds } from './search-duplicates'

interface DevSet {
  tree: { id: string; type: string; parentId: string | null; data: Record<string, any> }[]
  queries: { q: string; relevant: string[]; kind: string; type?: string }[]
}

const args = process.argv.slice(2)
const option = (name: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : undefined
}
const file = option('file') ?? process.env.SEARCH_DEV_FILE ?? join(import.meta.dir, '../../shared/eval/search-dev.json')
if (!existsSync(file)) {
  console.error(`dev set not found at ${file} (pass --file)`)
  process.exit(1)
}
const dev = (await Bun.file(file).json()) as DevSet

// --- the API: a running server, or the app in-process ---------------------------------
let call: (method: string, path: string, body?: unknown) => Promise<any>
let settle: () => Promise<void> = async () => {}
let appDeps: Deps | undefined
let close = async () => {}
const remote = option('url')
if (remote) {
  const key = option('key') ?? process.env.ARBOR_API_KEY
  call = async (method, path, body) => {
    const res = await fetch(remote.replace(/\/+$/, '') + path, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return res.json()
  }
} else {
  const config = loadConfig({ ...process.env, DATABASE_URL: 'memory://', RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'error' })
  const db = await openDb(config)
  const deps: Deps = createDeps({ config, db, log: createLogger(config.logLevel) })
  appDeps = deps
  const key = (await bootstrapOwner(db))!
  const { handle } = createApp(deps)
  call = async (method, path, body) => {
    const res = await handle(
      new Request(`http://eval${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    )
    return res.json()
  }
  // what the scheduler does in a running server: follow the events, embed, push
  settle = async () => {
    for (let i = 0; i < 10_000; i++) {
      const s = await tick(deps, new Date())
      if (!s.embedded && !s.pushed) break
    }
  }
  close = () => db.close()
}

// --- load -----------------------------------------------------------------------------
const projectId = `eval-${Date.now().toString(36)}`
const created = await call('POST', '/api/v1/mutate', { action: 'addProject', project: { id: projectId, name: 'search eval' } })
if (!created.success) throw new Error(`addProject: ${JSON.stringify(created)}`)
let t0 = performance.now()
const loaded = await call('POST', '/api/v1/mutate', {
  action: 'batch',
  projectId,
  mutations: dev.tree.map((n) => ({ action: 'add', node: { id: n.id, type: n.type, parentId: n.parentId, data: n.data } })),
})
if (!loaded.success) throw new Error(`batch: ${JSON.stringify(loaded).slice(0, 500)}`)
const toDraft = new Map(Object.entries(loaded.idMap as Record<string, string>).map(([d, real]) => [real, d]))
const search = (q: string, params: Record<string, string>) =>
  call('GET', `/api/v1/search?${new URLSearchParams({ projectId, q, limit: '10', ...params })}`)
await search('warm up', {})
await settle()
for (let i = 0; i < 600; i++) {
  const meta = (await search('warm up', {}))._meta?.search
  if (!meta || meta.pendingNodes === 0) break
  await Bun.sleep(1000)
}
console.log(`loaded ${dev.tree.length} nodes and indexed them in ${((performance.now() - t0) / 1000).toFixed(1)} s`)

// --- ask ------------------------------------------------------------------------------
const KINDS = ['paraphrase', 'keyword', 'concept', 'all']
const modes: [string, string][] = [
  ['keyword only', 'keyword'],
  ['semantic only', 'semantic'],
  ['hybrid (default)', 'hybrid'],
]
let meta: any
const rows: [string, ReturnType<typeof summarise>][] = []
/** each mode's ranked draft ids per query, for the fusion row below */
const rankedBy = new Map<string, string[][]>()
t0 = performance.now()
for (const [name, mode] of modes) {
  const scored = []
  const lists: string[][] = []
  rankedBy.set(mode, lists)
  for (const q of dev.queries) {
    const res = await search(q.q, { mode, ...(q.type ? { type: q.type } : {}) })
    if (!res.results) throw new Error(`search: ${JSON.stringify(res)}`)
    meta = res._meta?.search
    const ranked = res.results.map((r: any) => toDraft.get(r.node.id) ?? r.node.id)
    lists.push(ranked)
    scored.push({ kind: q.kind, m: scoreQuery(ranked, new Set(q.relevant)) })
  }
  rows.push([name, summarise(scored)])
}
// the other common way to fuse the two lists, for comparison with the server's blend (the
// hybrid row): reciprocal-rank fusion of the keyword-only and semantic-only top 10, k = 60
const RRF_K = 60
rows.push([
  'RRF of the two (k=60, computed here)',
  summarise(
    dev.queries.map((q, i) => {
      const fused = new Map<string, number>()
      for (const mode of ['keyword', 'semantic'])
        for (const [rank, id] of rankedBy.get(mode)![i]!.entries()) fused.set(id, (fused.get(id) ?? 0) + 1 / (RRF_K + rank + 1))
      const ranked = [...fused].sort((a, b) => b[1] - a[1]).map(([id]) => id)
      return { kind: q.kind, m: scoreQuery(ranked, new Set(q.relevant)) }
    }),
  ),
])
const perQuery = (performance.now() - t0) / (modes.length * dev.queries.length)
const counts = summarise(dev.queries.map((q) => ({ kind: q.kind, m: { recall5: 0, mrr10: 0, ndcg5: 0, ndcg10: 0 } })))
console.log(
  `backend ${meta?.backend}, embedder ${meta?.embedder}; queries: ${KINDS.map((k) => `${k} ${counts.get(k)?.n ?? 0}`).join(', ')}`,
)
console.log(`\n| mode | ${KINDS.map((k) => `${k} R@5 / MRR@10 / nDCG@5 / nDCG@10`).join(' | ')} |`)
console.log(`|---|${KINDS.map(() => '---').join('|')}|`)
for (const [name, s] of rows)
  console.log(
    `| ${name} | ${KINDS.map((k) => {
      const m = s.get(k)
      return m ? `${m.recall5.toFixed(3)} / ${m.mrr10.toFixed(3)} / ${m.ndcg5.toFixed(3)} / ${m.ndcg10.toFixed(3)}` : '-'
    }).join(' | ')} |`,
  )
console.log(`\n${perQuery.toFixed(1)} ms per search through the API (query vectors cached after the first mode)`)

// --json path: the figures for npm run bench (bench/run.ts), per mode and query kind
const jsonOut = option('json')
if (jsonOut)
  await Bun.write(
    jsonOut,
    JSON.stringify({
      backend: meta?.backend,
      embedder: meta?.embedder,
      modes: Object.fromEntries(rows.map(([name, s]) => [name, Object.fromEntries(s)])),
    }),
  )

if (args.includes('--duplicates')) await printThresholds(dev.tree)

// --sweep (in-process only): the hybrid blend at other settings, to choose BUILTIN_TUNING's
if (args.includes('--sweep') && appDeps) {
  const { BUILTIN_TUNING } = await import('../src/search/builtin')
  console.log(
    '\n| semanticRatio | parentWeight | paraphrase R@5 | keyword R@5 | concept R@5 | all R@5 | all MRR@10 |\n|---|---|---|---|---|---|---|',
  )
  for (const ratio of [0.3, 0.5, 0.6, 0.7, 0.8, 0.9])
    for (const parent of [0, 0.25, 0.5]) {
      appDeps.search.choice.semanticRatio = ratio
      BUILTIN_TUNING.parentWeight = parent
      const scored = []
      for (const q of dev.queries) {
        const res = await search(q.q, { mode: 'hybrid', ...(q.type ? { type: q.type } : {}) })
        const ranked = res.results.map((r: any) => toDraft.get(r.node.id) ?? r.node.id)
        scored.push({ kind: q.kind, m: scoreQuery(ranked, new Set(q.relevant)) })
      }
      const s = summarise(scored)
      const r = (k: string) => s.get(k)?.recall5.toFixed(3)
      console.log(
        `| ${ratio} | ${parent} | ${r('paraphrase')} | ${r('keyword')} | ${r('concept')} | ${r('all')} | ${s.get('all')?.mrr10.toFixed(3)} |`,
      )
    }
}

await close()
