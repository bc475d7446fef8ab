// History's share of each write's CPU (history.md 7, issue 51 item 3; bench/writes.md, "Thirteenth
// pass: history's share"): the app in this process (bench/lib/app.ts) on one database, one writer,
// each write in blocks of --block back to back, with its change rows recorded and without
// (config.recordHistory, what ARBOR_BENCH_NO_HISTORY turns off) in turns (on, off, off, on, …:
// each side first as often), --rounds blocks each way. After each block, on PGlite, the maintenance
// loop's tick (src/maintenance/loop.ts `maintain`: it analyzes `changes` once it drifted, so
// history's part of it lands in the blocks that recorded changes), inside the block's measure.
// CPU: this process (PGlite runs in it) and, on PostgreSQL, the backends of its database. Both
// sides write to the one database: its tables are the same for both but for the change rows.
// Wall time per write beside it (p50 of each block, the median of the rounds' ratios). Unlike
// `npm run bench:writes` there is no HTTP client process, no search loop and no second server:
// what is left is the write itself and the change rows' upkeep, which the machine's load moves less.
//
// --control: both sides record history (an A/A run): what the harness's order and this machine
// alone make of two identical sides. --swap: each side in the other's places (off, on, on, off,
// …). In one process on PostgreSQL the places of "on" read 1.05-1.21x the others' CPU for a
// goal's add with both sides the same (bench/writes.md, fourteenth pass: history's share inside
// a write): read a ratio beside its --control, or take the geometric mean of a run and its
// --swap, which cancels the places.
//
//   bun bench/history-share.ts [--ops goal,job,task,update,delete,batch] [--rounds 12] [--block 100] [--no-tick] [--take-back-0052] [--control] [--swap]
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/history-share.ts

import postgres from 'postgres'
import { maintain } from '../src/maintenance/loop'
import { startBenchServer } from './lib/app'
import { cpuMeter, threadNs } from './lib/proc-cpu'
import { median, mutate } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const ALL = ['goal', 'job', 'task', 'update', 'delete', 'batch'] as const
type Op = (typeof ALL)[number]
const OPS = opt('ops', ALL.join(',')).split(',') as Op[]
for (const op of OPS) if (!ALL.includes(op)) throw new Error(`--ops: ${op} is not one of ${ALL.join(', ')}`)
const ROUNDS = Number(opt('rounds', '12'))
const BLOCK = Number(opt('block', '100'))
/** the batch's block: a twentieth as many batches of 100 adds */
const BATCH_BLOCK = Math.max(2, Math.ceil(BLOCK / 20))
const WARM = 2
/** --take-back-0052: the ten analyzed columns of changes at the default statistics target again (a sample of 30,000 rows, not 3,000) */
const TAKE_BACK_0052 = args.includes('--take-back-0052')
/** --no-tick: no maintenance tick after a block (the write alone) */
const TICK = !args.includes('--no-tick')
/** --control: the side "without" records history too (an A/A run) */
const CONTROL = args.includes('--control')
/** --swap: the sides in each other's places (off, on, on, off, …) */
const SWAP = args.includes('--swap')
const PG_URL = process.env.BENCH_DATABASE_URL
const P = 'bench'

