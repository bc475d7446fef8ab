/**
 * The costs of live.md section 7 (the stream and presence), on PGlite and, with
 * BENCH_DATABASE_URL, on PostgreSQL:
 *
 *   bun bench/live.ts                       (npm run bench:live; LIVE_STREAMS=2000 LIVE_ROUNDS=5 LIVE_ACTORS=500 LIVE_SECONDS=30)
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/live.ts
 *
 * 1. streams: STREAMS open `GET /api/v1/stream` on one server (held by a worker thread on raw
 *    sockets, 20 per key), then ROUNDS writes: for each, the time from the write's answer until
 *    each stream received its event (p50, p99, worst over every stream and round), while a second
 *    worker asks /healthz one request after another (its p99 over the whole time); and the
 *    server's memory per open stream (its RSS with the streams open, less before, ÷ STREAMS).
 *    live.md: p99 ≤ 1 s, /healthz p99 ≤ 50 ms, ≤ 50 KB per stream.
 * 2. presence: ACTORS actors (one user, one X-Agent-Id each) each posting presence every 10 s
 *    (a new note each time, so every post is a change said on the stream) for SECONDS, half
 *    through each of two replicas on one PostgreSQL (one server on PGlite); a stream on each
 *    replica times how long a post through the other takes to reach it (p50, p99, worst), and
 *    /healthz p99 on both meanwhile. live.md: /healthz p99 ≤ 50 ms, visible within 1 s.
 *
 * Prints a markdown table and writes it, with the JSON, under bench/results/ (gitignored).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ownDatabase, serverEnv } from './lib/harness'
import { rssOf } from './lib/rss'
import { freePort, ownerClient, type Spawned, spawnServer } from './lib/spawn'

const ROOT = join(import.meta.dir, '..')
const STREAMS = Number(process.env.LIVE_STREAMS ?? 2000)
const ROUNDS = Number(process.env.LIVE_ROUNDS ?? 5)
const ACTORS = Number(process.env.LIVE_ACTORS ?? 500)
const SECONDS = Number(process.env.LIVE_SECONDS ?? 30)
const PG_URL = process.env.BENCH_DATABASE_URL
const ADMIN = 'bench-admin-token-0123456789abcdef'
const P = 'live'

const clock = () => performance.timeOrigin + performance.now()
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : Number.NaN
}
const r1 = (x: number) => Math.round(x * 10) / 10
const r2 = (x: number) => Math.round(x * 100) / 100

function worker(file: string) {
  return new Worker(new URL(`./lib/${file}`, import.meta.url).href)
}
const next = <T>(w: Worker) => new Promise<T>((resolve) => w.addEventListener('message', (e) => resolve(e.data as T), { once: true }))

/** /healthz on `bases`, one request after another on each, until the returned stop is called. */
function probeHealthz(bases: string[]) {
  const workers = bases.map((base) => {
    const w = worker('healthz-probe-worker.ts')
    w.postMessage({ base, connections: 1 })
    return w
  })
  return async () => {
    const results = workers.map((w) => next<{ times: number[] }>(w))
    for (const w of workers) w.postMessage('stop')
    const times = (await Promise.all(results)).flatMap((r) => r.times)
    for (const w of workers) w.terminate()
    return times
  }
}

async function start(kind: 'pglite' | 'postgres', tmp: string) {
  const db = await ownDatabase(kind, tmp, PG_URL)
  const env = (port: number) =>
    serverEnv({ ...db.env, PORT: String(port), ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'warn' }) as Record<string, string>
  const a = await spawnServer(env(freePort()))
  // the owner's key is printed once the server listens, a moment after /healthz first answers
  for (let i = 0; i < 200 && !/Arbor API key for owner/.test(a.output()); i++) await Bun.sleep(50)
  const { key, call } = ownerClient(a)
  await call('POST', '/api/v1/mutate', { action: 'addProject', project: { name: 'Live', id: P } })
  const goal = (await call('POST', '/api/v1/mutate', { action: 'add', projectId: P, node: { type: 'goal', data: { label: 'Shared' } } }))
    .node.id as string
  return { db, a, key, call, goal, env }
}

