// What keeping the work state costs a done write (issue 45, item 3): marking a job done in an
// approach that blocks another approach of 100 jobs, against marking one done in an approach
// that blocks nothing, on one real server process, PGlite and then PostgreSQL:
//
//   bun bench/done-writes.ts [--samples 60]
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/done-writes.ts
//
// Each project: approach `blocker` with 200 open jobs, approach `blocked` of 100 jobs with
// blockedBy [blocker], and approach `free` with 200 open jobs that nothing waits for. The samples
// alternate between a job of `blocker` and one of `free`, one write at a time, none the last
// open job of its approach (the blocked jobs stay blocked). Prints a JSON line per database with
// both p50s and their ratio: 1× means the blocked jobs cost the write nothing.

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ownDatabase } from './lib/harness'
import { freePort, ownerClient, spawnServer } from './lib/spawn'
import { percentile } from './search-core/metrics'

const args = process.argv.slice(2)
const at = args.indexOf('--samples')
const SAMPLES = at >= 0 ? Number(args[at + 1]) : 60
const PG_URL = process.env.BENCH_DATABASE_URL

async function run(kind: 'pglite' | 'postgres') {
  const tmp = mkdtempSync(join(tmpdir(), 'arbor-bench-done-'))
  const db = await ownDatabase(kind, tmp, PG_URL)
  const server = await spawnServer({
    PORT: String(freePort()),
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
    ...Object.fromEntries(Object.entries(db.env).flatMap(([k, v]) => (v === undefined ? [] : [[k, v]]))),
  })
  try {
    const { call } = ownerClient(server)
    const projectId = 'done-writes'
    await call('POST', '/api/v1/mutate', { action: 'addProject', project: { id: projectId, name: 'Done writes' } })
    const jobs = (parent: string, n: number, label: string) =>
      Array.from({ length: n }, (_, i) => ({ action: 'add', node: { type: 'job', parentId: parent, data: { label: `${label} ${i}` } } }))
    const made = await call('POST', '/api/v1/mutate', {
      action: 'batch',
      projectId,
      mutations: [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
        { action: 'add', node: { id: 'draft-blocker', type: 'approach', parentId: 'draft-n', data: { label: 'Blocker' } } },
        { action: 'add', node: { id: 'draft-free', type: 'approach', parentId: 'draft-n', data: { label: 'Free' } } },
        ...jobs('draft-blocker', 200, 'Blocker job'),
        ...jobs('draft-free', 200, 'Free job'),
      ],
    })
    if (!made.success) throw new Error(`seed: ${JSON.stringify(made).slice(0, 300)}`)
    const all = (await call('GET', `/api/v1/nodes?projectId=${projectId}`)).nodes as {
      id: string
      type: string
      parentId: string
      data: { label: string }
    }[]
    const byLabel = (label: string) => all.find((n) => n.data.label === label)!.id
    const blockerId = byLabel('Blocker')
    const freeId = byLabel('Free')
    const blocked = await call('POST', '/api/v1/mutate', {
      action: 'batch',
      projectId,
      mutations: [
        {
          action: 'add',
          node: { id: 'draft-b', type: 'approach', parentId: byLabel('N'), data: { label: 'Blocked', blockedBy: [blockerId] } },
        },
        ...jobs('draft-b', 100, 'Blocked job'),
      ],
    })
    if (!blocked.success) throw new Error(`seed: ${JSON.stringify(blocked).slice(0, 300)}`)
    const of = (parent: string) => all.filter((n) => n.type === 'job' && n.parentId === parent).map((n) => n.id)
    const lists = { blocker: of(blockerId), free: of(freeId) }
    const times: Record<'blocker' | 'free', number[]> = { blocker: [], free: [] }
    const done = async (side: 'blocker' | 'free', i: number) => {
      const s = performance.now()
      const res = await call('POST', '/api/v1/mutate', { action: 'update', projectId, nodeId: lists[side][i], data: { status: 'done' } })
      const ms = performance.now() - s
      if (!res.success) throw new Error(`done: ${JSON.stringify(res).slice(0, 300)}`)
      return ms
    }
    for (let i = 0; i < 10; i++) for (const side of ['blocker', 'free'] as const) await done(side, i) // warm-up
    for (let i = 10; i < 10 + SAMPLES && i < 199; i++) {
      for (const side of i % 2 ? (['blocker', 'free'] as const) : (['free', 'blocker'] as const)) times[side].push(await done(side, i))
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
      samples: times.blocker.length,
      doneP50: { blocksHundred: p50(times.blocker), blocksNothing: p50(times.free) },
      ratio: Number((p50(times.blocker) / p50(times.free)).toFixed(2)),
    }
    console.log(JSON.stringify(out))
  } finally {
    server.proc.kill('SIGTERM')
    await server.proc.exited
    await db.drop()
    rmSync(tmp, { recursive: true, force: true })
  }
}

await run('pglite')
if (PG_URL) await run('postgres')
