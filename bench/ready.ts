// Work queues at 50,000 nodes (issue 45, item 3): GET /ready and a claim with count:1 in a project
// of 50,000 nodes with 5,000 ready and 500 blocked jobs, and in one of 50,000 nodes where most
// work is ready (40,000 ready, 500 blocked: issue 51, item 4, GET /ready's _meta counts), beside
// the same in a project of 1,000 nodes (100 ready, 10 blocked), on one real server process,
// PGlite and then PostgreSQL:
//
//   bun run bench:ready [--samples 200] [--only pglite|postgres]
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun run bench:ready
//
// PGlite under a temporary DATA_DIR; with BENCH_DATABASE_URL also a database created on that
// server and dropped at the end. Each project: goals, a need each, approaches of 10 jobs; the jobs
// of the first approaches are open (ready), those of a few approaches blocked by an open
// approach, the rest done. The samples alternate between the three projects, one request at a time
// (a claim is released again, untimed, so every sample sees the same project). Prints a JSON line
// per database and a markdown table; writes bench/results/ready.json (gitignored).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ownDatabase, quiet } from './lib/harness'
import { freePort, ownerClient, spawnServer } from './lib/spawn'
import { percentile } from './search-core/metrics'

const args = process.argv.slice(2)
const num = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? Number(args[i + 1]) : fallback
}
const SAMPLES = num('samples', 200)
const PG_URL = process.env.BENCH_DATABASE_URL
const ROOT = join(import.meta.dir, '..')

type Call = ReturnType<typeof ownerClient>['call']

/** A project of `total` nodes: `ready` open jobs, `blocked` blocked ones, the rest of the jobs done. */
async function seed(call: Call, projectId: string, total: number, ready: number, blocked: number) {
  await call('POST', '/api/v1/mutate', { action: 'addProject', project: { id: projectId, name: projectId } })
  const perApproach = 10
  const approaches = Math.floor((total * 10) / 11 / perApproach) - Math.ceil(total / 1000)
  const goals = Math.max(1, Math.round(total / 1000))
  const readyApproaches = ready / perApproach
  const blockedApproaches = blocked / perApproach
  const adds: { id: string; type: string; parentId?: string; data: Record<string, unknown> }[] = []
  for (let g = 0; g < goals; g++) {
    adds.push({ id: `draft-g${g}`, type: 'goal', data: { label: `Goal ${g}` } })
    adds.push({ id: `draft-n${g}`, type: 'need', parentId: `draft-g${g}`, data: { label: `Need ${g}` } })
  }
  for (let a = 0; a < approaches; a++) {
    adds.push({ id: `draft-a${a}`, type: 'approach', parentId: `draft-n${a % goals}`, data: { label: `Approach ${a}` } })
    const open = a < readyApproaches + blockedApproaches
    for (let j = 0; j < perApproach; j++)
      adds.push({
        id: `draft-a${a}j${j}`,
        type: 'job',
        parentId: `draft-a${a}`,
        data: { label: `Job ${j} of approach ${a}`, ...(open ? {} : { status: 'done' }) },
      })
  }
  // the rest: needs without approaches (a task could be classified do-it, and would be work)
  for (let i = 0; adds.length < total; i++)
    adds.push({ id: `draft-x${i}`, type: 'need', parentId: 'draft-g0', data: { label: `Need x${i}` } })
  // batches of whole approaches (a draft id is known only within its batch)
  const real = new Map<string, string>()
  for (let at = 0; at < adds.length; ) {
    let end = Math.min(at + 990, adds.length)
    while (end < adds.length && adds[end]!.type === 'job') end++
    const part = adds.slice(at, end).map((n) => ({
      ...n,
      ...(n.parentId ? { parentId: real.get(n.parentId) ?? n.parentId } : {}),
    }))
    const res = await call('POST', '/api/v1/mutate', {
      action: 'batch',
      projectId,
      mutations: part.map((node) => ({ action: 'add', node })),
    })
    if (!res.success) throw new Error(`seed ${projectId}: ${JSON.stringify(res).slice(0, 400)}`)
    for (const [draft, id] of Object.entries(res.idMap as Record<string, string>)) real.set(draft, id)
    at = end
  }
  // the blocked approaches wait for the first ready one
  const blocker = real.get('draft-a0')!
  const updates = Array.from({ length: blockedApproaches }, (_, k) => ({
    action: 'update',
    nodeId: real.get(`draft-a${readyApproaches + k}`)!,
    data: { blockedBy: [blocker] },
  }))
  const res = await call('POST', '/api/v1/mutate', { action: 'batch', projectId, mutations: updates })
  if (!res.success) throw new Error(`blockers ${projectId}: ${JSON.stringify(res).slice(0, 400)}`)
  const check = await call('GET', `/api/v1/ready?projectId=${projectId}&limit=1`)
  if (check._meta.total !== ready || check._meta.blocked !== blocked)
    throw new Error(`${projectId}: ${JSON.stringify(check._meta)} where ${ready} ready and ${blocked} blocked were meant`)
}

