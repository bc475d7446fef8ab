// A 100-add batch's changes stored with its events (bench/lib/one-statement-saving.ts `insertWithChangesSql`), bound four
// ways (bench/writes.md, "Twelfth pass: history's share in the app"): the changes as one jsonb
// taken apart by jsonb_to_recordset (as it is), the same jsonb read by jsonb_array_elements and
// ->/->>, one array per column through unnest, a multi-row VALUES with each field a parameter, and the events only (what ARBOR_BENCH_NO_HISTORY
// sends: sql/events/insert-many.sql); and the two statements the saving step sends since the
// fourteenth pass, history's (sql/history/insert-many.sql) and the events', sent together.
//
//   bun bench/history-batch-insert.ts [--samples 300] [--rows 100]
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/history-batch-insert.ts
//
// Each sample is one transaction (BEGIN, the statement, COMMIT) on a database of its own (PGlite in
// memory, or a new database of the server), the variants taking turns sample by sample; the
// changes and events are those of a batch of job adds (a node.added event and an add change each).
// Printed per variant: the median of the samples' wall time, of this process's CPU (on PGlite: the
// SQL and its binding; on PostgreSQL: the client's binding and decoding) and, on PostgreSQL, of
// the database's backends' CPU.

import insertManySql from '../sql/events/insert-many.sql' with { type: 'text' }
import changesInsertManySql from '../sql/history/insert-many.sql' with { type: 'text' }
import type { Db } from '../src/db'
import { openDb } from '../src/db'
import { changeParams } from '../src/history/record'
import { addedEvents, backendsCpuMs, batchActor, CHANGES_INSERT, ELEMENTS_INSERT, jobAddDrafts } from './lib/batch-changes'
import { insertWithChangesSql } from './lib/one-statement-saving'
import { median } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const SAMPLES = Number(opt('samples', '300'))
const ROWS = Number(opt('rows', '100'))
const PG = process.env.BENCH_DATABASE_URL

const EVENTS = (n: number) => `ev as (
  insert into events (project_id, type, payload)
  select $1, e.v ->> 'type', e.v -> 'payload'
  from jsonb_array_elements($${n}::jsonb) with ordinality as e(v, n)
  order by e.n
  returning seq
)
select false as event, id from ch
union all
select true as event, seq as id from ev`

/** the changes as jsonb_array_elements' values, each field by -> or ->> */
const elementsSql = `with ch as (
  ${ELEMENTS_INSERT}
), ${EVENTS(9)}`

/** one array per column, through unnest */
const arraysSql = `with ch as (
  ${CHANGES_INSERT}
  select $1, $2, $3, $4, $5, $6, $7, c.action, c.kind::change_target_kind, c.id, c.type, c.before, c.after, c.fields, c.revert_of, c.proposal
  from unnest($8::text[], $9::text[], $10::text[], $11::text[], $12::jsonb[], $13::jsonb[], $14::jsonb[], $15::bigint[], $16::jsonb[])
    with ordinality as c(action, kind, id, type, before, after, fields, revert_of, proposal, n)
  order by c.n
  returning id
), ${EVENTS(17)}`

/** a multi-row VALUES, each field of each change a parameter of its own (a text per batch size) */
const valuesSql = (rows: number) => `with ch as (
  ${CHANGES_INSERT}
  values ${Array.from({ length: rows }, (_, i) => {
    const p = (k: number) => `$${8 + 9 * i + k}`
    return `($1, $2, $3, $4, $5, $6, $7, ${p(0)}, ${p(1)}::change_target_kind, ${p(2)}, ${p(3)}, ${p(4)}::jsonb, ${p(5)}::jsonb, ${p(6)}::jsonb, ${p(7)}::bigint, ${p(8)}::jsonb)`
  }).join(',\n    ')}
  returning id
), ${EVENTS(8 + 9 * rows)}`

const actor = batchActor
const drafts = jobAddDrafts(ROWS, (i) => `J${i}`)
const events = addedEvents(drafts)

