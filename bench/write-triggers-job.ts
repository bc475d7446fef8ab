// Where a job's add spends its SQL (issue 51, 3), in one PGlite process: a job's insert into an
// approach that holds --jobs jobs, beside a goal's insert (the yardstick: no work trigger), with the
// work-state triggers whole and in parts, each sample in a transaction rolled back (after the
// project's work lock, as the app takes it) and timed by this process's CPU time (PGlite runs in
// it, synchronously), the variants taking turns round by round.
//
//   bun bench/write-triggers-job.ts [--jobs 3000] [--rounds 6] [--samples 100] [--analyze]
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/write-triggers-job.ts
//
// Rows: the goal; the job under the functions as migration 0030 left them and under those of
// 0033; the job with the work-state insert trigger off (its node and rev only); the job without
// the count triggers of work_items (0026); and on PGlite, on a job's node inserted without its
// trigger, work_refresh alone and work_jobs_added alone (which returns false, having written
// nothing, when the approach holds no open job: `--jobs 0`, the first job of an approach).
// The schema is this checkout's: since migration 0041 it has no work_items_approach and
// work_items_goal, which the functions of 0030 and 0033 probe, so their rows measure them without
// those indexes (a job's insert as migrated: bun bench/job-insert-variants.ts).

import type { Db } from '../src/db'
import { startBenchServer } from './lib/app'
import { benchProject, cpuMsRolledBack, definition, fillApproach, median, migration, timedInBackend, workLock } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const JOBS = Number(opt('jobs', '3000'))
const ROUNDS = Number(opt('rounds', '6'))
const SAMPLES = Number(opt('samples', '100'))

// on PostgreSQL the SQL runs in the server's backend, not in this process: there each sample is
// timed inside the backend (clock_timestamp around the insert, in a subtransaction rolled back),
// a wall time, and only the rows that insert a node
const PG_URL = process.env.BENCH_DATABASE_URL

const s = await startBenchServer(PG_URL)
try {
  const { call, approach } = await benchProject(s)
  await fillApproach(call, approach, JOBS)
  const db: Db = s.deps.db
  if (args.includes('--analyze')) await db.exec('analyze')

  let k = 0
  const insert = (tx: Db, type: string, parentId: string | null) =>
    tx.query<{ id: string }>(
      `insert into nodes (project_id, id, type, parent_id, data, created_at) values ('ww', $1, $2, $3, '{"label":"x"}', now()) returning id`,
      [`${type}-x${k++}`, type, parentId],
    )
  const trigger = (table: string, name: string, on: boolean) => db.exec(`alter table ${table} ${on ? 'enable' : 'disable'} trigger ${name}`)
  // the functions as migration 0030 left them (0027's insert trigger), and as 0033 makes them
  const before = [
    definition('0030-work-writes-linear.sql', 'work_refresh'),
    definition('0030-work-writes-linear.sql', 'work_after_change'),
    definition('0027-work-triggers-lighter.sql', 'work_nodes_inserted'),
  ].join('\n')
  const after = migration('0033-job-add-lighter.sql')
  const job = (tx: Db) => insert(tx, 'job', approach)
  const variant =
    (functions: string, off: [string, string][] = []) =>
    async () => {
      await db.exec(functions)
      for (const [table, name] of [
        ['nodes', 'work_nodes_insert'],
        ['work_items', 'work_counts_insert'],
        ['work_items', 'work_counts_update'],
      ] as const)
        await trigger(table, name, !off.some(([t, n]) => t === table && n === name))
    }
  const variants: Record<
    string,
    { set: () => Promise<unknown>; run: (tx: Db) => Promise<unknown>; before?: (tx: Db) => Promise<unknown> }
  > = {
    goal: { set: variant(after), run: (tx) => insert(tx, 'goal', null) },
    'job, functions of 0030': { set: variant(before), run: job },
    'job, functions of 0033': { set: variant(after), run: job },
    'job, work_nodes_insert off': { set: variant(after, [['nodes', 'work_nodes_insert']]), run: job },
    'job (0033), count triggers off': {
      set: variant(after, [
        ['work_items', 'work_counts_insert'],
        ['work_items', 'work_counts_update'],
      ]),
      run: job,
    },
    // the parts of 0033's path, each timed alone on a job's node inserted without the trigger, under
    // the settings work_jobs_added runs them with (generic plans, no sequential scans)
    'work_refresh alone': {
      set: variant(after, [['nodes', 'work_nodes_insert']]),
      before: async (tx) => {
        await workLock('ww')(tx)
        await tx.query(`select set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true)`)
        await tx.query(`select set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)`)
        await insert(tx, 'job', approach)
      },
      run: (tx) => tx.query(`select work_refresh('ww', array[$1])`, [`job-x${k - 1}`]),
    },
    'work_jobs_added alone': {
      set: variant(after, [['nodes', 'work_nodes_insert']]),
      before: async (tx) => {
        await workLock('ww')(tx)
        await insert(tx, 'job', approach)
      },
      run: (tx) => tx.query(`select work_jobs_added('ww', array[$1])`, [`job-x${k - 1}`]),
    },
  }
  const names = Object.keys(variants).filter((v) => !PG_URL || !v.includes('alone'))
  const inBackend = async (v: string) =>
    db.tx(async (tx) => {
      await tx.exec(timedInBackend({ label: 'x' }))
      const [kind, parent] = v === 'goal' ? ['goal', null] : ['job', approach]
      await tx.query('select pg_temp.insert_ms(5, $1, $2)', [kind, parent])
      return (await tx.query<{ ms: number }>('select pg_temp.insert_ms($1, $2, $3) as ms', [SAMPLES, kind, parent]))[0]!.ms
    })
  const times: Record<string, number[]> = {}
  for (let r = 0; r < ROUNDS; r++)
    for (const v of r % 2 ? [...names].reverse() : names) {
      await variants[v]!.set()
      ;(times[v] ??= []).push(
        PG_URL
          ? await inBackend(v)
          : await cpuMsRolledBack(db, variants[v]!.run, { samples: SAMPLES, warmup: 5, before: variants[v]!.before ?? workLock('ww') }),
      )
    }
  await variant(after)()
  console.log(
    `${PG_URL ? 'PostgreSQL, wall ms in the backend' : 'PGlite, CPU ms'}, beside ${JOBS} jobs, ${ROUNDS} rounds of ${SAMPLES}\n\n| SQL | ms (p50 of the rounds' p50s) | rounds |\n|---|---|---|`,
  )
  for (const v of names) console.log(`| ${v} | ${median(times[v]!).toFixed(3)} | ${times[v]!.map((x) => x.toFixed(2)).join(' ')} |`)
} finally {
  await s.close()
}
