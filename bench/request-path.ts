/**
 * Where one request's time goes in the wrapper (src/http/server.ts) and in Elysia, step by step,
 * in this process without a socket (issue 26, item 2): each step of GET /healthz and of an
 * authenticated GET /api/v1/projects runs N times on a fresh PGlite database, and the whole
 * handler beside a bare `new Response` of the same bytes; last, the whole handler for a kept
 * GET /api/v1/tree down from the bench's 25-node goal (the fast lane's answer). Request logs go
 * to stdout: run it with stdout to /dev/null and read the table on stderr.
 *
 *   bun bench/request-path.ts > /dev/null          (N=200000 by default; N=50000 for a quick look)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bootstrapOwner } from '../src/accounts/service'
import { createApp } from '../src/app'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/create-deps'
import { openDb } from '../src/db'
import { clientIp } from '../src/http/client-ip'
import { checkHeaders, checkUrl, loggablePath } from '../src/http/input-guard'
import { rateExempt } from '../src/http/rate-exempt'
import { requestIdOf, sizeRefusal } from '../src/http/request-head'
import { limitBody, requestLine } from '../src/http/server'
import { legacyRewrite } from '../src/http/versioning'
import { createLogger } from '../src/log'
import { benchGoal } from './lib/synthetic-tree'

const N = Number(process.env.N ?? 200_000)
const dataDir = mkdtempSync(join(tmpdir(), 'arbor-reqpath-'))
const config = loadConfig({ DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', RATE_LIMIT_PER_MINUTE: String(1e9) })
const db = await openDb(config)
const deps = createDeps({ config, db, log: createLogger('info') })
const key = (await bootstrapOwner(db))!
const { app, handle } = createApp(deps)
const URL_HEALTHZ = 'http://127.0.0.1:3000/healthz'
const URL_PROJECTS = 'http://127.0.0.1:3000/api/v1/projects'
const hz = () => new Request(URL_HEALTHZ, { headers: { host: '127.0.0.1:3000' } })
const pj = () => new Request(URL_PROJECTS, { headers: { host: '127.0.0.1:3000', authorization: `Bearer ${key}` } })

// the bench's goal, through the handler as a client makes it; the first read keeps the answer
const mutate = async (body: unknown) => {
  const res = await handle(
    new Request('http://127.0.0.1:3000/api/v1/mutate', {
      method: 'POST',
      headers: { host: '127.0.0.1:3000', authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
    '127.0.0.1',
  )
  const json: any = await res.json()
  if (res.status !== 200) throw new Error(`mutate: ${res.status} ${JSON.stringify(json).slice(0, 300)}`)
  return json
}
await mutate({ action: 'addProject', project: { name: 'tree', id: 'tree' } })
const goal = (await mutate({ action: 'batch', projectId: 'tree', mutations: benchGoal().map((node) => ({ action: 'add', node })) })).idMap[
  'draft-g'
]
const URL_TREE = `http://127.0.0.1:3000/api/v1/tree?projectId=tree&nodeId=${goal}&direction=down`
const tr = () => new Request(URL_TREE, { headers: { host: '127.0.0.1:3000', authorization: `Bearer ${key}` } })
await (await handle(tr(), '127.0.0.1')).text()

/**
 * CPU µs per call of `fn` over N calls (after N/10 warm-up calls), awaiting only when it returns
 * a promise. CPU time (user + system, all threads) rather than wall time: on a shared machine
 * the wall clock also counts the time other processes held the cores.
 */
async function time(fn: () => unknown): Promise<number> {
  for (let i = 0; i < N / 10; i++) {
    const r = fn()
    if (r instanceof Promise) await r
  }
  const t0 = process.cpuUsage()
  for (let i = 0; i < N; i++) {
    const r = fn()
    if (r instanceof Promise) await r
  }
  const used = process.cpuUsage(t0)
  return (used.user + used.system) / N
}

const rows: [string, number][] = []
const step = async (name: string, fn: () => unknown) => {
  rows.push([name, await time(fn)])
}
const made = hz()
const madeUrl = new URL(URL_HEALTHZ)
await step('new Request (the harness; subtracted nowhere)', hz)
await step(
  'bare: new Response of the same bytes + content-type',
  () => new Response('{"status":"ok"}', { headers: { 'content-type': 'application/json' } }),
)
await step('requestLine: req.url + new URL + compare', () => requestLine(made))
await step('requestIdOf: header get + crypto.randomUUID', () => requestIdOf(made.headers))
await step('clientIp', () => clientIp(made, '127.0.0.1', false))
await step('sizeRefusal: the header walk', () => sizeRefusal(madeUrl, made.headers))
await step('rateExempt + path checks', () => madeUrl.pathname.startsWith('/api/') && rateExempt('GET', madeUrl))
await step('limitBody (GET, no body)', () => limitBody(made, 1_000_000))
await step('checkUrl + checkHeaders', () => checkUrl(madeUrl) ?? checkHeaders(made.headers))
await step('legacyRewrite', () => legacyRewrite(madeUrl.pathname))
await step(
  'x-request-id header get/set on the request',
  () => made.headers.get('x-request-id') !== 'x' && made.headers.set('x-request-id', 'x'),
)
await step('Elysia app.handle(/healthz), hooks and openapi plugin included', () => app.handle(hz()))
await step('three response headers set', () => {
  const res = new Response('{"status":"ok"}')
  res.headers.set('x-request-id', 'abc')
  res.headers.set('x-content-type-options', 'nosniff')
  res.headers.set('cache-control', 'no-store')
})
await step('metrics.request (route match + counter + histogram)', () => deps.metrics.request('GET', '/healthz', 200, 0.3))
await step('log.request (batched line)', () => deps.log.request('abc', 'GET', loggablePath('/healthz'), 200, 0.3, '127.0.0.1'))
await step('WHOLE handle(/healthz)', () => handle(hz(), '127.0.0.1'))
await step('Elysia app.handle(/api/v1/projects), authenticated', () => app.handle(pj()))
await step('WHOLE handle(/api/v1/projects), authenticated', () => handle(pj(), '127.0.0.1'))

const fastBefore = deps.reads.stats.fast
await step('WHOLE handle(/api/v1/tree) down, kept (fast lane)', () => handle(tr(), '127.0.0.1'))
if (deps.reads.stats.fast - fastBefore < N) throw new Error('the kept /tree read did not take the fast lane')
// every timed call was answered, not refused (the rate limit above is out of reach)
for (const make of [pj, tr]) {
  const res = await handle(make(), '127.0.0.1')
  if (res.status !== 200) throw new Error(`${make().url}: ${res.status}`)
}

const width = Math.max(...rows.map(([n]) => n.length))
process.stderr.write(`N=${N} per step, CPU µs per call:\n`)
for (const [name, us] of rows) process.stderr.write(`${name.padEnd(width)}  ${us.toFixed(2).padStart(7)}\n`)
deps.log.flush()
await db.close()
rmSync(dataDir, { recursive: true, force: true })
process.exit(0)
