// What a table's CHECK constraint costs the statements that write the table (issue 51, 3; the
// twelfth pass in bench/writes.md). Of the tables a write touches, nodes had the last one after
// migration 0042 (nodes_type_check, `type in ('goal', 'need', 'approach', 'job', 'task')`): every
// statement that inserts or updates nodes read it back from its stored text and planned it again
// (ExecRelCheck), whatever columns it set. The node's insert (sql/nodes/insert-many.sql, one goal)
// and a label update (sql/nodes/update.sql) as the app sends them, each a transaction of its own,
// under the variants in turns round by round, each variant on a database of its own (the app's
// schema as migrated, with the table's check put back as before migration 0045); each round's
// figure is read against the first variant's in the same round:
//
//   bun bench/check-constraints.ts [--rounds 60] [--block 40] [--only word,word]
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/check-constraints.ts --rounds 300
//
// On PGlite each statement is timed alone by the CPU time of this thread (PGlite runs in it); on
// PostgreSQL each block by the CPU of the one backend writing (/proc/<pid>/schedstat), each write a
// transaction of one statement (BEGIN and COMMIT in the figure). The variants: "before 0045" (the
// table's check); "no check" (dropped: what it costs); "since 0045" (no check, the insert casting
// the type to the domain node_type); "a column of node_type" (no check, the column of the domain's
// type: the insert coerces to it, an update that does not set the type checks nothing); "the check
// again" (the first variant again: the method's noise).

import { dlopen, FFIType, ptr } from 'bun:ffi'
import { readFileSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import postgres from 'postgres'
import insertSql from '../sql/nodes/insert-many.sql' with { type: 'text' }
import updateSql from '../sql/nodes/update.sql' with { type: 'text' }
import type { PgliteDb } from '../src/db/pglite'
import { pgliteAssets } from '../src/db/pglite-assets'
import { preparedRunner } from '../src/db/pglite-prepared'
import { type BenchServer, startBenchServer } from './lib/app'
import { median, mutate } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const ROUNDS = Number(opt('rounds', '60'))
const BLOCK = Number(opt('block', '40'))
const ONLY = opt('only', '').split(',').filter(Boolean)
const PG_URL = process.env.BENCH_DATABASE_URL

const TYPES = "('goal', 'need', 'approach', 'job', 'task')"
const dropCheck = 'alter table nodes drop constraint nodes_type_check'
// the schema as it was before migration 0045, whatever this checkout's migrations left: the check
// of the table, the domain beside it
const before0045 = `do $$ begin
  if not exists (select 1 from pg_type where typname = 'node_type') then
    create domain node_type as text check (value in ${TYPES});
  end if;
end $$;
alter table nodes drop constraint if exists nodes_type_check;
alter table nodes add constraint nodes_type_check check (type in ${TYPES});`
// the node's insert as it was before migration 0045 (the type as text) and as it is since (cast to node_type)
const plainInsert = insertSql.replace("(e.v ->> 'type')::node_type", "e.v ->> 'type'")
const castInsert = plainInsert.replace("e.v ->> 'type'", "(e.v ->> 'type')::node_type")
if (castInsert === plainInsert) throw new Error("sql/nodes/insert-many.sql no longer reads the type as e.v ->> 'type'")
type Variant = { insert: string; setup?: string }
const BASE = 'before 0045: the check of the table'
const variants: Record<string, Variant> = {
  [BASE]: { insert: plainInsert },
  'no check': { insert: plainInsert, setup: dropCheck },
  'since 0045: the insert casts to node_type, no check': { insert: castInsert, setup: dropCheck },
  'a column of node_type, no check': { insert: plainInsert, setup: `${dropCheck}; alter table nodes alter column type type node_type` },
  'the check again': { insert: plainInsert },
}
const chosen = Object.entries(variants).filter(([name]) => name === BASE || !ONLY.length || ONLY.some((w) => name.includes(w)))

type Run = (text: string, params: unknown[]) => Promise<unknown>
interface Target {
  transaction: (write: (run: Run) => Promise<unknown>) => Promise<unknown>
  /** CPU ns so far: this process's main thread (PGlite runs in it) or the one backend's (PostgreSQL) */
  cpuNs: () => number
  close: () => Promise<void>
}
const schedNs = (path: string) => Number(readFileSync(path, 'utf8').split(' ')[0])
// this thread's CPU time (clock_gettime(CLOCK_THREAD_CPUTIME_ID)): PGlite runs in it; the process's
// other threads (the collector's, the compiler's) and /proc's tick-grained figures left out
const libc = dlopen('libc.so.6', { clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } })
const timespec = new BigInt64Array(2)
const threadNs = () => {
  libc.symbols.clock_gettime(3, ptr(timespec))
  return Number(timespec[0]!) * 1e9 + Number(timespec[1]!)
}

/**
 * The app's schema, project ww and its goal `target`, made through the app, and 2,000 more goals
 * (so that the statistics each variant's set-up takes are of a table whose key is the plan: on a
 * table analyzed with one row, the update's generic plan was a sequential scan, slower as the
 * rounds' goals grew it)
 */
