// What each part of a 100-add batch's change rows costs (bench/writes.md, "Sixteenth pass: history's
// share of the batch"): the saving step's two statements (sql/history/insert-many.sql and
// sql/events/insert-many.sql, sent together as src/events/outbox.ts `saveOwn` sends them) against
// the events' alone (what ARBOR_BENCH_NO_HISTORY sends), and variants each taking one part of the
// changes' statement away or doing it another way: the JSON taken apart without a row stored; the
// rows into copies of `changes` with no index, with its key only, with its text keys in collation
// "C", with changes_target not deduplicating; the JSON taken apart as json or by
// jsonb_array_elements; no `order by`; the ids answered as one array; an adds-only statement (its
// action, kind and before constants) given `after` and `fields`, or given the parent and the data
// and building them; the kind not cast to its domain; no `returning`; `after` and `fields` null
// (narrower rows); the changes built in SQL from the nodes' rows they name (ids sent, no JSON).
// Since the seventeenth pass also: the statement the app now sends for a batch of adds
// (sql/history/insert-adds.sql) and insert-many.sql into a copy of `changes` whose keys compare in
// the database's collation, as before migration 0057 (the two beside the first two whatever
// --only says); every change's fields as arrays taken apart by unnest(), the adds' alone so, each
// also into the copy in collation "C"; changes_target on one bigint, a hash of the project and the
// target, and the id. The other copies are made `like changes`, so their keys are in "C" since 0057.
// Variants that change the statement are for measuring only: the app sends insert-many.sql and
// insert-adds.sql, nothing else here.
//
//   bun bench/history-batch-parts.ts [--samples 200] [--rows 100] [--filled 20000] [--only word,word]
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/history-batch-parts.ts
//
// --only keeps the four first variants and those whose name holds one of the words (an underscore
// for a space). Each sample is one transaction (BEGIN, the statements, COMMIT) on a database of its
// own (PGlite in memory, or a new database of the server) whose `changes` (and each copy) holds
// `filled` rows first; the variants take turns sample by sample, after 20 untimed rounds. Printed
// per variant: the median of this process's CPU (on PGlite: the SQL with its binding) and, on
// PostgreSQL, of the backends' CPU (/proc/<pid>/schedstat), and what it adds to the events' alone.

import eventsSql from '../sql/events/insert-many.sql' with { type: 'text' }
import addsAppSql from '../sql/history/insert-adds.sql' with { type: 'text' }
import changesSql from '../sql/history/insert-many.sql' with { type: 'text' }
import type { Db } from '../src/db'
import { addParams, changeParams } from '../src/history/record'
import { addedEvents, backendsCpuMs, batchActor, ELEMENTS_INSERT, jobAddDrafts } from './lib/batch-changes'
import { freshDb } from './lib/fresh-db'
import { median } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const SAMPLES = Number(opt('samples', '200'))
const ROWS = Number(opt('rows', '100'))
const FILLED = Number(opt('filled', '20000'))
const ONLY = args.includes('--only')
  ? opt('only', '')
      .split(',')
      .map((o) => o.replaceAll('_', ' '))
  : null
const PG = process.env.BENCH_DATABASE_URL

const actor = batchActor
const drafts = jobAddDrafts(ROWS, (i) => `x${i} ${i}`)
const events = addedEvents(drafts)

/** insert-many.sql into another table, or with its select's columns replaced */
const into = (table: string) => changesSql.replace('insert into changes (', `insert into ${table} (`)
const parseOnly = `select count(*) from jsonb_to_recordset($8::jsonb) as c(action text, kind text, id text, type text, before jsonb, after jsonb, fields jsonb, "revertOf" bigint, proposal jsonb)
  where $1::text is not null and $2::text is not null and $3::text is not null and $4::text is not null and $6::text is not null and $7::text is not null and $5::text is null`
/** the adds' changes built in SQL from the nodes' rows they name (ids in order) */
const fromNodes = `insert into changes (
  project_id, user_id, user_name, key_id, agent, via, request_id,
  action, target_kind, target_id, target_type, before, after, fields
)
select $1, $2, $3, $4, $5, $6, $7, 'add', 'node', n.id, n.type, null,
  jsonb_build_object('parentId', n.parent_id, 'data', n.data),
  (select jsonb_agg(k) from (select 'parentId' as k union all select jsonb_object_keys(n.data)) ks)
from unnest($8::text[]) with ordinality as i(id, o)
join nodes n on n.project_id = $1 and n.id = i.id
order by i.o
returning id`