/** `n` keys of one member of the project, minted through the admin API (a key holds at most 20 streams). */
async function memberKeys(server: Spawned, call: ReturnType<typeof ownerClient>['call'], n: number): Promise<string[]> {
  const admin = (path: string, body: unknown) =>
    fetch(server.url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<any>)
  const user = await admin('/admin/v1/users', { name: 'Streamer', tier: 'team' })
  await call('POST', '/api/v1/members', { projectId: P, userId: user.user.id })
  const keys: string[] = []
  for (let i = 0; i < n; i++) keys.push((await admin(`/admin/v1/users/${user.user.id}/api-keys`, {})).apiKey)
  return keys
}

async function streams(kind: 'pglite' | 'postgres', tmp: string) {
  const { db, a, call } = await start(kind, tmp)
  try {
    const keys = await memberKeys(a, call, Math.ceil(STREAMS / 20))
    // the server process's own RSS (not the sentence model's process), the median of a few samples once settled
    const rss = async () => {
      const xs: number[] = []
      for (let i = 0; i < 7; i++) {
        xs.push(rssOf(a.proc.pid).server)
        await Bun.sleep(500)
      }
      return pct(xs, 50)
    }
    await Bun.sleep(5000)
    const before = await rss()
    const holder = worker('hold-streams-worker.ts')
    const opened = next<{ opened: number; statuses: Record<string, number> }>(holder)
    holder.postMessage({ base: a.url, keys, path: `/api/v1/stream?projectId=${P}`, n: STREAMS })
    const { statuses } = await opened
    if (statuses['200'] !== STREAMS) throw new Error(`streams opened: ${JSON.stringify(statuses)}`)
    await Bun.sleep(3000)
    const after = await rss()
    const latencies: number[] = []
    let missing = 0
    const stop = probeHealthz([a.url])
    for (let round = 0; round < ROUNDS; round++) {
      const marker = `live-probe-${round}-${Math.random().toString(36).slice(2, 8)}`
      const report = next<{ arrivals: (number | null)[] }>(holder)
      holder.postMessage({ expect: marker, timeoutMs: 15_000 })
      await call('POST', '/api/v1/mutate', { action: 'add', projectId: P, node: { type: 'goal', data: { label: marker } } })
      const answered = clock()
      const { arrivals } = await report
      for (const t of arrivals)
        if (t === null) missing++
        else latencies.push(Math.max(0, t - answered))
      await Bun.sleep(1000)
    }
    const healthz = await stop()
    holder.terminate()
    return {
      db: kind,
      streams: STREAMS,
      writes: ROUNDS,
      missing,
      deliveryMs: { p50: r1(pct(latencies, 50)), p99: r1(pct(latencies, 99)), max: r1(Math.max(...latencies)) },
      healthzMs: { p50: r2(pct(healthz, 50)), p99: r2(pct(healthz, 99)), n: healthz.length },
      kbPerStream: r1(((after - before) * 1024) / STREAMS),
      rssMb: { before: r1(before), after: r1(after) },
    }
  } finally {
    a.proc.kill('SIGTERM')
    await a.proc.exited
    await db.drop()
  }
}

/** Presence messages of one replica's stream, by note, with their arrival time. */
async function presenceStream(base: string, key: string, seen: Map<string, number>, signal: AbortSignal) {
  const res = await fetch(`${base}/api/v1/stream?projectId=${P}`, { headers: { authorization: `Bearer ${key}` }, signal })
  void (async () => {
    const decoder = new TextDecoder()
    let buf = ''
    try {
      for await (const chunk of res.body!) {
        buf += decoder.decode(chunk, { stream: true })
        let at = buf.indexOf('\n\n')
        while (at >= 0) {
          const block = buf.slice(0, at)
          buf = buf.slice(at + 2)
          at = buf.indexOf('\n\n')
          const note = /"note":"([^"]+)"/.exec(block)?.[1]
          if (block.includes('event: presence') && note && !seen.has(note)) seen.set(note, clock())
        }
      }
    } catch {}
  })()
}

