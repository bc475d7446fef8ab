/**
 * bun run bench:tree — the tree core on a 10,000-node project, each figure next to its floor
 * measured in the same run:
 *   reads  vs  the same rows read by a raw query through the same driver + a hello-world
 *              round trip (GET /healthz) on the same server;
 *   writes vs  the hello-world round trip.
 * Uses PGlite under a temporary DATA_DIR, or a database of its own created on the PostgreSQL
 * server of BENCH_DATABASE_URL (and dropped at the end).
 * Reports ratios, never asserts: these machines are shared and noisy.
 */

import ancestorsSql from '../sql/nodes/ancestors.sql' with { type: 'text' }
import listSql from '../sql/nodes/list.sql' with { type: 'text' }
import siblingsSql from '../sql/nodes/siblings.sql' with { type: 'text' }
import subtreeSql from '../sql/nodes/subtree.sql' with { type: 'text' }
import { startBenchServer } from './lib/app'

const url = process.env.BENCH_DATABASE_URL
const server = await startBenchServer(url)
const db = server.deps.db
const key = server.ownerKey
const base = server.url
const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, { method, headers: auth, body: body ? JSON.stringify(body) : undefined })
  const json: any = await res.json()
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`)
  return json
}

const WORDS = `invoice payment reminder customer onboarding export report dashboard billing tax
currency receipt approval workflow mobile search filter integration webhook audit permission
template branding email schedule forecast cash churn trial upgrade sync accounting ledger`.split(/\s+/)
const pick = (i: number, n = 4) => Array.from({ length: n }, (_, k) => WORDS[(i * 7 + k * 13) % WORDS.length]).join(' ')

/** 10 goals × 5 needs × 8 approaches × 20 jobs + 1,550 tasks = 10,010 nodes. */
function planTree() {
  const entries: any[] = []
  for (let g = 0; g < 10; g++) {
    const gid = `draft-g${g}`
    entries.push({
      action: 'add',
      node: { id: gid, type: 'goal', data: { label: `Goal ${g}: ${pick(g)}`, description: `Why ${pick(g + 1, 8)}` } },
    })
    for (let n = 0; n < 5; n++) {
      const nid = `${gid}-n${n}`
      entries.push({ action: 'add', node: { id: nid, type: 'need', parentId: gid, data: { label: `Customers need ${pick(g * 5 + n)}` } } })
      for (let a = 0; a < 8; a++) {
        const aid = `${nid}-a${a}`
        entries.push({
          action: 'add',
          node: {
            id: aid,
            type: 'approach',
            parentId: nid,
            data: { label: `Bet on ${pick(g + n + a)}`, kano: 'incremental', size: 'car', measure: `share of ${pick(a, 3)}` },
          },
        })
        for (let j = 0; j < 20; j++)
          entries.push({
            action: 'add',
            node: {
              id: `${aid}-j${j}`,
              type: 'job',
              parentId: aid,
              data: { label: `A user can ${pick(g + n + a + j, 6)}`, notes: pick(j, 12) },
            },
          })
      }
    }
  }
  for (let t = 0; t < 1550; t++) entries.push({ action: 'add', node: { type: 'task', data: { label: `Note about ${pick(t, 5)}` } } })
  return entries
}

/** Run `fn` `n` times (after a warm-up); returns sorted latencies in ms. */
async function time(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < Math.min(3, n); i++) await fn()
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    await fn()
    out.push(performance.now() - t0)
  }
  return out.sort((a, b) => a - b)
}
const p50 = (xs: number[]) => xs[Math.floor(xs.length / 2)]!

// ---- load ----
await call('POST', '/api/v1/mutate', { action: 'addProject', project: { name: 'bench', id: 'bench' } })
const entries = planTree()
const idMap: Record<string, string> = {}
const loadStart = performance.now()
for (let i = 0; i < entries.length; i += 1000) {
  const chunk = entries
    .slice(i, i + 1000)
    .map((e) => (e.node.parentId && idMap[e.node.parentId] ? { ...e, node: { ...e.node, parentId: idMap[e.node.parentId] } } : e))
  Object.assign(idMap, (await call('POST', '/api/v1/mutate', { action: 'batch', projectId: 'bench', mutations: chunk })).idMap)
}
const loadMs = performance.now() - loadStart
const goal = idMap['draft-g3']!
const job = idMap['draft-g3-n2-a4-j7']!

// ---- measure ----
const hello = await time(200, () => fetch(`${base}/healthz`).then((r) => r.text()))
const rows: [string, number, number][] = []
async function read(name: string, n: number, path: string, raw: () => Promise<unknown>) {
  const api = await time(n, () => fetch(base + path, { headers: auth }).then((r) => r.text()))
  const sql = await time(n, raw)
  const floor = p50(sql) + p50(hello)
  rows.push([name, p50(api), floor])
}
await read('GET /nodes (10,010 nodes)', 20, '/api/v1/nodes?projectId=bench', () => db.query(listSql, ['bench', null, null]))
await read('GET /tree down from a goal', 50, `/api/v1/tree?projectId=bench&nodeId=${goal}&direction=down`, () =>
  db.query(subtreeSql, ['bench', [goal]]),
)
const jobParent = idMap['draft-g3-n2-a4']!
await read('GET /tree context from a job', 100, `/api/v1/tree?projectId=bench&nodeId=${job}&direction=context`, () =>
  Promise.all([
    db.query(ancestorsSql, ['bench', job]),
    db.query(subtreeSql, ['bench', [job]]),
    db.query(siblingsSql, ['bench', jobParent, job]),
  ]),
)
let k = 0
const single = await time(100, () =>
  call('POST', '/api/v1/mutate', { action: 'add', projectId: 'bench', node: { type: 'task', data: { label: `bench task ${k++}` } } }),
)
rows.push(['single add', p50(single), p50(hello)])
await call('POST', '/api/v1/mutate', { action: 'addProject', project: { name: 'batch', id: 'batch' } })
const batchTimes: number[] = []
for (let r = 0; r < 5; r++) {
  const mutations = Array.from({ length: 1000 }, (_, i) => ({
    action: 'add',
    node: { type: 'task', data: { label: `batch ${r}-${i} ${pick(i)}` } },
  }))
  const t0 = performance.now()
  await call('POST', '/api/v1/mutate', { action: 'batch', projectId: 'batch', mutations })
  batchTimes.push(performance.now() - t0)
}
batchTimes.sort((a, b) => a - b)
rows.push(['batch of 1,000 adds', p50(batchTimes), p50(hello)])

console.log(`\ntree bench on ${db.kind}: loaded ${entries.length} nodes in ${(loadMs / 1000).toFixed(1)} s`)
console.log('| operation | p50 ms | floor ms | ratio |')
console.log('|---|---|---|---|')
for (const [name, ms, floor] of rows) console.log(`| ${name} | ${ms.toFixed(2)} | ${floor.toFixed(2)} | ${(ms / floor).toFixed(2)}× |`)
console.log('floor: reads = raw SQL of the same rows through the same driver + GET /healthz round trip; writes = GET /healthz round trip')

await server.close()
process.exit(0)