/** a batch of adds only: the action, kind and before the same for every row */
const addsSql = `insert into changes (
  project_id, user_id, user_name, key_id, agent, via, request_id,
  action, target_kind, target_id, target_type, before, after, fields
)
select $1, $2, $3, $4, $5, $6, $7, 'add', 'node', c.id, c.type, null, c.after, c.fields
from rows from (jsonb_to_recordset($8::jsonb) as (id text, type text, after jsonb, fields jsonb)) with ordinality as c(id, type, after, fields, n)
order by c.n
returning id`
/** the same with after and fields built in SQL from the node's parent and data */
const addsBuiltSql = `insert into changes (
  project_id, user_id, user_name, key_id, agent, via, request_id,
  action, target_kind, target_id, target_type, before, after, fields
)
select $1, $2, $3, $4, $5, $6, $7, 'add', 'node', c.id, c.type, null, jsonb_build_object('parentId', c."parentId", 'data', c.data),
  '["parentId"]'::jsonb || (select coalesce(jsonb_agg(k), '[]') from jsonb_object_keys(c.data) k)
from rows from (jsonb_to_recordset($8::jsonb) as (id text, type text, "parentId" text, data jsonb)) with ordinality as c(id, type, "parentId", data, n)
order by c.n
returning id`
/** every change's fields as one array a column, taken apart by unnest() in order */
const unnestSql = `insert into changes (
  project_id, user_id, user_name, key_id, agent, via, request_id,
  action, target_kind, target_id, target_type, before, after, fields, revert_of, proposal
)
select $1, $2, $3, $4, $5, $6, $7, c.action, c.kind::change_target_kind, c.id, c.type, c.before, c.after, c.fields, c.revert_of, c.proposal
from unnest($8::text[], $9::text[], $10::text[], $11::text[], $12::jsonb[], $13::jsonb[], $14::jsonb[], $15::bigint[], $16::jsonb[])
  with ordinality as c(action, kind, id, type, before, after, fields, revert_of, proposal, n)
order by c.n
returning id`
/** adds only, as unnest() of their ids, types, afters and fields */
const addsUnnestSql = `insert into changes (
  project_id, user_id, user_name, key_id, agent, via, request_id,
  action, target_kind, target_id, target_type, before, after, fields
)
select $1, $2, $3, $4, $5, $6, $7, 'add', 'node', c.id, c.type, null, c.after, c.fields
from unnest($8::text[], $9::text[], $10::jsonb[], $11::jsonb[]) with ordinality as c(id, type, after, fields, n)
order by c.n
returning id`
const js = (v: unknown) => (v == null ? null : JSON.stringify(v))
const unnestParams = (r: string) => [
  ...requestParams(r).slice(0, 7),
  drafts.map((d) => d.action),
  drafts.map((d) => d.kind),
  drafts.map((d) => d.id),
  drafts.map((d) => d.type),
  drafts.map((d) => js(d.before)),
  drafts.map((d) => js(d.after)),
  drafts.map((d) => js(d.fields)),
  drafts.map(() => null),
  drafts.map(() => null),
]
const addsUnnestParams = (r: string) => [
  ...requestParams(r).slice(0, 7),
  drafts.map((d) => d.id),
  drafts.map((d) => d.type),
  drafts.map((d) => js(d.after)),
  drafts.map((d) => js(d.fields)),
]
const addsParams = (r: string) => [
  ...requestParams(r).slice(0, 7),
  JSON.stringify(drafts.map((d) => ({ id: d.id, type: d.type, after: d.after, fields: d.fields }))),
]
const requestParams = (r: string) => ['bench', ...changeParams(actor, r, drafts)]
const eventsParam = () => ['bench', JSON.stringify(events)]

type Variant = (db: Db, r: string) => Promise<unknown>
const withEvents =
  (changes: Variant | null): Variant =>
  (db, r) =>
    Promise.all([changes ? changes(db, r) : null, db.query(eventsSql, eventsParam())])