const timed = async (fn: () => Promise<void>) => {
  const s = performance.now()
  await fn()
  return performance.now() - s
}

async function run(kind: 'pglite' | 'postgres') {
  const tmp = mkdtempSync(join(tmpdir(), 'arbor-bench-ready-'))
  const db = await ownDatabase(kind, tmp, PG_URL)
  try {
    const server = await spawnServer({
      PORT: String(freePort()),
      ...Object.fromEntries(Object.entries(db.env).flatMap(([k, v]) => (v === undefined ? [] : [[k, v]]))),
      RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'warn',
      EMBEDDINGS_MODEL_DIR: join(tmp, 'no-model'),
    })
    try {
      // the key is printed before /healthz answers, but a loaded machine may deliver the pipe later
      for (let end = Date.now() + 10_000; !/Arbor API key for owner/.test(server.output()) && Date.now() < end; ) await Bun.sleep(50)
      const { key, call } = ownerClient(server)
      const t0 = performance.now()
      await seed(call, 'small', 1000, 100, 10)
      await seed(call, 'large', 50_000, 5000, 500)
      await seed(call, 'most', 50_000, 40_000, 500)
      const seedS = (performance.now() - t0) / 1000
      await quiet(server.proc.pid, 'search indexing after the seed')
      const get = async (projectId: string) => {
        const res = await fetch(`${server.url}/api/v1/ready?projectId=${projectId}`, { headers: { authorization: `Bearer ${key}` } })
        if (res.status !== 200) throw new Error(`/ready ${projectId}: ${res.status}`)
        await res.arrayBuffer()
      }
      let token = ''
      const claim = async (projectId: string) => {
        const res = await call('POST', '/api/v1/mutate', { action: 'claim', projectId, agent: 'bench', count: 1, leaseSeconds: 60 })
        if (res.claims?.length !== 1) throw new Error(`claim ${projectId}: ${JSON.stringify(res).slice(0, 300)}`)
        token = res.claims[0].claimToken
      }
      const none = () => ({ small: [] as number[], large: [] as number[], most: [] as number[] })
      const samples = { ready: none(), claim: none() }
      const orders = [
        ['small', 'large', 'most'],
        ['large', 'most', 'small'],
        ['most', 'small', 'large'],
      ] as const
      for (let i = 0; i < SAMPLES; i++)
        for (const p of orders[i % 3]!) {
          samples.ready[p].push(await timed(() => get(p)))
          samples.claim[p].push(await timed(() => claim(p)))
          await call('POST', '/api/v1/mutate', { action: 'releaseClaim', projectId: p, claimToken: token })
        }
      const p50 = (xs: number[]) =>
        Number(
          percentile(
            [...xs].sort((a, b) => a - b),
            50,
          ).toFixed(2),
        )
      const out = {
        db: kind,
        samples: SAMPLES,
        seedS: Number(seedS.toFixed(1)),
        readyP50: { n1000: p50(samples.ready.small), n50000: p50(samples.ready.large), n50000mostReady: p50(samples.ready.most) },
        claimP50: { n1000: p50(samples.claim.small), n50000: p50(samples.claim.large), n50000mostReady: p50(samples.claim.most) },
        ratio: {
          ready: Number((p50(samples.ready.large) / p50(samples.ready.small)).toFixed(2)),
          readyMostReady: Number((p50(samples.ready.most) / p50(samples.ready.small)).toFixed(2)),
          claim: Number((p50(samples.claim.large) / p50(samples.claim.small)).toFixed(2)),
          claimMostReady: Number((p50(samples.claim.most) / p50(samples.claim.small)).toFixed(2)),
        },
      }
      console.log(JSON.stringify(out))
      return out
    } finally {
      server.proc.kill('SIGTERM')
      await server.proc.exited
    }
  } finally {
    await db.drop()
    rmSync(tmp, { recursive: true, force: true })
  }
}

const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined
const results = [...(only !== 'postgres' ? [await run('pglite')] : []), ...(PG_URL && only !== 'pglite' ? [await run('postgres')] : [])]
const lines = [
  '| db | /ready p50 1k | /ready p50 50k (5k ready) | ratio | /ready p50 50k (40k ready) | ratio | claim p50 1k | claim p50 50k | ratio | claim p50 50k (40k ready) | ratio |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
  ...results.map(
    (r) =>
      `| ${r.db} | ${r.readyP50.n1000} ms | ${r.readyP50.n50000} ms | ${r.ratio.ready}× | ${r.readyP50.n50000mostReady} ms | ${r.ratio.readyMostReady}× | ${r.claimP50.n1000} ms | ${r.claimP50.n50000} ms | ${r.ratio.claim}× | ${r.claimP50.n50000mostReady} ms | ${r.ratio.claimMostReady}× |`,
  ),
]
console.log(lines.join('\n'))
mkdirSync(join(ROOT, 'bench/results'), { recursive: true })
writeFileSync(join(ROOT, 'bench/results/ready.json'), JSON.stringify(results, null, 2))
