// What a 100-add batch's nodes' insert costs to bind and to answer, apart from its triggers and
// indexes (issue 51, 3; bench/writes.md "Eleventh pass: the batch in the app"): the statement of
// sql/nodes/insert-many.sql into a temporary table of the nodes' columns (no trigger, no index),
// its 100 rows sent as one jsonb (as the app does), as jsonb_to_recordset, or as one array per
// column, and answering its rows in full (before), id and rev (now), one aggregated row, or nothing.
// The variants take turns sample by sample (so a drift of the machine falls on all of them), each
// sample in a transaction of its own; the table shows each one's median time over the statement
// and this process's CPU over it (on PGlite the statement runs in this thread, so that is all of
// it; on PostgreSQL it is the client's: binding, writing, reading and decoding the answer).
//
//   bun bench/batch-insert-returning.ts [samples]                  (PGlite; 200 by default)
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/batch-insert-returning.ts

import { type Db, openDb } from '../src/db'
import { openPostgres } from '../src/db/postgres'

const SAMPLES = Number(process.argv[2] ?? 200)
const WARMUP = 5
const PG_URL = process.env.BENCH_DATABASE_URL
const db: Db = PG_URL ? await openPostgres(PG_URL) : await openDb({ databaseUrl: 'memory://', dataDir: '' })

interface Row {
  id: string
  type: string
  parent_id: string
  data: Record<string, unknown>
  created_at: null
  classified: boolean
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const COLUMNS = '(project_id, id, type, parent_id, data, created_at, classified_at)'
const FROM_JSONB = `insert into t ${COLUMNS}
select $1, e.v ->> 'id', e.v ->> 'type', e.v ->> 'parent_id', e.v -> 'data',
  coalesce((e.v ->> 'created_at')::timestamptz, now()),
  case when (e.v ->> 'classified')::boolean then now() end
from jsonb_array_elements($2::jsonb) with ordinality as e(v, n)
order by e.n`
const FROM_RECORDSET = `insert into t ${COLUMNS}
select $1, r.id, r.type, r.parent_id, r.data, coalesce(r.created_at, now()), case when r.classified then now() end
from rows from (jsonb_to_recordset($2::jsonb) as (id text, type text, parent_id text, data jsonb, created_at timestamptz, classified boolean))
  with ordinality as r(id, type, parent_id, data, created_at, classified, n)
order by r.n`
// postgres.js types an array by its first item: the booleans and null timestamps go as text
const FROM_ARRAYS = `insert into t ${COLUMNS}
select $1, r.id, r.type, r.parent_id, r.data, coalesce(r.created_at, now()), case when r.classified then now() end
from unnest($2::text[], $3::text[], $4::text[], $5::text[]::jsonb[], $6::text[]::timestamptz[], $7::text[]::boolean[])
  with ordinality as r(id, type, parent_id, data, created_at, classified, n)
order by r.n`
const asJsonb = (rows: Row[]) => ['ww', JSON.stringify(rows)]
const asArrays = (rows: Row[]) => [
  'ww',
  rows.map((r) => r.id),
  rows.map((r) => r.type),
  rows.map((r) => r.parent_id),
  rows.map((r) => JSON.stringify(r.data)),
  rows.map((r) => r.created_at),
  rows.map((r) => (r.classified ? 't' : 'f')),
]
const VARIANTS: Record<string, [string, (rows: Row[]) => unknown[]]> = {
  'jsonb, returning id, type, parent_id, data, created_at, rev (before)': [
    `${FROM_JSONB} returning id, type, parent_id, data, created_at, rev`,
    asJsonb,
  ],
  'jsonb, returning id, rev (now)': [`${FROM_JSONB} returning id, rev`, asJsonb],
  'jsonb, returning nothing': [FROM_JSONB, asJsonb],
  'jsonb, id and rev aggregated in one row': [
    `with i as (${FROM_JSONB} returning id, rev) select array_agg(id) as ids, array_agg(rev) as revs from i`,
    asJsonb,
  ],
  'jsonb_to_recordset, returning id, rev': [`${FROM_RECORDSET} returning id, rev`, asJsonb],
  'one array per column, returning id, rev': [`${FROM_ARRAYS} returning id, rev`, asArrays],
}

let k = 0
const rows = (): Row[] => {
  k++
  return Array.from({ length: 100 }, (_, i) => ({
    id: `job-${k * 1000 + i}`,
    type: 'job',
    parent_id: 'approach-1',
    data: { label: `B${k} ${i}`, iteration: 'Later' },
    created_at: null,
    classified: true,
  }))
}

await db.query('create sequence if not exists pg_temp.revs')
const names = Object.keys(VARIANTS)
const wall = new Map<string, number[]>(names.map((n) => [n, []]))
const cpu = new Map<string, number[]>(names.map((n) => [n, []]))
for (let i = 0; i < SAMPLES + WARMUP; i++)
  for (let j = 0; j < names.length; j++) {
    const name = names[(i + j) % names.length]!
    const [text, bind] = VARIANTS[name]!
    const params = bind(rows())
    await db.tx(async (tx) => {
      await tx.query(`create temp table if not exists t (
        project_id text, id text, type text, parent_id text, data jsonb, created_at timestamptz,
        classified_at timestamptz, rev bigint not null default nextval('pg_temp.revs')
      ) on commit delete rows`)
      const c = process.cpuUsage()
      const t = performance.now()
      await tx.query(text, params)
      const d = process.cpuUsage(c)
      if (i < WARMUP) return
      wall.get(name)!.push(performance.now() - t)
      cpu.get(name)!.push((d.user + d.system) / 1000)
    })
  }
const load = (
  await Bun.file('/proc/loadavg')
    .text()
    .catch(() => '?')
)
  .split(' ')
  .slice(0, 3)
  .join(' ')
console.log(`${PG_URL ? 'PostgreSQL' : 'PGlite'}, 100 rows a statement, ${SAMPLES} samples each, load average ${load}`)
console.log('| statement | ms p50 | CPU ms p50 |\n|---|---|---|')
for (const n of names) console.log(`| ${n} | ${median(wall.get(n)!).toFixed(3)} | ${median(cpu.get(n)!).toFixed(3)} |`)
await db.close()