async function presence(kind: 'pglite' | 'postgres', tmp: string) {
  const { db, a, key, goal, env } = await start(kind, tmp)
  const b = kind === 'postgres' ? await spawnServer(env(freePort())) : a
  const ctl = new AbortController()
  try {
    const seenOnA = new Map<string, number>()
    const seenOnB = new Map<string, number>()
    await presenceStream(a.url, key, seenOnA, ctl.signal)
    if (b !== a) await presenceStream(b.url, key, seenOnB, ctl.signal)
    await Bun.sleep(500)
    const stop = probeHealthz(b === a ? [a.url] : [a.url, b.url])
    const posted: { note: string; through: 'a' | 'b'; at: number }[] = []
    let failures = 0
    const end = Date.now() + SECONDS * 1000
    const actor = async (i: number) => {
      await Bun.sleep((i * 10_000) / ACTORS)
      for (let n = 0; Date.now() < end; n++) {
        const through = i % 2 ? 'b' : 'a'
        const note = `a${i}-${n}`
        const res = await fetch(`${(through === 'a' ? a : b).url}/api/v1/presence`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-agent-id': `actor-${i}` },
          body: JSON.stringify({ projectId: P, nodeId: goal, note }),
        })
        await res.text()
        if (res.status === 200) posted.push({ note, through, at: clock() })
        else failures++
        await Bun.sleep(10_000)
      }
    }
    await Promise.all(Array.from({ length: ACTORS }, (_, i) => actor(i)))
    await Bun.sleep(2000) // the last messages arrive
    const healthz = await stop()
    // how long each post took to show on the other replica's stream (on PGlite: the one server's)
    const visible: number[] = []
    let notSeen = 0
    for (const p of posted) {
      const other = b === a ? seenOnA : p.through === 'a' ? seenOnB : seenOnA
      const t = other.get(p.note)
      if (t === undefined) notSeen++
      else visible.push(Math.max(0, t - p.at))
    }
    return {
      db: kind,
      replicas: b === a ? 1 : 2,
      actors: ACTORS,
      posts: posted.length,
      failures,
      notSeen,
      visibleMs: { p50: r1(pct(visible, 50)), p99: r1(pct(visible, 99)), max: r1(Math.max(...visible)) },
      healthzMs: { p50: r2(pct(healthz, 50)), p99: r2(pct(healthz, 99)), n: healthz.length },
    }
  } finally {
    ctl.abort()
    for (const s of new Set([a, b])) {
      s.proc.kill('SIGTERM')
      await s.proc.exited
    }
    await db.drop()
  }
}

const tmp = mkdtempSync(join(tmpdir(), 'arbor-live-'))
const kinds = (PG_URL ? ['pglite', 'postgres'] : ['pglite']).filter(
  (k) => !process.env.BENCH_DATABASES || process.env.BENCH_DATABASES.split(',').includes(k),
) as ('pglite' | 'postgres')[]
const results: { streams: Awaited<ReturnType<typeof streams>>[]; presence: Awaited<ReturnType<typeof presence>>[] } = {
  streams: [],
  presence: [],
}
try {
  for (const kind of kinds) {
    process.stderr.write(`${kind}: streams… `)
    results.streams.push(await streams(kind, tmp))
    process.stderr.write('presence… ')
    results.presence.push(await presence(kind, tmp))
    process.stderr.write('done\n')
  }
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
const commit = Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], { cwd: ROOT }).stdout.toString().trim()
const md = [
  `live.md section 7 at ${commit}: ${STREAMS} streams, ${ROUNDS} writes; ${ACTORS} actors posting every 10 s for ${SECONDS} s`,
  '',
  '| streams | open | write → every stream p50 | p99 | worst | missed | /healthz p50 | p99 | KB per stream |',
  '|---|---|---|---|---|---|---|---|---|',
  ...results.streams.map(
    (s) =>
      `| ${s.db} | ${s.streams} | ${s.deliveryMs.p50} ms | ${s.deliveryMs.p99} ms | ${s.deliveryMs.max} ms | ${s.missing} | ${s.healthzMs.p50} ms | ${s.healthzMs.p99} ms | ${s.kbPerStream} |`,
  ),
  '',
  '| presence | replicas | actors | posts | refused | post → other replica p50 | p99 | worst | not seen | /healthz p50 | p99 |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
  ...results.presence.map(
    (p) =>
      `| ${p.db} | ${p.replicas} | ${p.actors} | ${p.posts} | ${p.failures} | ${p.visibleMs.p50} ms | ${p.visibleMs.p99} ms | ${p.visibleMs.max} ms | ${p.notSeen} | ${p.healthzMs.p50} ms | ${p.healthzMs.p99} ms |`,
  ),
].join('\n')
console.log(`\n${md}`)
const dir = join(ROOT, 'bench', 'results')
mkdirSync(dir, { recursive: true })
writeFileSync(join(dir, 'live.md'), `${md}\n`)
writeFileSync(join(dir, 'live.json'), `${JSON.stringify({ commit, ...results }, null, 2)}\n`)
