// The SQL of a job's add and of a 100-add batch with the trigger functions before migration 0030
// and after it, alternating in one process on one PGlite database (issue 51, 3), beside an approach
// that already holds --jobs jobs. Each sample is timed by the CPU time of this process (PGlite runs
// in it, synchronously), which a loaded machine disturbs far less than the wall clock; each runs in
// a transaction that is rolled back, so every sample sees the same project.
//
//   bun bench/write-triggers-0030.ts [--jobs 3000] [--rounds 6] [--samples 40] [--analyze]
//
// Ops: a goal's insert (no work trigger either way: the yardstick), a job's insert, and a batch's
// SQL: 100 jobs inserted with the work state deferred (migration 0023), their 100 changes and
// events (bench/lib/one-statement-saving.ts `insertWithChangesSql`), the work state flushed, and the deferred triggers
// run as at a commit (`set constraints all immediate`: the revision's, migrations 0013/0019). --analyze runs ANALYZE
// first (the maintenance loop's, src/maintenance); without it the planner has no statistics, as
// on PGlite before that loop's first pass.
//
// --fk compares instead work_items with its foreign key to projects (before migration 0032) and
// without it (0032), the functions of 0030 both times: `bun bench/write-triggers-0030.ts --fk --jobs 0`.

import type { Db } from '../src/db'
import { startBenchServer } from './lib/app'
import { insertWithChangesSql as changesSql } from './lib/one-statement-saving'
import { benchProject, cpuMsRolledBack, definition, fillApproach, median, migration, workLock } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const JOBS = Number(opt('jobs', '3000'))
const ROUNDS = Number(opt('rounds', '6'))
const SAMPLES = Number(opt('samples', '40'))
// what 0030 replaces, as it stood before: the functions of 0016, 0026 and 0027
const FK = args.includes('--fk')
// --fk: the key as 0016 made it (not valid: the rows already there are not checked again), and none
const fkBefore = `alter table work_items drop constraint if exists work_items_project_id_fkey;
alter table work_items add constraint work_items_project_id_fkey foreign key (project_id) references projects (id) on delete cascade not valid;`
const fkAfter = 'alter table work_items drop constraint if exists work_items_project_id_fkey'
const before = FK
  ? fkBefore
  : [
      definition('0026-work-counts.sql', 'work_counts_updated'),
      definition('0016-work-state.sql', 'work_refresh'),
      definition('0027-work-triggers-lighter.sql', 'work_after_change'),
    ].join('\n')
const after = FK ? fkAfter : migration('0030-work-writes-linear.sql')

const s = await startBenchServer()
try {
  const { call, approach } = await benchProject(s)
  await fillApproach(call, approach, JOBS)
  const db: Db = s.deps.db
  if (args.includes('--analyze')) await db.exec('analyze')

  let k = 0
  const insert = (tx: Db, type: string, parentId: string | null, n = 1) =>
    tx.query<{ id: string; type: string; data: unknown }>(
      `insert into nodes (project_id, id, type, parent_id, data, created_at)
       select 'ww', $1 || '-' || i, $2, $3, '{"label":"x"}', now() from generate_series(1, $4::integer) i
       returning id, type, data`,
      [`${type}-x${k++}`, type, parentId, n],
    )
  const ops: Record<string, (tx: Db) => Promise<unknown>> = {
    goal: (tx) => insert(tx, 'goal', null),
    job: (tx) => insert(tx, 'job', approach),
    batch: async (tx) => {
      await tx.query(`select set_config('arbor.work_defer', 'on', true)`)
      const made = await insert(tx, 'job', approach, 100)
      await record(tx, made)
      await tx.query(`select work_flush()`)
      await tx.exec(`set constraints all immediate`)
    },
    // the batch's parts: its nodes and work state; its changes, events and revision
    batchNodes: async (tx) => {
      await tx.query(`select set_config('arbor.work_defer', 'on', true)`)
      await insert(tx, 'job', approach, 100)
      await tx.query(`select work_flush()`)
    },
    batchChanges: async (tx) => {
      await record(
        tx,
        Array.from({ length: 100 }, (_, i) => ({ id: `job-c${i}`, type: 'job', data: { label: 'x' } })),
      )
      await tx.exec(`set constraints all immediate`)
    },
  }
  async function record(tx: Db, made: { id: string; type: string; data: unknown }[]) {
    await tx.query(changesSql, [
      'ww',
      'u',
      'u',
      null,
      null,
      'api',
      'bench',
      JSON.stringify(made.map((m) => ({ action: 'add', kind: 'node', id: m.id, type: m.type, before: null, after: m, fields: [] }))),
      JSON.stringify(made.map((m) => ({ type: 'node.created', payload: { node: m } }))),
    ])
  }
  const names = opt('ops', Object.keys(ops).join(',')).split(',')
  const times: Record<string, { before: number[]; after: number[] }> = {}
  const measure = async (side: 'before' | 'after') => {
    await db.exec(side === 'before' ? before : after)
    for (const name of names) {
      const samples = name === 'batch' ? Math.ceil(SAMPLES / 4) : SAMPLES
      // the first three plan the statements
      ;(times[name] ??= { before: [], after: [] })[side].push(
        await cpuMsRolledBack(db, ops[name]!, { samples, warmup: 3, before: workLock('ww') }),
      )
    }
  }
  for (let r = 0; r < ROUNDS; r++)
    for (const side of r % 2 ? (['after', 'before'] as const) : (['before', 'after'] as const)) await measure(side)
  console.log(
    `${JOBS} jobs in the approach, ${args.includes('--analyze') ? 'analyzed' : 'no statistics'}\n\n| SQL | ${FK ? 'with the key (before 0032)' : 'before 0030'} (CPU ms) | ${FK ? 'without (0032)' : '0030'} (CPU ms) | ratio |\n|---|---|---|---|`,
  )
  for (const [name, t] of Object.entries(times))
    console.log(
      `| ${name} | ${median(t.before).toFixed(3)} | ${median(t.after).toFixed(3)} | ${(median(t.after) / median(t.before)).toFixed(2)}× |`,
    )
} finally {
  await s.close()
}
