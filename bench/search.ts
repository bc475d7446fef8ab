// Search speed on a large project (issue 4): loads a synthetic 10,000-node project through the
// API, waits until every node has its vectors, then measures, warm and in the same run,
// p50/p99 of GET /search (distinct queries, so every query is embedded) next to GET /nodes of
// the whole project, and the memory the index takes (vector bytes, and the RSS a fresh
// replica adds when it loads the index from the database).
//
//   bun run bench:search [--nodes 10000] [--searches 200] [--reads 40]
//
// Runs the app in-process on a throw-away embedded database (DATABASE_URL=postgres://… to use
// a server) with the configured embedder. Embedding 10,000 nodes with the built-in model
// takes a few minutes on two cores; the timings are taken afterwards.

import { bootstrapOwner } from '../src/accounts/service'
import { createApp } from '../src/app'
import { loadConfig } from '../src/config'
import { openDb } from '../src/db'
import { createDeps, type Deps } from '../src/deps'
import { createLogger } from '../src/log'
import { tick } from '../src/search/loop'
import { percentile } from './search-core/metrics'

const args = process.argv.slice(2)
const num = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? Number(args[i + 1]) : fallback
}
const TOTAL = num('nodes', 10_000)
const SEARCHES = num('searches', 200)
const READS = num('reads', 40)

// --- a deterministic synthetic planning tree --------------------------------------------
let seed = 42
const rand = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32
const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!
const SUBJECTS = [
  'customers',
  'admins',
  'accountants',
  'payers',
  'sellers',
  'new users',
  'support agents',
  'finance teams',
  'partners',
  'managers',
]
const VERBS = [
  'export',
  'approve',
  'review',
  'search',
  'schedule',
  'import',
  'share',
  'archive',
  'sign',
  'reconcile',
  'track',
  'preview',
  'edit',
  'merge',
  'audit',
]
const OBJECTS = [
  'invoices',
  'receipts',
  'payment reminders',
  'tax reports',
  'expense claims',
  'purchase orders',
  'credit notes',
  'bank feeds',
  'contracts',
  'price lists',
  'timesheets',
  'refunds',
  'subscriptions',
  'dashboards',
  'user roles',
  'webhooks',
  'currency rates',
  'ledgers',
  'quotes',
  'payouts',
]
const QUALIFIERS = [
  'in bulk',
  'from the mobile app',
  'without leaving the inbox',
  'in under a minute',
  'with one click',
  'by email',
  'on a schedule',
  'across all workspaces',
  'in their own language',
  'with an audit trail',
  'offline',
  'from a CSV file',
]
const sentence = () => `${pick(SUBJECTS)} can ${pick(VERBS)} ${pick(OBJECTS)} ${pick(QUALIFIERS)}`
const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1)

type Draft = { id: string; type: string; parentId?: string; data: Record<string, unknown> }
function tree(total: number): Draft[] {
  const out: Draft[] = []
  const goals = Math.max(1, Math.round(total / 1000))
  const needs = goals * 5
  const approaches = Math.round(total / 20)
  const tasks = Math.round(total / 10)
  const jobs = total - goals - needs - approaches - tasks
  for (let g = 0; g < goals; g++)
    out.push({
      id: `draft-g${g}`,
      type: 'goal',
      data: { label: cap(`grow ${pick(OBJECTS)} ${pick(QUALIFIERS)}`), description: cap(sentence()) },
    })
  for (let n = 0; n < needs; n++)
    out.push({ id: `draft-n${n}`, type: 'need', parentId: `draft-g${n % goals}`, data: { label: cap(sentence()) } })
  for (let a = 0; a < approaches; a++)
    out.push({
      id: `draft-a${a}`,
      type: 'approach',
      parentId: `draft-n${a % needs}`,
      data: {
        label: cap(`${pick(VERBS)} ${pick(OBJECTS)} ${pick(QUALIFIERS)}`),
        description: cap(sentence()),
        measure: `Share of ${pick(OBJECTS)} handled ${pick(QUALIFIERS)}`,
      },
    })
  for (let j = 0; j < jobs; j++)
    out.push({ id: `draft-j${j}`, type: 'job', parentId: `draft-a${j % approaches}`, data: { label: cap(sentence()) } })
  for (let t = 0; t < tasks; t++)
    out.push({ id: `draft-t${t}`, type: 'task', data: { label: cap(`${pick(VERBS)} the ${pick(OBJECTS)} for ${pick(SUBJECTS)}`) } })
  return out
}