const all: Record<string, Variant> = {
  'events only (no history)': withEvents(null),
  'events + changes, insert-many.sql (keys in "C")': withEvents((db, r) => db.query(changesSql, requestParams(r))),
  'events + changes, before the seventeenth pass (insert-many.sql, keys in the database collation)': withEvents((db, r) =>
    db.query(into('changes_dflt'), requestParams(r)),
  ),
  'events + changes, as the app sends them (insert-adds.sql)': withEvents((db, r) =>
    db.query(addsAppSql, ['bench', ...addParams(actor, r, drafts)]),
  ),
  'events + JSON taken apart, no row': withEvents((db, r) => db.query(parseOnly, requestParams(r))),
  'events + changes, no index': withEvents((db, r) => db.query(into('changes_noidx'), requestParams(r))),
  'events + changes, key only': withEvents((db, r) => db.query(into('changes_key'), requestParams(r))),
  'events + changes, text keys collate "C"': withEvents((db, r) => db.query(into('changes_c'), requestParams(r))),
  'events + changes, its target index without deduplication': withEvents((db, r) => db.query(into('changes_nodedup'), requestParams(r))),
  'events + changes, taken apart as json': withEvents((db, r) =>
    db.query(changesSql.replace('jsonb_to_recordset($8::jsonb)', 'json_to_recordset($8::json)'), requestParams(r)),
  ),
  'events + changes, as jsonb_array_elements': withEvents((db, r) => db.query(ELEMENTS_INSERT, requestParams(r))),
  'events + changes, no order by': withEvents((db, r) => db.query(changesSql.replace(/order by c\.n\s*/, ''), requestParams(r))),
  'events + changes, ids in one row': withEvents((db, r) =>
    db.query(`with c as (${changesSql.replace(/^--.*\n/gm, '')}) select array_agg(id order by id) as ids from c`, requestParams(r)),
  ),
  'events + changes, adds only: id, type, after, fields': withEvents((db, r) =>
    db.query(addsSql, [
      ...requestParams(r).slice(0, 7),
      JSON.stringify(drafts.map((d) => ({ id: d.id, type: d.type, after: d.after, fields: d.fields }))),
    ]),
  ),
  'events + changes, adds only: id, type, parentId, data': withEvents((db, r) =>
    db.query(addsBuiltSql, [
      ...requestParams(r).slice(0, 7),
      JSON.stringify(drafts.map((d) => ({ id: d.id, type: d.type, parentId: d.after.parentId, data: d.after.data }))),
    ]),
  ),
  'events + changes, kind not cast to its domain': withEvents((db, r) =>
    db.query(changesSql.replace('c.kind::change_target_kind', 'c.kind'), requestParams(r)),
  ),
  'events + changes, no returning': withEvents((db, r) => db.query(changesSql.replace(/returning id\s*$/, ''), requestParams(r))),
  'events + changes, after and fields null': withEvents((db, r) =>
    db.query(changesSql, [
      'bench',
      ...changeParams(
        actor,
        r,
        drafts.map((d) => ({ ...d, after: null, fields: [] })),
      ),
    ]),
  ),
  'events + changes, unnest of arrays': withEvents((db, r) => db.query(unnestSql, unnestParams(r))),
  'events + changes, adds only as unnest': withEvents((db, r) => db.query(addsUnnestSql, addsUnnestParams(r))),
  'events + changes, adds only into collate C': withEvents((db, r) =>
    db.query(addsSql.replace('insert into changes (', 'insert into changes_c ('), addsParams(r)),
  ),
  'events + changes, adds only as unnest into collate C': withEvents((db, r) =>
    db.query(addsUnnestSql.replace('insert into changes (', 'insert into changes_c ('), addsUnnestParams(r)),
  ),
  'events + changes, its target index on a hash': withEvents((db, r) => db.query(into('changes_h'), requestParams(r))),
  'events + changes, adds only into a hashed target index': withEvents((db, r) =>
    db.query(addsSql.replace('insert into changes (', 'insert into changes_h ('), addsParams(r)),
  ),
  'events + changes from the nodes in SQL': withEvents((db, r) =>
    db.query(fromNodes, [...requestParams(r).slice(0, 7), drafts.map((d) => d.id)]),
  ),
}
const variants = Object.fromEntries(Object.entries(all).filter(([k], i) => i < 4 || !ONLY || ONLY.some((o) => k.includes(o))))