async function project(s: BenchServer) {
  const call = mutate(s)
  await call({ action: 'addProject', project: { id: 'ww', name: 'ww' } })
  const id = (await call({ action: 'add', projectId: 'ww', node: { type: 'goal', data: { label: 'g' } } })).node!.id
  const goals = Array.from({ length: 2000 }, (_, i) => ({ id: `goal-s${i}`, type: 'goal', parent_id: null, data: { label: `s${i}` } }))
  await s.deps.db.query(insertSql, ['ww', JSON.stringify(goals)])
  await s.deps.db.exec(before0045)
  return id
}

let target = ''
const servers: BenchServer[] = []
let copy: Blob | File | undefined
if (!PG_URL) {
  const s = await startBenchServer()
  target = await project(s)
  copy = await (s.deps.db as PgliteDb).dump()
  await s.close()
}
async function pgliteTarget(v: Variant): Promise<Target> {
  const pg = await PGlite.create({ ...(await pgliteAssets({ initdb: false })), loadDataDir: copy })
  // analyzed after the set-up, each variant alike (a column's new type rewrites the table)
  await pg.exec(`${v.setup ?? ''}; analyze nodes`)
  const runner = preparedRunner(pg)
  return {
    transaction: (write) => runner.transaction(() => write((t, p) => runner.run(t, p, true))),
    cpuNs: threadNs,
    close: () => pg.close(),
  }
}
// each variant a database of its own, migrated by the app; the writes on one connection of their own
async function postgresTarget(v: Variant): Promise<Target> {
  const s = await startBenchServer(PG_URL)
  servers.push(s)
  target = await project(s)
  await s.deps.db.exec(`${v.setup ?? ''}; analyze nodes`)
  const name = (await s.deps.db.query<{ d: string }>('select current_database() as d'))[0]!.d
  const url = new URL(PG_URL!)
  url.pathname = `/${name}`
  // JSON passed as text, as the app's Db passes it (src/db/postgres.ts)
  const json = { to: 114, from: [114, 3802], serialize: (x: unknown) => (typeof x === 'string' ? x : JSON.stringify(x)), parse: JSON.parse }
  const sql = postgres(url.toString(), { max: 1, onnotice: () => {}, types: { json } })
  const pid = (await sql`select pg_backend_pid() as p`)[0]!.p as number
  return {
    transaction: (write) => sql.begin((tx) => write((t, p) => tx.unsafe(t, p as never[], { prepare: true }))),
    cpuNs: () => schedNs(`/proc/${pid}/schedstat`),
    close: () => sql.end(),
  }
}

const targets = new Map<string, Target>()
for (const [name, v] of chosen) targets.set(name, PG_URL ? await postgresTarget(v) : await pgliteTarget(v))
let k = 0
const ops = {
  insert: (v: Variant) => (run: Run) =>
    run(v.insert, [
      'ww',
      JSON.stringify([
        { id: `goal-c${++k}`, type: 'goal', parent_id: null, data: { label: `c${k}` }, created_at: null, classified: false },
      ]),
    ]),
  update: () => (run: Run) => run(updateSql, ['ww', target, null, JSON.stringify({ label: `u${++k}` }), false, 'label']),
}
const ns: Record<string, Record<string, number[]>> = { insert: {}, update: {} }
try {
  for (const [name, v] of chosen)
    for (const make of Object.values(ops)) for (let i = 0; i < 100; i++) await targets.get(name)!.transaction(make(v)) // untimed: plans made, caches warm
  for (let r = 0; r < ROUNDS; r++)
    for (const [name, v] of r % 2 ? [...chosen].reverse() : chosen)
      for (const [op, make] of Object.entries(ops)) {
        const t = targets.get(name)!
        const write = make(v)
        // PGlite: the statement alone; PostgreSQL: its transaction (BEGIN, the statement, COMMIT)
        let own = 0
        const timed = async (run: Run) => {
          const from = t.cpuNs()
          await write(run)
          own += t.cpuNs() - from
        }
        const from = t.cpuNs()
        for (let i = 0; i < BLOCK; i++) await t.transaction(PG_URL ? write : timed)
        ;(ns[op]![name] ??= []).push((PG_URL ? t.cpuNs() - from : own) / BLOCK / 1000)
      }
} finally {
  for (const t of targets.values()) await t.close()
  for (const s of servers) await s.close()
}

const base = BASE
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
console.log(
  `the nodes' insert (one goal) and a label update, ${PG_URL ? "PostgreSQL, the backend's CPU a transaction" : "PGlite, the main thread's CPU a statement"}, ${ROUNDS} rounds of ${BLOCK}\n`,
)
console.log(
  "| variant | insert µs (median of rounds) | ÷ before 0045 (median of the rounds' ratios; of the sums) | update µs | ÷ before 0045 |\n|---|---|---|---|---|",
)
for (const [name] of chosen) {
  const cell = (op: string) => {
    const xs = ns[op]![name]!
    const b = ns[op]![base]!
    return `${median(xs).toFixed(1)} | ${median(xs.map((x, i) => x / b[i]!)).toFixed(3)}×; ${(sum(xs) / sum(b)).toFixed(3)}×`
  }
  console.log(`| ${name} | ${cell('insert')} | ${cell('update')} |`)
}
