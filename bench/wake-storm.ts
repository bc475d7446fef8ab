/**
 * A wake storm (issue 46, item 7): WAITERS (2,000) held `GET /events?wait=60` on one project,
 * all woken by one write, while this process asks `/healthz` one request after another. Prints
 * the worst and the p99 /healthz latency from the write until every waiter is answered, beside
 * the same write with no waiter held (the floor), and their ratio. PGlite, and PostgreSQL with
 * BENCH_DATABASE_URL. The held requests live in a worker thread, off the thread that measures.
 * KIND=canvas holds the canvas's long polls (`GET /view/commands?wait=15000&revision=…`) instead,
 * which the write wakes by changing the revision.
 *
 *   bun bench/wake-storm.ts            (WAITERS=2000 ROUNDS=3 KIND=events)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ownDatabase, serverEnv } from './lib/harness'
import { freePort, ownerClient, spawnServer } from './lib/spawn'

const WAITERS = Number(process.env.WAITERS ?? 2000)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const CANVAS = process.env.KIND === 'canvas'

/** /healthz one after another until `done()` says stop: each latency in ms. */
async function probe(base: string, done: () => boolean): Promise<number[]> {
  const times: number[] = []
  while (times.length === 0 || !done()) {
    const t = performance.now()
    await (await fetch(`${base}/healthz`)).text()
    times.push(performance.now() - t)
  }
  return times
}

async function storm(kind: 'pglite' | 'postgres') {
  const tmp = mkdtempSync(join(tmpdir(), 'arbor-storm-'))
  const db = await ownDatabase(kind, tmp, process.env.BENCH_DATABASE_URL)
  const server = await spawnServer(serverEnv({ ...db.env, PORT: String(freePort()) }) as Record<string, string>)
  try {
    const { key, call } = ownerClient(server)
    await call('POST', '/api/v1/mutate', { action: 'addProject', project: { name: 'Storm', id: 'storm' } })
    await call('POST', '/api/v1/mutate', { action: 'add', projectId: 'storm', node: { type: 'task', data: { label: 'stormy' } } })
    const write = (label: string) =>
      call('POST', '/api/v1/mutate', { action: 'add', projectId: 'storm', node: { type: 'goal', data: { label } } })
    const rows: { worst: number; p99: number; floorWorst: number; answeredMs: number }[] = []
    for (let round = 0; round < ROUNDS; round++) {
      await Bun.sleep(1500) // the task's classification and the last round's answers are over
      // the floor: the same write with nothing held, /healthz asked for as long as the storm took last time
      let floorDone = false
      const floorTimes = probe(server.url, () => floorDone)
      await write(`floor ${round}`)
      await Bun.sleep(rows.at(-1)?.answeredMs ?? 500)
      floorDone = true
      const floor = await floorTimes

      // the newest cursor, once nothing more shows after it (on PostgreSQL an event shows once older transactions end)
      let after = ''
      for (let quiet = 0; quiet < 3; ) {
        const more = await call('GET', `/api/v1/events?projectId=storm&limit=500&after=${after}`)
        quiet = more.events.length ? 0 : quiet + 1
        after = more.nextCursor ?? ''
        await Bun.sleep(100)
      }
      const worker = new Worker(new URL('./lib/hold-events-worker.ts', import.meta.url))
      const messages: Record<string, unknown>[] = []
      worker.onmessage = (e) => messages.push(e.data)
      const revision = (await call('GET', '/api/v1/view/commands?projectId=storm&wait=0')).revision
      worker.postMessage(
        CANVAS
          ? {
              base: server.url,
              key,
              path: `/api/v1/view/commands?projectId=storm&wait=15000&revision=${revision}`,
              n: WAITERS,
              match: '"revision":"[^"]',
            }
          : { base: server.url, key, path: `/api/v1/events?projectId=storm&after=${after}&wait=60`, n: WAITERS },
      )
      while (!messages.some((m) => 'held' in m)) await Bun.sleep(20)
      // each canvas poll writes its heartbeat first: a poll of our own, also a write, answers once they are all done
      if (CANVAS) await call('GET', '/api/v1/view/commands?projectId=storm&wait=0')
      // every request read and asleep: /healthz fast again five times in a row
      for (let fast = 0; fast < 5; ) {
        const t = performance.now()
        await (await fetch(`${server.url}/healthz`)).text()
        fast = performance.now() - t < 5 ? fast + 1 : 0
        await Bun.sleep(20)
      }
      const answered = () => messages.some((m) => 'answered' in m)
      const started = performance.now()
      const times = probe(server.url, answered)
      await write(`storm ${round}`)
      const during = await times
      const answeredMs = performance.now() - started
      const result = messages.find((m) => 'answered' in m) as { byStatus: Record<number, number>; withEvents: number }
      worker.terminate()
      if (result.byStatus[200] !== WAITERS || result.withEvents !== WAITERS)
        throw new Error(`not every waiter got the event: ${JSON.stringify(result)}`)
      const sorted = [...during].sort((a, b) => a - b)
      rows.push({
        worst: sorted.at(-1)!,
        p99: sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))]!,
        floorWorst: Math.max(...floor),
        answeredMs,
      })
    }
    return rows
  } finally {
    server.proc.kill('SIGTERM')
    await server.proc.exited
    await db.drop()
    rmSync(tmp, { recursive: true, force: true })
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const kinds: ('pglite' | 'postgres')[] = process.env.BENCH_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite']
console.log(
  `| database | waiters | worst /healthz during the storm (median of ${ROUNDS}) | p99 | worst with none held | ratio | all answered after |`,
)
console.log('|---|---|---|---|---|---|---|')
for (const kind of kinds) {
  const rows = await storm(kind)
  const worst = median(rows.map((r) => r.worst))
  const floor = median(rows.map((r) => r.floorWorst))
  console.log(
    `| ${kind === 'pglite' ? 'PGlite' : 'PostgreSQL'} | ${WAITERS} | ${worst.toFixed(1)} ms (rounds: ${rows.map((r) => r.worst.toFixed(0)).join(', ')}) | ${median(rows.map((r) => r.p99)).toFixed(1)} ms | ${floor.toFixed(1)} ms | ${(worst / floor).toFixed(1)}× | ${median(rows.map((r) => r.answeredMs)).toFixed(0)} ms |`,
  )
}