const { db, close } = await freshDb(`arbor_hist_parts_${process.pid}`, PG)
try {
  await db.query(`insert into users (id, name) values ('bench', 'bench')`)
  await db.query(`insert into projects (id, name, owner_id) values ('bench', 'bench', 'bench')`)
  await db.exec(`create table changes_noidx (like changes including defaults); create table changes_key (like changes including defaults);
    alter table changes_key add primary key (project_id, id);
    create table changes_c (like changes including defaults);
    alter table changes_c alter column project_id type text collate "C", alter column target_id type text collate "C", add primary key (project_id, id);
    create index changes_c_target on changes_c (project_id, target_id, id desc);
    create table changes_nodedup (like changes including defaults);
    alter table changes_nodedup add primary key (project_id, id);
    create table changes_dflt (like changes including defaults);
    alter table changes_dflt alter column project_id type text collate "default", alter column target_id type text collate "default",
      add primary key (project_id, id);
    create index changes_dflt_target on changes_dflt (project_id, target_id, id desc);
    create table changes_h (like changes including defaults);
    alter table changes_h add primary key (project_id, id);
    create index changes_h_target on changes_h (hashtextextended(target_id, hashtextextended(project_id, 0)), id desc);
    create index changes_nodedup_target on changes_nodedup (project_id, target_id, id desc) with (deduplicate_items = off)`)
  console.log((await db.query<{ c: string }>(`select datcollate as c from pg_database where datname = current_database()`))[0]!.c)
  // the nodes the last variant reads: one approach's jobs, as the batch leaves them
  await db.query(`insert into nodes (project_id, id, type, parent_id, data) values ('bench', 'approach-1', 'goal', null, '{"label":"a"}')`)
  await db.query(
    `insert into nodes (project_id, id, type, parent_id, data) select 'bench', d.id, 'job', 'approach-1', d.data from jsonb_to_recordset($1::jsonb) as d(id text, data jsonb)`,
    [JSON.stringify(drafts.map((d) => ({ id: d.id, data: d.after.data })))],
  )
  // each table filled as a project's history would be, in statements of 1,000
  for (let i = 0; i < FILLED; i += 1000)
    for (const t of ['changes', 'changes_noidx', 'changes_key', 'changes_c', 'changes_nodedup', 'changes_h', 'changes_dflt']) {
      const fill = Array.from({ length: 1000 }, (_, j) => ({ ...drafts[j % ROWS]!, id: `old-${i + j}` }))
      await db.query(into(t), ['bench', ...changeParams(actor, crypto.randomUUID(), fill)])
    }
  await db.exec('analyze')

  const cpuMs = () => {
    const u = process.cpuUsage()
    return (u.user + u.system) / 1000
  }
  const backendMs = PG ? await backendsCpuMs(db) : () => 0

  const got = new Map(Object.keys(variants).map((v) => [v, { cpu: [] as number[], backend: [] as number[] }]))
  const names = Object.keys(variants)
  for (let s = 0; s < SAMPLES + 20; s++)
    for (let i = 0; i < names.length; i++) {
      const v = names[(i + s) % names.length]!
      const c = cpuMs()
      const b = backendMs()
      await db.tx((tx) => variants[v]!(tx, crypto.randomUUID()))
      if (s < 20) continue // untimed: the statements prepared, their generic plans chosen
      got.get(v)!.cpu.push(cpuMs() - c)
      if (PG) got.get(v)!.backend.push(backendMs() - b)
    }
  const what = PG ? 'the backends' : 'this process'
  console.log(
    `${PG ? 'postgres' : 'pglite'}: ${ROWS} changes beside their events, ${FILLED} rows in the table first, ${SAMPLES} samples each, CPU ms (median)`,
  )
  const base = got.get(names[0]!)!
  const of = (g: { cpu: number[]; backend: number[] }) => median(PG ? g.backend : g.cpu)
  for (const [v, g] of got)
    console.log(
      `${v}: ${what} ${of(g).toFixed(3)} (+${(of(g) - of(base)).toFixed(3)})` +
        (PG ? `, this process ${median(g.cpu).toFixed(3)} (+${(median(g.cpu) - median(base.cpu)).toFixed(3)})` : ''),
    )
} finally {
  await close()
}
