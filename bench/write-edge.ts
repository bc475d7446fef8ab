/**
 * What a write costs outside its SQL (issue 51, 3): the app in this process, called through its
 * request handler (src/app.ts `handle`, as Bun.serve calls it, without a socket), one writer.
 * Prints the process's CPU µs (all threads) per request of
 * - `edge`: a POST /mutate that the envelope refuses (400: an unknown action) after every step
 *   around a write (the wrapper's checks, the body read and parsed, Elysia, the key, the
 *   envelope, the error's answer) and none of the write itself;
 * - `goal`, `task`, `update`: a real write (its SQL included: on PostgreSQL only the client's
 *   part of it, postgres.js, is in this process);
 * (labels of one word each, as `npm run bench:writes` sends: no near-duplicate to score), each the median of ROUNDS rounds of N requests (after N/5 untimed), the kinds taking turns.
 * The loops run (the search's embeds through bench/lib/embed-stub.ts, started here, as `npm run
 * bench:writes` has it), and on PostgreSQL the replicas' lease is held, as src/main.ts has them. CPU time, not wall time: a shared machine moves it less. To compare two commits, copy
 * this file into a checkout of the other and run the two in turns.
 *
 *   bun bench/write-edge.ts                                    (PGlite)
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/write-edge.ts
 *   N=2000 ROUNDS=5 KINDS=edge,goal bun bench/write-edge.ts
 *   LOOPS=0 bun bench/write-edge.ts            (the loops not started: the writes without their background)
 */
import { startScheduler } from '../src/scheduler'
import { startBenchServer } from './lib/app'
import { countSockets } from './lib/sockets'

const N = Number(process.env.N ?? 1000)
const ROUNDS = Number(process.env.ROUNDS ?? 5)
const KINDS = (process.env.KINDS ?? 'edge,goal,task,update').split(',')

const stub = Bun.spawn([process.execPath, `${import.meta.dir}/lib/embed-stub.ts`], { env: { PORT: '0' }, stdout: 'pipe' })
const reader = stub.stdout.getReader()
let said = ''
while (!/listening (\S+)/.test(said)) said += new TextDecoder().decode((await reader.read()).value)
const embeddings = /listening (\S+)/.exec(said)![1]!

// postgres.js's writes to PostgreSQL's sockets (each a system call), the loops' included
const sockets = countSockets()

const s = await startBenchServer(process.env.BENCH_DATABASE_URL, { EMBEDDINGS_URL: embeddings, EMBEDDINGS_MODEL: 'stub' })
// as src/main.ts once it listens: the replicas' lease (on PostgreSQL the auth cache answers from memory only under it) and the loops
await s.deps.replicas?.start()
const scheduler = process.env.LOOPS === '0' ? null : startScheduler(s.deps)
const handle = s.handle
try {
  const post = async (body: unknown, expect: number) => {
    const text = JSON.stringify(body)
    const res = await handle(
      new Request('http://127.0.0.1:3000/api/v1/mutate', {
        method: 'POST',
        // with its Content-Length, as a client over a socket sends it
        headers: {
          host: '127.0.0.1:3000',
          authorization: `Bearer ${s.ownerKey}`,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(text)),
        },
        body: text,
      }),
      '127.0.0.1',
    )
    const json = (await res.json()) as Record<string, any>
    if (res.status !== expect) throw new Error(`mutate: ${res.status} ${JSON.stringify(json).slice(0, 300)}`)
    return json
  }
  await post({ action: 'addProject', project: { id: 'bench', name: 'bench' } }, 200)
  const goal = (await post({ action: 'add', projectId: 'bench', node: { type: 'goal', data: { label: 'the goal' } } }, 200)).node.id
  let k = 0
  const requests: Record<string, () => Promise<unknown>> = {
    edge: () => post({ action: 'addNothing', projectId: 'bench', node: { type: 'goal', data: { label: `x${++k}` } } }, 400),
    goal: () => post({ action: 'add', projectId: 'bench', node: { type: 'goal', data: { label: `g${++k}` } } }, 200),
    task: () => post({ action: 'add', projectId: 'bench', node: { type: 'task', data: { label: `t${++k}` } } }, 200),
    update: () => post({ action: 'update', projectId: 'bench', nodeId: goal, data: { label: `u${++k}` } }, 200),
  }
  const run = async (kind: string, n: number) => {
    const t0 = process.cpuUsage()
    const w0 = sockets.writes
    for (let i = 0; i < n; i++) await requests[kind]!()
    const used = process.cpuUsage(t0)
    writes[kind]!.push((sockets.writes - w0) / n)
    return (used.user + used.system) / n
  }
  const writes: Record<string, number[]> = Object.fromEntries(KINDS.map((kind) => [kind, []]))
  for (const kind of KINDS) await run(kind, Math.ceil(N / 5))
  for (const kind of KINDS) writes[kind] = []
  const us: Record<string, number[]> = Object.fromEntries(KINDS.map((kind) => [kind, []]))
  for (let r = 0; r < ROUNDS; r++) for (const kind of KINDS) us[kind]!.push(await run(kind, N))
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const load = (
    await Bun.file('/proc/loadavg')
      .text()
      .catch(() => '? ? ?')
  )
    .split(' ')
    .slice(0, 3)
    .join(' ')
  console.log(
    `${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'PGlite'}, ${ROUNDS} rounds of ${N}, load average ${load}: CPU µs a request, median (rounds)`,
  )
  for (const kind of KINDS)
    console.log(
      `${kind.padEnd(7)} ${median(us[kind]!).toFixed(0).padStart(6)}  (${us[kind]!.map((x) => x.toFixed(0)).join(' ')})${process.env.BENCH_DATABASE_URL ? `, socket writes a request ${median(writes[kind]!).toFixed(2)}` : ''}`,
    )
} finally {
  await scheduler?.stop()
  await s.deps.replicas?.stop()
  await s.close()
  stub.kill()
}
