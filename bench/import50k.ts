// A 50,000-node import and the search that must stay fast meanwhile (issue 15, items 3 and 4),
// through HTTP only, against the real server process (`bun src/main.ts`, loops on, the sentence
// model of `npm run model:fetch`) on a database of its own:
//
//   bun run bench:import50k [--nodes 50000] [--batch 1000] [--samples 200]
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun run bench:import50k
//
// PGlite under a temporary DATA_DIR, or (BENCH_DATABASE_URL set) a new database created on that
// server and dropped at the end; nothing else is touched. The nodes go in as POST /mutate batches
// of 1,000 (each batch its own small tree), one after the other, while a second client searches
// by keyword without pause. Then, in the same run:
//   - keyword search p50/p99 during the import, right after it (≥ 200 samples each), and while
//     the server embeds the backlog;
//   - the time until `_meta.search.pendingNodes` reaches 0 (every node searchable by meaning),
//     with the `etaSeconds` the server gave at the end of the import;
//   - hybrid search p50/p99 of new queries once everything is embedded (each query embedded);
//   - the server's RSS (/proc/<pid>/status VmRSS): right after start, idle after the model warmed
//     up, at its peak during the import and the embedding, once embedded, after the searches and
//     --rest seconds later (75: the models are let go after an idle minute), with and without the
//     sentence model's child process.
// The bench never calls a tick: the server's own search loop does all the indexing. Writes
// bench/results/import50k-<db>.json and .md (gitignored) and prints the table. Takes ~5-15 min.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { loadConfig } from '../src/config'
import { rssMb, rssOf } from './lib/rss'
import { freePort, ownerClient, spawnServer } from './lib/spawn'
import { OBJECTS, pick, QUALIFIERS, reseed, SUBJECTS, tree, VERBS } from './lib/synthetic-tree'
import { percentile } from './search-core/metrics'

const args = process.argv.slice(2)
const num = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? Number(args[i + 1]) : fallback
}
const TOTAL = num('nodes', 50_000)
const BATCH = num('batch', 1000)
const SAMPLES = num('samples', 200)
const PG_URL = process.env.BENCH_DATABASE_URL
const ROOT = join(import.meta.dir, '..')
const MODEL_DIR = process.env.EMBEDDINGS_MODEL_DIR ?? loadConfig({ DATA_DIR: join(ROOT, 'data') }).embeddingsModelDir
const DEADLINE_S = num('timeout', 1800)
const REST_S = num('rest', 75)

const stats = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b)
  return { n: s.length, p50: percentile(s, 50), p99: percentile(s, 99) }
}

