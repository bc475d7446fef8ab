// The CPU a label update costs the whole process (issue 51, 3): the app in this process
// (bench/lib/app.ts, PGlite), eight writers each updating its own goal's label over HTTP, the
// process's CPU time (the server, its database and the client together) per write, three times
// 2,000 writes after 2,000 untimed. To compare two commits, copy this file into a checkout of the
// other one and run the two in turns:
//
//   bun bench/write-cpu.ts [label]
//
// With --history (the eleventh pass): history's share in the same process, rounds with the change
// rows recorded and without (config.recordHistory, as ARBOR_BENCH_NO_HISTORY turns it off) in turns,
// --rounds of them each (default 6), and the ratio of the two medians (history.md 7: at most 1.15×).
// With BENCH_DATABASE_URL=postgres://… the app runs on a new database of that server and the CPU is
// this process's and that database's backends' (from /proc, as npm run bench:writes reads them).

import postgres from 'postgres'
import { startBenchServer } from './lib/app'
import { cpuMeter } from './lib/proc-cpu'
import { mutate } from './lib/sql-cpu'

const WRITERS = 8
const WRITES = 2000

const PG_URL = process.env.BENCH_DATABASE_URL
const s = await startBenchServer(PG_URL)
const admin = PG_URL ? postgres(PG_URL, { max: 1, onnotice: () => {} }) : null
try {
  const [{ name }] = await s.deps.db.query<{ name: string }>('select current_database() as name')
  /** CPU ms so far: this process and, on PostgreSQL, its database's backends (one that ended keeps its last reading) */
  const meter = cpuMeter(process.pid, async () =>
    admin ? (await admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${name!}`).map((r) => r.pid) : [],
  )
  const cpuMs = async () => (await meter()) / 1e6
  const call = mutate(s)
  await call({ action: 'addProject', project: { id: 'bench', name: 'bench' } })
  const goals: string[] = []
  for (let i = 0; i < WRITERS; i++)
    goals.push((await call({ action: 'add', projectId: 'bench', node: { type: 'goal', data: { label: `g${i}` } } })).node!.id)
  let k = 0
  const writes = async (n: number) => {
    let left = n
    await Promise.all(
      goals.map(async (nodeId) => {
        while (left-- > 0) await call({ action: 'update', projectId: 'bench', nodeId, data: { label: `u${++k}` } })
      }),
    )
  }
  await writes(WRITES) // untimed: the code compiled, the statements prepared
  if (process.argv.includes('--history')) {
    const args = process.argv
    const rounds = args.includes('--rounds') ? Number(args[args.indexOf('--rounds') + 1]) : 6
    const config = s.deps.config as { recordHistory: boolean }
    const per: Record<'on' | 'off', number[]> = { on: [], off: [] }
    /** writes a second, each round */
    const rate: Record<'on' | 'off', number[]> = { on: [], off: [] }
    config.recordHistory = false
    await writes(WRITES) // untimed: the events' statement alone prepared too
    for (let r = 0; r < 2 * rounds; r++) {
      // on, off, off, on, on, off, …: each side as often first as second
      const mode = r % 4 === 0 || r % 4 === 3 ? 'on' : 'off'
      config.recordHistory = mode === 'on'
      const cpu = await cpuMs()
      const t0 = performance.now()
      await writes(WRITES)
      rate[mode].push((WRITES * 1000) / (performance.now() - t0))
      per[mode].push(((await cpuMs()) - cpu) / WRITES)
    }
    config.recordHistory = true
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    const show = (xs: number[]) => xs.map((x) => x.toFixed(3)).join(' ')
    console.log(`CPU ms a write, ${rounds} rounds of ${WRITES} each way: with history ${show(per.on)}; without ${show(per.off)}`)
    console.log(`with ÷ without (medians): ${(med(per.on) / med(per.off)).toFixed(3)}×`)
    console.log(
      `writes a second: with history ${rate.on.map(Math.round).join(' ')}; without ${rate.off.map(Math.round).join(' ')}; without ÷ with (medians) ${(med(rate.off) / med(rate.on)).toFixed(3)}×`,
    )
  } else {
    const ms: string[] = []
    for (let r = 0; r < 3; r++) {
      const cpu = await cpuMs()
      await writes(WRITES)
      ms.push((((await cpuMs()) - cpu) / WRITES).toFixed(3))
    }
    console.log(`${process.argv[2] ?? 'this checkout'}: CPU ms a write, three rounds of ${WRITES}: ${ms.join(' ')}`)
  }
} finally {
  await admin?.end()
  await s.close()
}