// --- the app ---------------------------------------------------------------------------
const env = { ...process.env, DATABASE_URL: process.env.DATABASE_URL ?? 'memory://', RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'error' }
const config = loadConfig(env)
const db = await openDb(config)
const deps: Deps = createDeps({ config, db, log: createLogger(config.logLevel) })
const key = (await bootstrapOwner(db))!
const app = createApp(deps)
const call = async (handle: typeof app.handle, method: string, path: string, body?: unknown) => {
  const res = await handle(
    new Request(`http://bench${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  )
  return res.json() as Promise<any>
}

const projectId = `bench-${Date.now().toString(36)}`
await call(app.handle, 'POST', '/api/v1/mutate', { action: 'addProject', project: { id: projectId, name: 'search bench' } })
let t0 = performance.now()
const nodes = tree(TOTAL)
for (let i = 0; i < nodes.length; i += 1000) {
  // parents come first and keep their draft ids across batches through real ids
  const res = await call(app.handle, 'POST', '/api/v1/mutate', {
    action: 'batch',
    projectId,
    mutations: nodes.slice(i, i + 1000).map((node) => ({ action: 'add', node })),
  })
  if (!res.success) throw new Error(JSON.stringify(res).slice(0, 400))
  for (const n of nodes.slice(i + 1000)) if (n.parentId && res.idMap[n.parentId]) n.parentId = res.idMap[n.parentId]
}
console.log(`loaded ${nodes.length} nodes in ${((performance.now() - t0) / 1000).toFixed(1)} s`)

t0 = performance.now()
await call(app.handle, 'GET', `/api/v1/search?projectId=${projectId}&q=warm`)
for (;;) {
  const s = await tick(deps, new Date())
  const pending = (await call(app.handle, 'GET', `/api/v1/search?projectId=${projectId}&q=warm`))._meta.search.pendingNodes
  if (pending === 0) break
  if (!s.embedded) await Bun.sleep(200)
  if (Math.random() < 0.05) console.log(`  embedding… ${pending} nodes left`)
}
console.log(`embedded every node in ${((performance.now() - t0) / 1000).toFixed(0)} s`)

// --- timings ---------------------------------------------------------------------------
async function time(n: number, fn: (i: number) => Promise<unknown>) {
  const ms: number[] = []
  for (let i = 0; i < n; i++) {
    const s = performance.now()
    await fn(i)
    ms.push(performance.now() - s)
  }
  ms.sort((a, b) => a - b)
  return { p50: percentile(ms, 50), p99: percentile(ms, 99), n }
}
const queries = Array.from({ length: SEARCHES }, (_, i) => `${pick(VERBS)} ${pick(OBJECTS)} ${pick(QUALIFIERS)} ${i}`)
await time(5, () => call(app.handle, 'GET', `/api/v1/nodes?projectId=${projectId}`)) // warm-up
const reads = await time(READS, () => call(app.handle, 'GET', `/api/v1/nodes?projectId=${projectId}`))
const searches = await time(SEARCHES, (i) =>
  call(app.handle, 'GET', `/api/v1/search?${new URLSearchParams({ projectId, q: queries[i]!, limit: '10' })}`),
)
const cached = await time(SEARCHES, (i) =>
  call(app.handle, 'GET', `/api/v1/search?${new URLSearchParams({ projectId, q: queries[i]!, limit: '10' })}`),
)
const keyword = await time(SEARCHES, (i) =>
  call(app.handle, 'GET', `/api/v1/search?${new URLSearchParams({ projectId, q: queries[i]!, limit: '10', mode: 'keyword' })}`),
)

// --- memory: a fresh replica loading the index from the database ----------------------
// JS heap plus external buffers (the vectors live in WebAssembly memory, counted as external)
const used = () => {
  Bun.gc(true)
  const m = process.memoryUsage()
  return m.heapUsed + m.external
}
const before = used()
const replicaDeps: Deps = createDeps({ config: loadConfig(env), db, log: deps.log })
const replica = createApp(replicaDeps)
t0 = performance.now()
await call(replica.handle, 'GET', `/api/v1/search?projectId=${projectId}&q=warm&mode=keyword`)
const loadMs = performance.now() - t0
const after = used()
const mem = replicaDeps.search.memory()

const f = (x: number) => x.toFixed(1)
console.log(
  `\n${TOTAL} nodes, ${config.meiliUrl ? 'meilisearch' : 'built-in'} backend, embedder ${(await call(app.handle, 'GET', `/api/v1/search?projectId=${projectId}&q=x`))._meta.search.embedder}`,
)
console.log(`| request | p50 ms | p99 ms | n |`)
console.log(`|---|---|---|---|`)
console.log(`| GET /nodes (whole project) | ${f(reads.p50)} | ${f(reads.p99)} | ${reads.n} |`)
console.log(`| GET /search hybrid, new query (embedded) | ${f(searches.p50)} | ${f(searches.p99)} | ${searches.n} |`)
console.log(`| GET /search hybrid, repeated query (vector cached) | ${f(cached.p50)} | ${f(cached.p99)} | ${cached.n} |`)
console.log(`| GET /search mode=keyword | ${f(keyword.p50)} | ${f(keyword.p99)} | ${keyword.n} |`)
console.log(
  `\nindex of ${mem.nodes} nodes: vectors ${(mem.vectorBytes / 1e6).toFixed(1)} MB; a fresh replica loads it from the database in ${f(loadMs)} ms and holds ${((after - before) / 1e6).toFixed(0)} MB for it (heap + external: keyword index, node data, vectors)`,
)
await db.close()
