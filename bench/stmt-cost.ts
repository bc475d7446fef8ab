/**
 * BENCH_DATABASE_URL=postgres://… bun bench/stmt-cost.ts — what a statement costs on PostgreSQL,
 * in this process (the app's side: our wrapper, src/db/postgres.ts, and postgres.js) and in the
 * backends, one update's change (sql/history/insert-one.sql or insert-many.sql) and event
 * (sql/events/insert-many.sql), a transaction each, the ways in blocks of BLOCK (100) taking
 * turns, ROUNDS (2,000) calls each, the first two blocks dropped: the median of the blocks, CPU ms
 * a transaction, and the writes to and reads from the sockets a transaction (a read is a wake-up
 * of the event loop for an answer). "raw": the same through a bare postgres.js client of one
 * connection, without our wrapper. WAYS=0,4: only those ways (their order in `ways`). bench/writes.md, "Fourteenth pass: the second statement".
 */
import postgres from 'postgres'
import insertOneSql from '../sql/history/insert-one.sql' with { type: 'text' }
import { insertMany as insertEvents } from '../src/events/queries'
import { insertChunk, insertOne } from '../src/history/queries'
import { changeParams, oneChangeParams } from '../src/history/record'
import { startBenchServer } from './lib/app'
import { oneUpdate } from './lib/one-update'
import { threadNs } from './lib/proc-cpu'
import { countSockets } from './lib/sockets'

const sockets = countSockets()
const ROUNDS = Number(process.env.ROUNDS ?? 2000)
const url = process.env.BENCH_DATABASE_URL
if (!url) throw new Error('BENCH_DATABASE_URL')
const server = await startBenchServer(url)
try {
  const db = server.deps.db
  const { actor, draft, event } = await oneUpdate(server)
  // a bare postgres.js client on the bench's database (no wrapper)
  const dbUrl = server.deps.config.databaseUrl
  const raw = dbUrl ? postgres(dbUrl, { max: 1, onnotice: () => {}, fetch_types: false }) : null
  const cpu = () => {
    const u = process.cpuUsage()
    return (u.user + u.system) / 1000
  }
  const ways: Record<string, () => Promise<unknown>> = {
    'empty tx (select 1)': () => db.tx((tx) => tx.query('select 1')),
    'events alone': () => db.tx((tx) => insertEvents(tx, 'bench', [event])),
    'change alone (insert-one, 16 params)': () => db.tx((tx) => insertOne(tx, 'bench', oneChangeParams(actor, 'r', draft))),
    'change alone (insert-many, 8 params)': () => db.tx((tx) => insertChunk(tx, 'bench', changeParams(actor, 'r', [draft]))),
    'both, Promise.all': () =>
      db.tx((tx) => Promise.all([insertOne(tx, 'bench', oneChangeParams(actor, 'r', draft)), insertEvents(tx, 'bench', [event])])),
    'both, Promise.all, events first': () =>
      db.tx((tx) => Promise.all([insertEvents(tx, 'bench', [event]), insertOne(tx, 'bench', oneChangeParams(actor, 'r', draft))])),
    'both, one after the other': () =>
      db.tx(async (tx) => {
        await insertOne(tx, 'bench', oneChangeParams(actor, 'r', draft))
        await insertEvents(tx, 'bench', [event])
      }),
    'events, then the change (insert-many; bench/history-insert.ts)': () =>
      db.tx(async (tx) => {
        await insertEvents(tx, 'bench', [event])
        await insertChunk(tx, 'bench', changeParams(actor, 'r', [draft]))
      }),
    'both, Promise.all, insert-many': () =>
      db.tx((tx) => Promise.all([insertChunk(tx, 'bench', changeParams(actor, 'r', [draft])), insertEvents(tx, 'bench', [event])])),
  }
  if (raw) {
    ways['raw: change alone (insert-one)'] = () =>
      raw.begin((t) => t.unsafe(insertOneSql, ['bench', ...oneChangeParams(actor, 'r', draft)] as never[], { prepare: true }))
    ways['raw: empty tx'] = () => raw.begin((t) => t.unsafe('select 1', [], { prepare: true }))
  }
  const names = process.env.WAYS ? process.env.WAYS.split(',').map((i) => Object.keys(ways)[Number(i)]!) : Object.keys(ways)
  // blocks of BLOCK calls of each way in turns; the backends of the bench's database read before and after each block
  const [{ name: dbName }] = await db.query<{ name: string }>('select current_database() as name')
  const pids = async () =>
    (await db.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [dbName])).map((r) => Number(r.pid))
  const backendNs = (ps: number[]) =>
    [...ps.reduce((m, p) => threadNs(p, m), new Map<string, number>()).values()].reduce((a, b) => a + b, 0)
  const BLOCK = Number(process.env.BLOCK ?? 100)
  const own: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]))
  const back: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]))
  const ios: Record<string, [number, number]> = Object.fromEntries(names.map((n) => [n, [0, 0]]))
  const blocks = Math.ceil(ROUNDS / BLOCK)
  for (let i = 0; i < blocks + 2; i++)
    for (const name of i % 2 ? [...names].reverse() : names) {
      const ps = await pids()
      const [w, r] = [sockets.writes, sockets.reads]
      const b0 = backendNs(ps)
      const c = cpu()
      for (let j = 0; j < BLOCK; j++) await ways[name]!()
      const ownMs = (cpu() - c) / BLOCK
      const backMs = (backendNs(ps) - b0) / 1e6 / BLOCK
      if (i < 2) continue
      own[name]!.push(ownMs)
      back[name]!.push(backMs)
      ios[name]![0] += (sockets.writes - w) / BLOCK / blocks
      ios[name]![1] += (sockets.reads - r) / BLOCK / blocks
    }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const [{ n }] = await db.query<{ n: number }>(
    "select count(*)::int as n from pg_stat_activity where datname = $1 and application_name = 'arbor'",
    [dbName],
  )
  console.log(`the app's pool: ${n} connections open`)
  console.log(
    `| way | this process's CPU ms, median of ${blocks} blocks of ${BLOCK} | the backends' CPU ms | socket writes | socket reads |\n|---|---|---|---|---|`,
  )
  for (const name of names)
    console.log(
      `| ${name} | ${median(own[name]!).toFixed(3)} | ${median(back[name]!).toFixed(3)} | ${ios[name]![0].toFixed(2)} | ${ios[name]![1].toFixed(2)} |`,
    )
  await raw?.end()
} finally {
  await server.close()
}
