// A job's insert, its triggers included, under work_nodes_inserted as the migrations of this
// checkout leave it (since 0041 it writes the jobs' work items itself; until then work_jobs_added
// of 0033/0038 did, which this bench compared with 0033's), and under any other definitions given
// as files (each a `create or replace` of functions, run over the current ones), beside a goal's
// insert (no work trigger), the variants taking turns round by round (issue 51, 3; bench/writes.md,
// "Tenth pass: a job's and a task's add"). On PGlite each sample is a transaction rolled back after
// the project's work lock, timed by this process's CPU time (PGlite runs in it); on PostgreSQL
// (BENCH_DATABASE_URL) each is timed inside the backend (clock_timestamp around the insert, in a
// subtransaction rolled back after the lock), a wall time, as bench/write-triggers-job.ts does.
//
//   bun bench/job-insert-variants.ts [--jobs 700] [--rounds 8] [--samples 100] [variant.sql …]
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/job-insert-variants.ts
//
// The approach holds --jobs open jobs first (as `npm run bench:writes` leaves hundreds there), so
// each insert takes 0033's path: its work item written from an open sibling's.

import { migrations } from '../sql/migrations/index'
import type { Db } from '../src/db'
import { startBenchServer } from './lib/app'
import { benchProject, cpuMsRolledBack, fillApproach, median, timedInBackend, workLock } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const JOBS = Number(opt('jobs', '700'))
const ROUNDS = Number(opt('rounds', '8'))
const SAMPLES = Number(opt('samples', '100'))
const files = args.filter((a) => a.endsWith('.sql'))

/** the last migration that (re)defines function `name`: where its current definition is */
const lastMigration = (name: string) => {
  const found = migrations.filter((m) => m.sql.includes(`function ${name}(`)).pop()
  if (!found) throw new Error(`no migration defines ${name}`)
  return found
}

const PG_URL = process.env.BENCH_DATABASE_URL

const s = await startBenchServer(PG_URL)
try {
  const { call, approach } = await benchProject(s)
  await fillApproach(call, approach, JOBS)
  const db: Db = s.deps.db
  const current = lastMigration('work_nodes_inserted')
  const of = (sql: string, name = 'work_nodes_inserted') =>
    new RegExp(`create (or replace )?function ${name}\\(.*?\\n\\$\\$;\\n`, 's')
      .exec(sql)![0]
      .replace(/^create function/, 'create or replace function')
  const given = await Promise.all(files.map((f) => Bun.file(f).text()))
  // the functions the given files replace, as the migrations leave them: put back before every other variant
  const replaced = [...new Set(given.flatMap((sql) => [...sql.matchAll(/create or replace function (\w+)\(/g)].map((m) => m[1]!)))]
  const reset = replaced
    // a function no migration defines yet (a variant's new helper) has nothing to put back: the
    // other variants do not call it
    .filter((name) => name !== 'work_nodes_inserted' && migrations.some((m) => m.sql.includes(`function ${name}(`)))
    .map((name) => of(lastMigration(name).sql, name))
    .join('\n')
  const asMigrated = `work_nodes_inserted of ${current.name}`
  const variants: Record<string, string> = { [asMigrated]: `${of(current.sql)}\n${reset}` }
  files.forEach((f, i) => {
    variants[f] = `${variants[asMigrated]}\n${given[i]}`
  })
  let k = 0
  const insert = (tx: Db, type: string, parentId: string | null) =>
    tx.query(
      `insert into nodes (project_id, id, type, parent_id, data, created_at) values ('ww', $1, $2, $3, '{"label":"x","iteration":"Later"}', now())`,
      [`${type}-x${k++}`, type, parentId],
    )
  const names = ['goal', ...Object.keys(variants)]
  const times: Record<string, number[]> = {}
  for (let r = 0; r < ROUNDS; r++)
    for (const v of r % 2 ? [...names].reverse() : names) {
      if (v !== 'goal') await db.exec(variants[v]!)
      const [kind, parent] = v === 'goal' ? ['goal', null] : ['job', approach]
      ;(times[v] ??= []).push(
        PG_URL
          ? await db.tx(async (tx) => {
              await tx.exec(timedInBackend({ label: 'x', iteration: 'Later' }))
              await tx.query('select pg_temp.insert_ms(5, $1, $2)', [kind, parent])
              return (await tx.query<{ ms: number }>('select pg_temp.insert_ms($1, $2, $3) as ms', [SAMPLES, kind, parent]))[0]!.ms
            })
          : await cpuMsRolledBack(db, (tx) => insert(tx, kind!, parent), { samples: SAMPLES, warmup: 5, before: workLock('ww') }),
      )
    }
  await db.exec(variants[asMigrated]!)
  console.log(
    `${PG_URL ? 'PostgreSQL, wall ms in the backend' : 'PGlite CPU ms'} of one insert, beside ${JOBS} jobs, ${ROUNDS} rounds of ${SAMPLES}\n\n| insert | ms (median of the rounds' medians) | rounds |\n|---|---|---|`,
  )
  for (const v of names) console.log(`| ${v} | ${median(times[v]!).toFixed(3)} | ${times[v]!.map((x) => x.toFixed(3)).join(' ')} |`)
} finally {
  await s.close()
}
