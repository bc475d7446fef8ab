// What one change row costs the database, part by part (history.md 7; bench/writes.md, "Fifteenth
// pass: history's share"): a write's only change, inserted by sql/history/insert-one.sql's
// statement into copies of `changes` (`create table … (like changes including all)`, so the
// same columns, defaults and statistics), each copy with fewer of its parts:
//
// - as migrated: its key (project_id, id) and changes_target (project_id, target_id, id desc);
// - without changes_target;
// - without either index (the heap row, its defaults: id, at, txid);
// - as migrated, without `returning id`.
//
// Each copy is filled with --rows changes first (seven projects, 3,000 targets), then one change
// a transaction (begin; insert; commit, as a write's saving step sends it within its own) into
// each copy in turns, blocks of --block, --rounds blocks each: the CPU of the database (PostgreSQL:
// the backend's, from /proc; PGlite: this process's, which runs it) per transaction, median of the
// blocks. "− the empty transaction" subtracts the same transaction with `select 1` in place of the
// insert, timed in the same turns: what is left is the statement.
//
//   bun bench/change-row-cost.ts [--rows 50000] [--rounds 15] [--block 200]
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/change-row-cost.ts

import insertManySql from '../sql/history/insert-many.sql' with { type: 'text' }
import insertOneSql from '../sql/history/insert-one.sql' with { type: 'text' }
import { freshDb, labelUpdateDrafts } from './lib/fresh-db'
import { threadNs } from './lib/proc-cpu'
import { median } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const ROWS = Number(opt('rows', '50000'))
const ROUNDS = Number(opt('rounds', '15'))
const BLOCK = Number(opt('block', '200'))
const PG = process.env.BENCH_DATABASE_URL

const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

const { db, close } = await freshDb(`arbor_change_row_${process.pid}`, PG)
try {
  /** CPU ms of the database so far: its backends (PostgreSQL; one that ended keeps its last reading), or this process (PGlite, which runs it) */
  const last = new Map<string, number>()
  const dbCpu = async () => {
    if (!PG) return cpuMs()
    const now = new Map<string, number>()
    for (const { pid } of await db.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database()'))
      threadNs(pid, now)
    for (const [k, v] of now) last.set(k, v)
    return [...last.values()].reduce((x, y) => x + y, 0) / 1e6
  }
  const variants = {
    'as migrated (key + changes_target)': { table: 'cr_both', sql: insertOneSql },
    'without changes_target': { table: 'cr_key', sql: insertOneSql },
    'without either index': { table: 'cr_none', sql: insertOneSql },
    'as migrated, without returning id': { table: 'cr_both_noret', sql: insertOneSql.replace(/\nreturning id\s*$/, '\n') },
  } as const
  for (const { table } of Object.values(variants)) await db.exec(`create table ${table} (like changes including all)`)
  for (const t of ['cr_key', 'cr_none']) {
    const idx = await db.query<{ name: string }>(`select indexname as name from pg_indexes where tablename = '${t}'`)
    for (const { name } of idx)
      if (t === 'cr_none' || !name.endsWith('_pkey'))
        await db.exec(name.endsWith('_pkey') ? `alter table ${t} drop constraint ${name}` : `drop index ${name}`)
  }
  const shown = await db.query<{ t: string; i: string }>(
    `select tablename as t, string_agg(indexdef, '; ' order by indexname) as i from pg_indexes where tablename like 'cr_%' group by 1 order by 1`,
  )
  for (const r of shown) console.error(`${r.t}: ${r.i}`)
  // the rows before: seven projects, 3,000 targets, a goal's label update each
  for (const { table } of Object.values(variants)) {
    const into = insertManySql.replace('insert into changes', `insert into ${table}`)
    for (let i = 0; i < ROWS; i += 500)
      await db.query(into, [`p${(i / 500) % 7}`, 'u_1', 'Ann', 'k_1', null, 'api', `r-${i}`, JSON.stringify(labelUpdateDrafts(i))])
    await db.exec(`analyze ${table}`)
  }
  let k = 0
  const params = () => {
    k++
    return [
      'p3',
      'u_1',
      'Ann',
      'k_1',
      null,
      'api',
      `req-${k}`,
      'update',
      'node',
      `g_${k % 3000}`,
      'goal',
      JSON.stringify({ parentId: null, data: { label: `b${k}` } }),
      JSON.stringify({ parentId: null, data: { label: `x${k}` } }),
      JSON.stringify(['label']),
      null,
      null,
    ]
  }
  const ways: [string, () => Promise<unknown>][] = [
    ['the empty transaction (select 1)', () => db.tx((tx) => tx.query('select 1'))],
    ...Object.entries(variants).map(([label, v]): [string, () => Promise<unknown>] => {
      const text = v.sql.replace('insert into changes', `insert into ${v.table}`)
      return [label, () => db.tx((tx) => tx.query(text, params()))]
    }),
  ]
  const got = new Map<string, number[]>(ways.map(([l]) => [l, []]))
  // one untimed block each first (the statements prepared), then the ways in an order turned every round
  for (let r = -1; r < ROUNDS; r++)
    for (let j = 0; j < ways.length; j++) {
      const [label, run] = ways[(j + Math.max(r, 0)) % ways.length]!
      const c0 = await dbCpu()
      for (let i = 0; i < BLOCK; i++) await run()
      const c1 = await dbCpu()
      if (r >= 0) got.get(label)!.push(((c1 - c0) / BLOCK) * 1000)
    }
  const empty = median(got.get(ways[0]![0])!)
  console.log(
    `\n${PG ? 'PostgreSQL (the backends)' : 'PGlite (this process)'}: CPU µs a transaction of one change, ${ROWS} rows in each table before, ${ROUNDS} blocks of ${BLOCK} each (median of the blocks; min–max)\n`,
  )
  console.log('| way | µs a transaction | − the empty transaction |')
  console.log('|---|---|---|')
  for (const [label] of ways) {
    const xs = got.get(label)!
    console.log(
      `| ${label} | ${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}) | ${(median(xs) - empty).toFixed(1)} |`,
    )
  }
} finally {
  await close()
}