/** A database of our own on the PostgreSQL server, dropped by the returned function. */
async function ownDatabase(url: string) {
  const name = `arbor_bench_import_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const admin = postgres(url, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  const own = new URL(url)
  own.pathname = `/${name}`
  return {
    url: own.toString(),
    drop: async () => {
      await admin.unsafe(`drop database if exists ${name} with (force)`)
      await admin.end()
    },
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'arbor-bench-import-'))
const database = PG_URL ? await ownDatabase(PG_URL) : null
const dbName = database ? 'postgres' : 'pglite'
const t = (ms: number) => ms.toFixed(1)

try {
  const server = await spawnServer({
    PORT: String(freePort()),
    DATA_DIR: dataDir,
    ...(database ? { DATABASE_URL: database.url } : {}),
    EMBEDDINGS_MODEL_DIR: MODEL_DIR,
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
  })
  const pid = server.proc.pid
  const rss = { start: rssMb(pid), idle: 0, importPeak: 0, embedPeak: 0, embedded: 0, searched: 0, cached: 0, rested: 0 }
  /** the same moments, the server process alone (without the sentence model's child process) */
  const own = { embedded: 0, searched: 0, cached: 0, rested: 0 }
  try {
    const { key, call } = ownerClient(server)
    await Bun.sleep(5000) // the start settles (the models load on the first batch or query that needs them)
    rss.idle = rssMb(pid)
    const projectId = 'import50k'
    await call('POST', '/api/v1/mutate', { action: 'addProject', project: { id: projectId, name: 'import bench' } })

    reseed(7)
    const keywordQuery = () => `${pick(VERBS)} ${pick(OBJECTS)}`
    /** one keyword search, timed; returns its `_meta.search` */
    const keyword = async (sink: number[]) => {
      const q = new URLSearchParams({ projectId, q: keywordQuery(), mode: 'keyword', limit: '10' })
      const s = performance.now()
      const res = await fetch(`${server.url}/api/v1/search?${q}`, { headers: { authorization: `Bearer ${key}` } })
      const body = (await res.json()) as any
      sink.push(performance.now() - s)
      if (res.status !== 200) throw new Error(`search answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`)
      return body._meta.search as { pendingNodes: number; etaSeconds?: number | null; semantic: string }
    }

    // --- the import, with a keyword searcher running beside it ------------------------------
    const during: number[] = []
    let importing = true
    const searcher = (async () => {
      while (importing) {
        await keyword(during)
        rss.importPeak = Math.max(rss.importPeak, rssMb(pid))
      }
    })()
    const t0 = performance.now()
    const batchMs: number[] = []
    for (let done = 0, b = 0; done < TOTAL; b++) {
      const nodes = tree(Math.min(BATCH, TOTAL - done)).map((n) => ({
        ...n,
        id: n.id.replace('draft-', `draft-b${b}-`),
        ...(n.parentId ? { parentId: n.parentId.replace('draft-', `draft-b${b}-`) } : {}),
      }))
      const s = performance.now()
      const res = await call('POST', '/api/v1/mutate', {
        action: 'batch',
        projectId,
        mutations: nodes.map((node) => ({ action: 'add', node })),
      })
      batchMs.push(performance.now() - s)
      if (!res.success) throw new Error(`batch ${b}: ${JSON.stringify(res).slice(0, 400)}`)
      done += nodes.length
    }
    const importS = (performance.now() - t0) / 1000
    importing = false
    await searcher
    rss.importPeak = Math.max(rss.importPeak, rssMb(pid))

    // --- right after: keyword search at once, then until every node is embedded ------------
    const after: number[] = []
    let meta = await keyword(after)
    const atEnd = { pendingNodes: meta.pendingNodes, etaSeconds: meta.etaSeconds ?? null }
    for (let i = 1; i < SAMPLES; i++) meta = await keyword(after)
    const embedding: number[] = []
    const progress: { s: number; pendingNodes: number; etaSeconds: number | null }[] = []
    let lastLog = 0
    while (meta.pendingNodes > 0) {
      if ((performance.now() - t0) / 1000 > DEADLINE_S) throw new Error(`not embedded after ${DEADLINE_S} s: ${JSON.stringify(meta)}`)
      await Bun.sleep(100)
      meta = await keyword(embedding)
      rss.embedPeak = Math.max(rss.embedPeak, rssMb(pid))
      const s = (performance.now() - t0) / 1000
      if (s - lastLog >= 15) {
        lastLog = s
        progress.push({ s: Math.round(s), pendingNodes: meta.pendingNodes, etaSeconds: meta.etaSeconds ?? null })
        console.error(
          `${Math.round(s)} s: pendingNodes ${meta.pendingNodes}, etaSeconds ${meta.etaSeconds}, RSS ${rssMb(pid).toFixed(0)} MB`,
        )
      }
    }
    const fullS = (performance.now() - t0) / 1000
    await Bun.sleep(2000)
    rss.embedded = rssMb(pid)
    own.embedded = rssOf(pid).server

    // --- once embedded: new hybrid queries (each embedded), and keyword ones -------------------
    const hybrid: number[] = []
    const settled: number[] = []
    for (let i = 0; i < SAMPLES; i++) {
      const q = `${pick(SUBJECTS)} want to ${pick(VERBS)} ${pick(OBJECTS)} ${pick(QUALIFIERS)} ${i}`
      const s = performance.now()
      const body = await call('GET', `/api/v1/search?${new URLSearchParams({ projectId, q, limit: '10' })}`)
      hybrid.push(performance.now() - s)
      if (body._meta?.search?.semantic !== 'full') throw new Error(`hybrid search not full: ${JSON.stringify(body._meta)}`)
      await keyword(settled)
    }
    rss.searched = rssMb(pid)
    own.searched = rssOf(pid).server

    // --- the read caches filled (src/reads/cache.ts, READ_CACHE_MB): the whole list and each
    // type's, 400 walks in every direction, the outline and the export, each read twice -------
    const cachedReads: string[] = [`/api/v1/nodes?projectId=${projectId}`]
    for (const type of ['goal', 'need', 'approach', 'job', 'task']) cachedReads.push(`/api/v1/nodes?projectId=${projectId}&type=${type}`)
    const ids: string[] = (await call('GET', cachedReads[0]!)).nodes.map((n: { id: string }) => n.id)
    const directions = ['up', 'down', 'lateral', 'context']
    for (let i = 0; i < 400; i++)
      cachedReads.push(`/api/v1/tree?projectId=${projectId}&nodeId=${ids[(i * 7919) % ids.length]}&direction=${directions[i % 4]}`)
    cachedReads.push(`/api/v1/outline?projectId=${projectId}&budget=50000`, `/api/v1/export-okf?projectId=${projectId}`)
    for (let round = 0; round < 2; round++) for (const path of cachedReads) await call('GET', path)
    await Bun.sleep(1000)
    rss.cached = rssMb(pid)
    own.cached = rssOf(pid).server
    // the models let go after an idle minute: what 50,000 nodes cost once the server rests
    await Bun.sleep(REST_S * 1000)
    rss.rested = rssMb(pid)
    own.rested = rssOf(pid).server

    const result = {
      database: dbName,
      nodes: TOTAL,
      batch: BATCH,
      importS,
      batchMs: stats(batchMs),
      keyword: { during: stats(during), after: stats(after), embedding: stats(embedding), settled: stats(settled) },
      hybrid: stats(hybrid),
      atImportEnd: atEnd,
      fullS,
      embeddedAfterImportS: fullS - importS,
      progress,
      rssMb: rss,
      serverOnlyRssMb: own,
    }
    const k = result.keyword
    const md = [
      `${TOTAL} nodes imported as POST /mutate batches of ${BATCH} into \`bun src/main.ts\` on ${dbName} (fresh database), same run`,
      '',
      '| figure | value |',
      '|---|---|',
      `| import (${TOTAL / BATCH} batches) | ${importS.toFixed(1)} s; batch p50 ${t(result.batchMs.p50)} ms, p99 ${t(result.batchMs.p99)} ms |`,
      `| keyword search during the import (n=${k.during.n}) | p50 ${t(k.during.p50)} ms, p99 ${t(k.during.p99)} ms |`,
      `| keyword search right after (n=${k.after.n}) | p50 ${t(k.after.p50)} ms, p99 ${t(k.after.p99)} ms |`,
      `| keyword search while embedding (n=${k.embedding.n}) | p50 ${t(k.embedding.p50)} ms, p99 ${t(k.embedding.p99)} ms |`,
      `| keyword search once embedded (n=${k.settled.n}) | p50 ${t(k.settled.p50)} ms, p99 ${t(k.settled.p99)} ms |`,
      `| hybrid search of new queries once embedded (n=${result.hybrid.n}) | p50 ${t(result.hybrid.p50)} ms, p99 ${t(result.hybrid.p99)} ms |`,
      `| _meta.search at the import's end | pendingNodes ${atEnd.pendingNodes}, etaSeconds ${atEnd.etaSeconds} |`,
      `| every node embedded (pendingNodes 0) | ${fullS.toFixed(1)} s from the first batch (${(fullS - importS).toFixed(1)} s after the last) |`,
      `| RSS MB with the model's process: start / idle / import peak / embedding peak / embedded / after searches / read caches full / ${REST_S} s later | ${[rss.start, rss.idle, rss.importPeak, rss.embedPeak, rss.embedded, rss.searched, rss.cached, rss.rested].map((x) => x.toFixed(0)).join(' / ')} |`,
      `| RSS MB of the server process alone: embedded / after searches / read caches full / ${REST_S} s later | ${[own.embedded, own.searched, own.cached, own.rested].map((x) => x.toFixed(0)).join(' / ')} |`,
    ].join('\n')
    mkdirSync(join(ROOT, 'bench/results'), { recursive: true })
    writeFileSync(join(ROOT, `bench/results/import50k-${dbName}.json`), `${JSON.stringify(result, null, 2)}\n`)
    writeFileSync(join(ROOT, `bench/results/import50k-${dbName}.md`), `${md}\n`)
    console.log(`\n${md}\n`)
  } finally {
    server.proc.kill('SIGTERM')
    await server.proc.exited
  }
} finally {
  await database?.drop()
  rmSync(dataDir, { recursive: true, force: true })
}
process.exit(0)