const s = await startBenchServer(PG_URL)
const admin = PG_URL ? postgres(PG_URL, { max: 1, onnotice: () => {} }) : null
try {
  const config = s.deps.config as { recordHistory: boolean }
  const [{ name }] = await s.deps.db.query<{ name: string }>('select current_database() as name')
  if (TAKE_BACK_0052)
    await s.deps.db.exec(
      `alter table changes ${['project_id', 'id', 'target_id', 'target_kind', 'user_id', 'agent', 'via', 'request_id', 'at', 'txid'].map((c) => `alter column ${c} set statistics -1`).join(', ')}`,
    )
  /** CPU ns so far: this process and its database's backends (a backend that ended keeps its last reading) */
  const cpuNs = cpuMeter(process.pid, async () =>
    admin ? (await admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${name!}`).map((r) => r.pid) : [],
  )
  /** CPU ns so far of this process alone (the client, the app and, on PGlite, the database) */
  const ownNs = () => [...threadNs(process.pid, new Map()).values()].reduce((a, b) => a + b, 0)
  const call = mutate(s)
  let k = 0
  const add = async (type: string, parentId?: string) =>
    (await call({ action: 'add', projectId: P, node: { type, ...(parentId ? { parentId } : {}), data: { label: `x${++k}` } } })).node!.id
  const addMany = async (type: string, parentId: string | undefined, n: number) =>
    Object.values(
      (
        (await call({
          action: 'batch',
          projectId: P,
          mutations: Array.from({ length: n }, (_, i) => ({
            action: 'add',
            node: { type, ...(parentId ? { parentId } : {}), data: { label: `x${++k} ${i}` } },
          })),
        })) as unknown as { results: Record<string, { node?: { id: string } }> }
      ).results,
    ).map((r) => r.node!.id)
  await call({ action: 'addProject', project: { id: P, name: P } })
  const approach = await add('approach', await add('need', await add('goal')))
  const batchApproach = await add('approach', await add('need', await add('goal')))
  const goal = await add('goal')
  const victims: string[] = []
  if (OPS.includes('delete'))
    for (let left = 2 * (ROUNDS + 1) * (BLOCK + WARM); left > 0; left -= 100)
      victims.push(...(await addMany('goal', undefined, Math.min(100, left))))
  const write: Record<Op, () => Promise<unknown>> = {
    goal: () => add('goal'),
    job: () => add('job', approach),
    task: () => add('task'),
    update: () => call({ action: 'update', projectId: P, nodeId: goal, data: { label: `u${++k}` } }),
    delete: () => call({ action: 'delete', projectId: P, nodeId: victims.pop()! }),
    batch: () => addMany('job', batchApproach, 100),
  }
  type Side = 'on' | 'off'
  const rows: string[] = []
  for (const op of OPS) {
    const n = op === 'batch' ? BATCH_BLOCK : BLOCK
    const cpu: Record<Side, number[]> = { on: [], off: [] }
    /** of it, this process's (on PostgreSQL the rest is the backends') */
    const own: Record<Side, number[]> = { on: [], off: [] }
    const p50s: Record<Side, number[]> = { on: [], off: [] }
    // one untimed block each way first: the statements of both sides prepared
    for (let r = -1; r < 2 * ROUNDS; r++) {
      const first = r % 4 === 0 || r % 4 === 3
      const side: Side = r < 0 ? 'on' : first !== SWAP ? 'on' : 'off'
      config.recordHistory = side === 'on' || CONTROL
      for (let w = 0; w < WARM; w++) await write[op]()
      const c0 = await cpuNs()
      const o0 = ownNs()
      const times: number[] = []
      for (let i = 0; i < n; i++) {
        const t0 = performance.now()
        await write[op]()
        times.push(performance.now() - t0)
      }
      if (TICK) await maintain(s.deps.db)
      const o1 = ownNs()
      const c1 = await cpuNs()
      if (r < 0) {
        config.recordHistory = CONTROL
        for (let w = 0; w < n; w++) await write[op]()
        if (TICK) await maintain(s.deps.db)
        continue
      }
      cpu[side].push((c1 - c0) / 1e6 / n)
      own[side].push((o1 - o0) / 1e6 / n)
      p50s[side].push(median(times))
    }
    config.recordHistory = true
    const ratios = (a: number[], b: number[]) => a.map((x, i) => x / b[i]!)
    const range = (xs: number[]) => `${median(xs).toFixed(2)}× (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
    rows.push(
      `| ${PG_URL ? 'postgres' : 'pglite'} | ${op} | ${median(cpu.on).toFixed(3)} / ${median(cpu.off).toFixed(3)} | ${range(ratios(cpu.on, cpu.off))} | ${(sum(cpu.on) / sum(cpu.off)).toFixed(2)}× | ${median(own.on).toFixed(3)} / ${median(own.off).toFixed(3)} | ${median(p50s.on).toFixed(2)} / ${median(p50s.off).toFixed(2)} | ${range(ratios(p50s.on, p50s.off))} |`,
    )
    console.error(rows.at(-1))
  }
  console.log(
    `\n${ROUNDS} blocks each way of ${BLOCK} writes (the batch ${BATCH_BLOCK}), with history and without in turns; CPU of this process${PG_URL ? ' and its database backends' : ''} per write${TICK ? ', the maintenance tick after each block included' : ''}${TAKE_BACK_0052 ? '; 0052 taken back' : ''}${CONTROL ? '; --control: both sides record history' : ''}${SWAP ? "; --swap: the sides in each other's places" : ''}\n`,
  )
  console.log(
    "| db | write | CPU ms a write: with / without | CPU with ÷ without, median of the pairs (min–max) | the sums' ratio | of it this process: with / without | p50 ms: with / without | p50 with ÷ without (min–max) |",
  )
  console.log('|---|---|---|---|---|---|---|---|')
  for (const r of rows) console.log(r)
} finally {
  await admin?.end()
  await s.close()
}
