// Search speed and cost per model, through HTTP only (issue 9): for each model a real server
// process (`bun src/main.ts`, loops on, fresh embedded database) takes one batch of N nodes;
// the bench never calls a tick, it waits for the server's own loop to index them for meaning
// (`_meta.search.pendingNodes` reaching 0, asked with keyword-only searches that embed nothing).
// Then, in the same run: p50/p99 of a new query (every query distinct, so each is embedded),
// p50 of a keyword-only query, embedding throughput, and the server's memory (RSS) idle, after
// indexing and after the searches, beside the vector bytes the index holds.
//
//   bun run bench:search [--nodes 1000] [--searches 200]
//
// Models: the sentence model of `npm run model:fetch` (all-MiniLM-L6-v2) and the npm-only
// fallback (USE-lite + GloVe, forced with an empty EMBEDDINGS_MODEL_DIR).

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { rssMb } from './lib/rss'
import { freePort, ownerClient, spawnServer } from './lib/spawn'
import { OBJECTS, pick, QUALIFIERS, reseed, tree, VERBS } from './lib/synthetic-tree'
import { percentile } from './search-core/metrics'

const args = process.argv.slice(2)
const num = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? Number(args[i + 1]) : fallback
}
const TOTAL = num('nodes', 1000)
const SEARCHES = num('searches', 200)
const MODEL_DIR = loadConfig({ DATA_DIR: join(import.meta.dir, '..', 'data') }).embeddingsModelDir

// --- one model ------------------------------------------------------------------------------

async function time(n: number, fn: (i: number) => Promise<unknown>) {
  const ms: number[] = []
  for (let i = 0; i < n; i++) {
    const s = performance.now()
    await fn(i)
    ms.push(performance.now() - s)
  }
  ms.sort((a, b) => a - b)
  return { p50: percentile(ms, 50), p99: percentile(ms, 99) }
}

async function measure(name: string, modelDir: string) {
  reseed(42) // the same tree and queries for every model
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-bench-search-'))
  const server = await spawnServer({
    PORT: String(freePort()),
    DATA_DIR: dataDir,
    EMBEDDINGS_MODEL_DIR: modelDir,
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
  })
  try {
    const { call } = ownerClient(server)
    const pid = server.proc.pid
    await Bun.sleep(2000) // let the model warm up, as it does after any start
    const idle = rssMb(pid)
    const projectId = 'bench'
    await call('POST', '/api/v1/mutate', { action: 'addProject', project: { id: projectId, name: 'search bench' } })
    const nodes = tree(TOTAL)
    const texts = nodes.reduce((n, d) => n + (d.data.description ? 2 : 1), 0)
    const t0 = performance.now()
    const res = await call('POST', '/api/v1/mutate', {
      action: 'batch',
      projectId,
      mutations: nodes.map((node) => ({ action: 'add', node })),
    })
    if (!res.success) throw new Error(JSON.stringify(res).slice(0, 400))
    const keywordAtOnce = await time(20, (i) =>
      call('GET', `/api/v1/search?${new URLSearchParams({ projectId, q: `invoices ${i}`, mode: 'keyword' })}`),
    )
    let meta: any
    for (;;) {
      meta = (await call('GET', `/api/v1/search?projectId=${projectId}&q=invoices&mode=keyword`))._meta.search
      if (meta.pendingNodes === 0) break
      await Bun.sleep(250)
    }
    const indexS = (performance.now() - t0) / 1000
    const indexed = rssMb(pid)
    const queries = Array.from({ length: SEARCHES }, (_, i) => `${pick(VERBS)} ${pick(OBJECTS)} ${pick(QUALIFIERS)} ${i}`)
    const fresh = await time(SEARCHES, (i) =>
      call('GET', `/api/v1/search?${new URLSearchParams({ projectId, q: queries[i]!, limit: '10' })}`),
    )
    const keyword = await time(SEARCHES, (i) =>
      call('GET', `/api/v1/search?${new URLSearchParams({ projectId, q: queries[i]!, limit: '10', mode: 'keyword' })}`),
    )
    const embedder = (await call('GET', `/api/v1/search?projectId=${projectId}&q=x`))._meta.search.embedder
    const dims = embedder.startsWith('minilm') ? 384 : 612
    return {
      name,
      embedder,
      indexS,
      throughput: TOTAL / indexS,
      fresh,
      keyword,
      keywordAtOnce,
      rss: { idle, indexed, searched: rssMb(pid) },
      vectorMb: (texts * dims * 4) / 2 ** 20,
    }
  } finally {
    server.proc.kill('SIGTERM')
    await server.proc.exited
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const emptyDir = mkdtempSync(join(tmpdir(), 'arbor-no-model-'))
const runs = [await measure('all-MiniLM-L6-v2 (model:fetch)', MODEL_DIR), await measure('USE-lite + GloVe (fallback)', emptyDir)]
rmSync(emptyDir, { recursive: true, force: true })

const f = (x: number) => x.toFixed(1)
console.log(`\n${TOTAL} nodes loaded in one batch into a fresh server per model; ${SEARCHES} searches each; same run\n`)
console.log(
  '| model | index N nodes (s) | nodes/s | new query p50 / p99 ms | keyword p50 ms (while indexing / after) | RSS idle / indexed / after searches MB | vectors MB |',
)
console.log('|---|---|---|---|---|---|---|')
for (const r of runs)
  console.log(
    `| ${r.name}: ${r.embedder} | ${f(r.indexS)} | ${f(r.throughput)} | ${f(r.fresh.p50)} / ${f(r.fresh.p99)} | ${f(r.keywordAtOnce.p50)} / ${f(r.keyword.p50)} | ${f(r.rss.idle)} / ${f(r.rss.indexed)} / ${f(r.rss.searched)} | ${f(r.vectorMb)} |`,
  )
process.exit(0)
