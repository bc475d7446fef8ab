/**
 * The main thread's CPU of the real server for one 100-add batch (issue 51, 3), split in two: while
 * the request runs (from its sending to its answer), and in the 400 ms after it, when the server
 * works through what the batch left for its background (the search's index and vectors, the
 * loops the write woke). On a shared machine CPU time moves less than the request's time.
 *
 *   bun bench/batch-cpu.ts [batches]                            (PGlite; 30 batches by default)
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/batch-cpu.ts
 *   BENCH_CHECKOUT=<a checkout of 26c0789> bun bench/batch-cpu.ts   (another commit's server)
 *
 * Starts `bun src/main.ts` of this checkout or BENCH_CHECKOUT as `npm run bench:writes` does (no
 * model, no request log, rate limit off) on a database of its own, adds a goal, a need and an
 * approach, sends five batches of 100 jobs' adds under the approach untimed, then `batches` more,
 * one at a time, each followed by 400 ms of rest. Reads the main thread's CPU (Linux /proc, in
 * ticks of 10 ms: read it over tens of batches) before each batch, at its answer and after the rest.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ownDatabase } from './lib/harness'
import { startWritesServer } from './lib/writes-server'

const ROOT = join(import.meta.dir, '..')
const BATCHES = Number(process.argv[2] ?? 30)
const REST_MS = 400

/** The main thread's CPU ms so far (its tid is the pid). */
function mainThreadCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

const checkout = process.env.BENCH_CHECKOUT ?? ROOT
const pgUrl = process.env.BENCH_DATABASE_URL
const tmp = mkdtempSync(join(tmpdir(), 'arbor-batch-cpu-'))
const db = await ownDatabase(pgUrl ? 'postgres' : 'pglite', tmp, pgUrl)
const { server, call } = await startWritesServer(checkout, db.env, tmp)
try {
  await call({ action: 'addProject', project: { id: 'bench', name: 'bench' } })
  const add = async (type: string, parentId?: string) =>
    (await call({ action: 'add', projectId: 'bench', node: { type, ...(parentId ? { parentId } : {}), data: { label: type } } })).node
      .id as string
  const approach = await add('approach', await add('need', await add('goal')))
  let k = 0
  const batch = () =>
    call({
      action: 'batch',
      projectId: 'bench',
      mutations: Array.from({ length: 100 }, (_, i) => ({
        action: 'add',
        node: { type: 'job', parentId: approach, data: { label: `b${++k} ${i}` } },
      })),
    })
  for (let i = 0; i < 5; i++) {
    await batch()
    await Bun.sleep(REST_MS)
  }
  let during = 0
  let after = 0
  const walls: number[] = []
  for (let i = 0; i < BATCHES; i++) {
    const c0 = mainThreadCpuMs(server.pid)
    const t0 = performance.now()
    await batch()
    walls.push(performance.now() - t0)
    const c1 = mainThreadCpuMs(server.pid)
    await Bun.sleep(REST_MS)
    during += c1 - c0
    after += mainThreadCpuMs(server.pid) - c1
  }
  walls.sort((a, b) => a - b)
  const load = existsSync('/proc/loadavg') ? readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ') : '?'
  console.log(
    `${checkout === ROOT ? 'this checkout' : checkout}, ${pgUrl ? 'PostgreSQL' : 'PGlite'}, ${BATCHES} batches of 100 jobs: ` +
      `main thread CPU a batch ${(during / BATCHES).toFixed(1)} ms during the request, ${(after / BATCHES).toFixed(1)} ms in the ${REST_MS} ms after it; ` +
      `request p50 ${walls[Math.floor((BATCHES - 1) / 2)]!.toFixed(1)} ms (load average ${load})`,
  )
} finally {
  server.kill('SIGKILL')
  await server.exited
  await db.drop()
  rmSync(tmp, { recursive: true, force: true })
}
