/**
 * bun run bench:webhooks — webhook delivery on one server process, 10 webhooks × 1,000
 * node.added events to a local receiver (its own thread):
 *   throughput: 1,000 events committed at once (one batch), events and deliveries per second
 *               from the commit to the last receipt; the same for a backlog of 10,000 pending
 *               deliveries at start-up; and each delivery's lag behind sequential writes;
 *   write cost: latency of POST /mutate add with no webhook, with 10 registered but delivery
 *               paused (since the fan-out left the write's transaction, the write adds only its
 *               event), and with 10 registered
 *               while deliveries run in the same process.
 * Uses PGlite under a temporary DATA_DIR, or a database of its own created on the PostgreSQL
 * server of BENCH_DATABASE_URL (and dropped at the end). Reports figures, never asserts: these machines are shared and noisy.
 */
import { startScheduler } from '../src/scheduler'
import { startBenchServer } from './lib/app'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000)
const WEBHOOKS = 10
const server = await startBenchServer(process.env.BENCH_DATABASE_URL)
server.deps.config.webhookAllowInsecure = true // the receiver is on 127.0.0.1
const headers = { authorization: `Bearer ${server.ownerKey}`, 'content-type': 'application/json' }
const now = () => performance.timeOrigin + performance.now()

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(server.url + path, { method, headers, body: body ? JSON.stringify(body) : undefined })
  const json: any = await res.json()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`)
  return json
}

// the receiver thread
const receipts = new Map<string, number[]>()
let received = 0
let onReceipt = () => {}
const worker = new Worker(new URL('./lib/receiver-worker.ts', import.meta.url))
const port = await new Promise<number>((resolve) => {
  worker.onmessage = (e: MessageEvent<any>) => {
    if (e.data.port) return resolve(e.data.port)
    receipts.set(e.data.label, [...(receipts.get(e.data.label) ?? []), e.data.at])
    received++
    onReceipt()
  }
})

async function project(id: string, hooks: number) {
  await call('POST', '/api/v1/mutate', { action: 'addProject', project: { name: id, id } })
  for (let i = 0; i < hooks; i++)
    await call('POST', '/api/v1/webhooks', { projectId: id, url: `http://127.0.0.1:${port}/hook-${i}`, events: ['node.added'] })
  return id
}

/** EVENTS sequential adds; returns each write's latency and when its request was sent, by label. */
async function writes(projectId: string, prefix: string) {
  const latency: number[] = []
  const sent = new Map<string, number>()
  for (let i = 0; i < EVENTS; i++) {
    const label = `${prefix}-${i}`
    const t0 = now()
    await call('POST', '/api/v1/mutate', { action: 'add', projectId, node: { type: 'goal', data: { label } } })
    latency.push(now() - t0)
    sent.set(label, t0)
  }
  return { latency: latency.sort((a, b) => a - b), sent }
}

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
const fmt = (x: number) => x.toFixed(2)

// warm-up: JIT, connection pools, prepared statements
const warm = await project('warm-up', 0)
for (let i = 0; i < 100; i++)
  await call('POST', '/api/v1/mutate', { action: 'add', projectId: warm, node: { type: 'goal', data: { label: `w${i}` } } })

// 1. no webhook
const none = await writes(await project('no-hooks', 0), 'none')

// 2. ten webhooks, delivery not running: what registered webhooks add to the write itself
const paused = await writes(await project('paused', WEBHOOKS), 'paused')

// 3. the 10,000 deliveries phase 2 left pending, drained once the scheduler starts
let target = 0
const allIn = () =>
  new Promise<void>((resolve) => {
    onReceipt = () => received >= target && resolve()
    if (received >= target) resolve()
  })
const drainStart = now()
const scheduler = startScheduler(server.deps) // registers the wake-up listener and starts a round
target = EVENTS * WEBHOOKS
await allIn()
const drainSeconds = (now() - drainStart) / 1000

// 4. ten webhooks, delivering while sequential writes go on: write latency and per-event lag
receipts.clear()
received = 0
const busy = await writes(await project('live', WEBHOOKS), 'live')
await allIn()
const lags: number[] = []
for (const [label, at] of receipts) for (const t of at) lags.push(t - busy.sent.get(label)!)
lags.sort((a, b) => a - b)

// 5. a burst: EVENTS adds committed in one batch, then everything delivered
receipts.clear()
received = 0
const burst = await project('burst', WEBHOOKS)
const mutations = Array.from({ length: EVENTS }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `burst-${i}` } } }))
// timed from the request: the first deliveries may arrive before its (large) answer does
const burstSent = now()
await call('POST', '/api/v1/mutate', { action: 'batch', projectId: burst, mutations })
await allIn()
const burstSeconds = (Math.max(...[...receipts.values()].flat()) - burstSent) / 1000

console.log(`\nwebhooks bench on ${server.deps.db.kind}: ${WEBHOOKS} webhooks × ${EVENTS} events, receiver in its own thread`)
console.log('| write (POST /mutate add, sequential) | p50 ms | p95 ms | mean ms |')
console.log('|---|---|---|---|')
for (const [name, r] of [
  ['no webhook', none],
  ['10 webhooks, delivery paused', paused],
  ['10 webhooks, delivering', busy],
] as const)
  console.log(`| ${name} | ${fmt(pct(r.latency, 50))} | ${fmt(pct(r.latency, 95))} | ${fmt(mean(r.latency))} |`)
console.log(
  `added by 10 webhooks at p50: +${fmt(pct(paused.latency, 50) - pct(none.latency, 50))} ms (registered, not delivering), +${fmt(pct(busy.latency, 50) - pct(none.latency, 50))} ms (while delivering)`,
)
console.log('| delivery | deliveries | seconds | deliveries/s | events/s |')
console.log('|---|---|---|---|---|')
console.log(
  `| burst: ${EVENTS} events in one batch, request sent → last receipt | ${EVENTS * WEBHOOKS} | ${burstSeconds.toFixed(2)} | ${Math.round((EVENTS * WEBHOOKS) / burstSeconds)} | ${Math.round(EVENTS / burstSeconds)} |`,
)
console.log(
  `| backlog: ${EVENTS * WEBHOOKS} pending at start-up → last receipt | ${EVENTS * WEBHOOKS} | ${drainSeconds.toFixed(2)} | ${Math.round((EVENTS * WEBHOOKS) / drainSeconds)} | ${Math.round(EVENTS / drainSeconds)} |`,
)
console.log(
  `sequential writes: request sent → receipt (an upper bound on commit → receipt): p50 ${fmt(pct(lags, 50))} ms, p95 ${fmt(pct(lags, 95))} ms, max ${fmt(lags.at(-1)!)} ms`,
)

await scheduler.stop()
worker.terminate()
await server.close()
