/**
 * `/ready` and `claim` on a project whose approach holds a blockedBy stored before the bound
 * (issue 46, item 4): 60,000 repeats of one id, written straight into the database (the API now
 * refuses it), above 995 jobs. Prints /ready's and claim's time and the worst /healthz
 * asked meanwhile, beside /ready on the same project without the hostile list. PostgreSQL only
 * (BENCH_DATABASE_URL): the list is written with SQL while the server runs.
 *
 *   BENCH_DATABASE_URL=postgres://… bun bench/hostile-ready.ts
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { ownDatabase, serverEnv } from './lib/harness'
import { freePort, ownerClient, spawnServer } from './lib/spawn'

const pgUrl = process.env.BENCH_DATABASE_URL
if (!pgUrl) throw new Error('BENCH_DATABASE_URL is required')
const tmp = mkdtempSync(join(tmpdir(), 'arbor-hostile-'))
const db = await ownDatabase('postgres', tmp, pgUrl)
const server = await spawnServer(serverEnv({ ...db.env, PORT: String(freePort()), LOG_LEVEL: 'warn' }) as Record<string, string>)
const sql = postgres(db.env.DATABASE_URL!, { max: 1, onnotice: () => {} })

/** `fn`'s time, with the worst /healthz asked one after another while it ran. */
async function timed(fn: () => Promise<unknown>) {
  let done = false
  let worst = 0
  const probing = (async () => {
    while (!done) {
      const t = performance.now()
      await (await fetch(`${server.url}/healthz`)).text()
      worst = Math.max(worst, performance.now() - t)
    }
  })()
  const t = performance.now()
  await fn()
  const ms = performance.now() - t
  done = true
  await probing
  return { ms: Math.round(ms), worstHealthz: Math.round(worst * 10) / 10 }
}

try {
  const { call } = ownerClient(server)
  await call('POST', '/api/v1/mutate', { action: 'addProject', project: { name: 'Hostile', id: 'hostile' } })
  const made = await call('POST', '/api/v1/mutate', {
    action: 'batch',
    projectId: 'hostile',
    mutations: [
      { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
      { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
      { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
      { action: 'add', node: { id: 'draft-b', type: 'approach', parentId: 'draft-n', data: { label: 'B' } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-b', data: { label: 'blocker job' } } },
      ...Array.from({ length: 995 }, (_, i) => ({ action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: `J${i}` } } })),
    ],
  })
  if (!made.success) throw new Error(JSON.stringify(made).slice(0, 300))
  const clean = await timed(() => call('GET', '/api/v1/ready?projectId=hostile&limit=100'))
  await sql`update nodes set data = jsonb_set(data, '{blockedBy}', ${sql.json(Array(60_000).fill('approach-2'))}) where project_id = 'hostile' and id = 'approach-1'`
  const ready = await timed(() => call('GET', '/api/v1/ready?projectId=hostile&limit=100'))
  const claim = await timed(() => call('POST', '/api/v1/mutate', { action: 'claim', projectId: 'hostile', agent: 'bench', count: 1 }))
  console.log(JSON.stringify({ readyWithoutHostileList: clean, readyWithIt: ready, claimWithIt: claim }))
} finally {
  await sql.end()
  server.proc.kill('SIGTERM')
  await server.proc.exited
  await db.drop()
  rmSync(tmp, { recursive: true, force: true })
}
