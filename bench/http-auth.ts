/**
 * What authentication costs: throughput of an authenticated `GET /api/v1/projects` against
 * an unauthenticated `GET /healthz`, on the same server, in one run, per database.
 *
 *   bun run bench:auth                                   # PGlite only
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:55432/postgres bun run bench:auth
 *                                                        # PGlite, then PostgreSQL
 *   CONCURRENCY=32 REQUESTS=5000 ROUNDS=3 bun run bench:auth    (the defaults)
 *
 * GET /api/v1/tier-status is measured too: it costs the key lookup and nothing else, which
 * separates the price of authentication from that of the project query.
 * The server is the real app on a real port (Bun.serve around createApp's handle, as in
 * src/main.ts) on a fresh database; the owner has PROJECTS projects. The client runs in a
 * worker thread. Each round measures every endpoint in turn with REQUESTS requests from
 * CONCURRENCY keep-alive clients; the figures are the medians over ROUNDS rounds.
 * On PostgreSQL a throw-away database is created on BENCH_DATABASE_URL's server (it needs the
 * right to create databases) and dropped at the end.
 */
import { startBenchServer } from './lib/app'
import { expectAll, type LoadResult, load, median, percentile, perSecond } from './lib/load'

const num = (name: string, fallback: number) => {
  const n = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`)
  return n
}
const CONCURRENCY = num('CONCURRENCY', 32)
const REQUESTS = num('REQUESTS', 5_000)
const ROUNDS = num('ROUNDS', 3)
const PROJECTS = num('PROJECTS', 5)
const WARMUP = Math.min(2_000, REQUESTS)

/** The endpoints measured, each with REQUESTS requests per round. */
const ENDPOINTS = [
  { name: 'healthz', path: '/healthz', auth: false },
  { name: 'projects', path: '/api/v1/projects', auth: true },
  // authentication and nothing else: tier-status is computed from the user row alone
  { name: 'tier-status', path: '/api/v1/tier-status', auth: true },
] as const
type Name = (typeof ENDPOINTS)[number]['name']

interface Figures {
  database: string
  perSecond: Record<Name, number>
  p50: Record<Name, number>
  p99: Record<Name, number>
}

async function measure(database: string, postgresUrl?: string): Promise<Figures> {
  const server = await startBenchServer(postgresUrl)
  try {
    const auth = { authorization: `Bearer ${server.ownerKey}` }
    for (let i = 0; i < PROJECTS; i++) {
      const res = await fetch(`${server.url}/api/v1/mutate`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'addProject', project: { name: `Bench project ${i}`, id: `bench-${i}` } }),
      })
      if (res.status !== 200) throw new Error(`addProject: ${res.status} ${await res.text()}`)
    }
    const job = (e: (typeof ENDPOINTS)[number], requests: number) =>
      load({ url: server.url + e.path, headers: e.auth ? auth : {}, concurrency: CONCURRENCY, requests })
    // warm every path up (JIT, connection pool, prepared statements) before measuring
    for (const e of ENDPOINTS) expectAll(await job(e, WARMUP), 200, `GET ${e.path}`)

    const runs = Object.fromEntries(ENDPOINTS.map((e) => [e.name, [] as LoadResult[]])) as Record<Name, LoadResult[]>
    for (let round = 0; round < ROUNDS; round++) {
      const line: string[] = []
      for (const e of ENDPOINTS) {
        const r = await job(e, REQUESTS)
        expectAll(r, 200, `GET ${e.path}`)
        runs[e.name].push(r)
        line.push(`${e.path} ${perSecond(r).toFixed(0)}`)
      }
      console.log(`  ${database} round ${round + 1}/${ROUNDS} (req/s): ${line.join(', ')}`)
    }
    const each = (f: (r: LoadResult) => number) =>
      Object.fromEntries(ENDPOINTS.map((e) => [e.name, median(runs[e.name].map(f))])) as Record<Name, number>
    return { database, perSecond: each(perSecond), p50: each((r) => percentile(r, 50)), p99: each((r) => percentile(r, 99)) }
  } finally {
    await server.close()
  }
}

const pgUrl = process.env.BENCH_DATABASE_URL
console.log(
  `bench:auth: ${REQUESTS} requests x ${ROUNDS} rounds per endpoint, ${CONCURRENCY} concurrent clients, bun ${Bun.version}, ${navigator.hardwareConcurrency} CPUs`,
)
const results = [await measure('pglite')]
if (pgUrl) results.push(await measure('postgres', pgUrl))
else console.log('  (set BENCH_DATABASE_URL=postgres://… to measure PostgreSQL too)')

console.log('')
console.log(
  'database  /healthz req/s  /api/v1/projects req/s  ratio  | /api/v1/tier-status req/s  ratio  | p50/p99 ms: healthz, projects, tier-status',
)
for (const r of results) {
  const ms = (n: Name) => `${r.p50[n].toFixed(2)}/${r.p99[n].toFixed(1)}`
  console.log(
    [
      r.database.padEnd(8),
      r.perSecond.healthz.toFixed(0).padStart(14),
      r.perSecond.projects.toFixed(0).padStart(23),
      (r.perSecond.projects / r.perSecond.healthz).toFixed(3).padStart(6),
      '|',
      r.perSecond['tier-status'].toFixed(0).padStart(25),
      (r.perSecond['tier-status'] / r.perSecond.healthz).toFixed(3).padStart(6),
      '|',
      `${ms('healthz')}, ${ms('projects')}, ${ms('tier-status')}`,
    ].join('  '),
  )
}
console.log('ratio = throughput of the authenticated endpoint / throughput of unauthenticated /healthz on the same server')
console.log('tier-status costs authentication only (one key lookup); projects costs the key lookup plus the project list query')