type Variant = (db: Db, requestId: string) => Promise<unknown>
const variants: Record<string, Variant> = {
  'jsonb_to_recordset (as it is)': (db, r) =>
    db.query(insertWithChangesSql, ['bench', ...changeParams(actor, r, drafts), JSON.stringify(events)]),
  'jsonb_array_elements, -> and ->>': (db, r) =>
    db.query(elementsSql, ['bench', ...changeParams(actor, r, drafts), JSON.stringify(events)]),
  'one array per column, unnest': (db, r) =>
    db.query(arraysSql, [
      'bench',
      actor.userId,
      actor.userName,
      actor.keyId,
      null,
      actor.via,
      r,
      drafts.map((d) => d.action),
      drafts.map((d) => d.kind),
      drafts.map((d) => d.id),
      drafts.map((d) => d.type),
      drafts.map((d) => (d.before == null ? null : JSON.stringify(d.before))),
      drafts.map((d) => JSON.stringify(d.after)),
      drafts.map((d) => JSON.stringify(d.fields)),
      drafts.map(() => null),
      drafts.map(() => null),
      JSON.stringify(events),
    ]),
  'multi-row VALUES, a parameter a field': (db, r) =>
    db.query(valuesSql(ROWS), [
      'bench',
      actor.userId,
      actor.userName,
      actor.keyId,
      null,
      actor.via,
      r,
      ...drafts.flatMap((d) => [d.action, d.kind, d.id, d.type, null, JSON.stringify(d.after), JSON.stringify(d.fields), null, null]),
      JSON.stringify(events),
    ]),
  // since the fourteenth pass: history's statement and the events', sent together (src/events/outbox.ts save)
  "history's statement and the events', sent together": (db, r) =>
    Promise.all([
      db.query(changesInsertManySql, ['bench', ...changeParams(actor, r, drafts)]),
      db.query(insertManySql, ['bench', JSON.stringify(events)]),
    ]).then((both) => both.flat()),
  'the events only (no history)': (db) => db.query(insertManySql, ['bench', JSON.stringify(events)]),
}

const name = `arbor_hist_batch_${process.pid}`
let url = 'memory://'
let admin: Db | undefined
if (PG) {
  admin = await openDb({ databaseUrl: PG, dataDir: '' })
  await admin.exec(`create database ${name}`)
  const u = new URL(PG)
  u.pathname = `/${name}`
  url = u.toString()
}
const db = await openDb({ databaseUrl: url, dataDir: '' })
await db.query(`insert into users (id, name) values ('bench', 'bench')`)
await db.query(`insert into projects (id, name, owner_id) values ('bench', 'bench', 'bench')`)
const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
const backendMs = PG ? await backendsCpuMs(db) : () => 0

try {
  const got = new Map(Object.keys(variants).map((v) => [v, { wall: [] as number[], cpu: [] as number[], backend: [] as number[] }]))
  // the answers must be the same: 100 ids and 100 seqs (the events only: 100 seqs)
  for (const [v, run] of Object.entries(variants)) {
    const rows = (await db.tx((tx) => run(tx, crypto.randomUUID()))) as unknown[]
    if (rows.length !== (v.startsWith('the events') ? ROWS : 2 * ROWS)) throw new Error(`${v}: ${rows.length} rows`)
  }
  const names = Object.keys(variants)
  for (let s = 0; s < SAMPLES + 20; s++)
    for (let i = 0; i < names.length; i++) {
      const v = names[(i + s) % names.length]!
      const t = performance.now()
      const c = cpuMs()
      const b = backendMs()
      await db.tx((tx) => variants[v]!(tx, crypto.randomUUID()))
      if (s < 20) continue // untimed: the statements prepared, their generic plans chosen
      const g = got.get(v)!
      g.wall.push(performance.now() - t)
      g.cpu.push(cpuMs() - c)
      if (PG) g.backend.push(backendMs() - b)
    }
  console.log(`${PG ? 'postgres' : 'pglite'}: ${ROWS} changes with their events, ${SAMPLES} samples each, ms (median)`)
  const base = got.get(names[0]!)!
  for (const [v, g] of got)
    console.log(
      `${v}: wall ${median(g.wall).toFixed(3)} (${(median(g.wall) / median(base.wall)).toFixed(2)}×), this process's CPU ${median(g.cpu).toFixed(3)} (${(median(g.cpu) / median(base.cpu)).toFixed(2)}×)` +
        (PG ? `, backends' CPU ${median(g.backend).toFixed(3)} (${(median(g.backend) / median(base.backend)).toFixed(2)}×)` : ''),
    )
} finally {
  await db.close()
  if (admin) {
    await admin.exec(`drop database if exists ${name} with (force)`)
    await admin.close()
  }
}
