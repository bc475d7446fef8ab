// The node statements of single writes with the work-state triggers before migration 0027 (the
// functions of 0018, 0023 and 0026) and after it, alternating in one process on one PGlite
// database (issue 51, 3). Each statement is timed by the CPU time of this process (PGlite runs in
// it, synchronously), which a loaded machine disturbs far less than the wall clock.
//
//   bun bench/work-triggers.ts [--rounds 6] [--samples 50] [--ops goal,job,task,label,done,delGoal,delJob,batch]
//
// The project: a goal, a need, an approach with 200 jobs, a second approach with 20 jobs that the
// first blocks, 50 tasks of kind do-it. Each statement runs in a transaction that holds the
// project's work lock (as the app takes it first) and is rolled back, so every sample sees the
// same project. Prints each statement's median CPU time (the median of the rounds' medians)
// before and after, and their ratio.

import type { Db } from '../src/db'
import { startBenchServer } from './lib/app'
import { cpuMsRolledBack, definition, median, migration, mutate, workLock } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const ROUNDS = Number(opt('rounds', '6'))
const SAMPLES = Number(opt('samples', '50'))
const before = [
  definition('0026-work-counts.sql', 'work_nodes_inserted'),
  definition('0023-work-deferred.sql', 'work_nodes_deleted'),
  definition('0023-work-deferred.sql', 'work_nodes_updated'),
  definition('0018-work-blockers.sql', 'work_after_change'),
  definition('0026-work-counts.sql', 'work_counts_add'),
].join('\n')
const after = migration('0027-work-triggers-lighter.sql')

const s = await startBenchServer()
try {
  const call = mutate(s)
  const add = async (type: string, parentId: string | null, data: Record<string, unknown>) =>
    (await call({ action: 'add', projectId: 'ww', node: { type, ...(parentId ? { parentId } : {}), data } })).node!.id
  await call({ action: 'addProject', project: { id: 'ww', name: 'ww' } })
  const goal = await add('goal', null, { label: 'G' })
  const need = await add('need', goal, { label: 'N' })
  const approach = await add('approach', need, { label: 'A' })
  const blocked = await add('approach', need, { label: 'B', blockedBy: [approach] })
  const jobs: string[] = []
  for (let i = 0; i < 200; i++) jobs.push(await add('job', approach, { label: `J${i}` }))
  for (let i = 0; i < 20; i++) await add('job', blocked, { label: `K${i}` })
  for (let i = 0; i < 50; i++) await add('task', null, { label: `T${i}` })
  const db: Db = s.deps.db
  // tasks are added without kind (the classifier sets it): these are work items
  await db.query(`update nodes set data = data || '{"kind":"do-it"}' where project_id = 'ww' and type = 'task'`)

  let k = 0
  const insert = (tx: Db, type: string, parentId: string | null, n = 1) =>
    tx.query(
      `insert into nodes (project_id, id, type, parent_id, data, created_at)
       select 'ww', $1 || '-' || i, $2, $3, '{"label":"x"}', now() from generate_series(1, $4::integer) i`,
      [`${type}-x${k++}`, type, parentId, n],
    )
  const ops: Record<string, (tx: Db) => Promise<unknown>> = {
    goal: (tx) => insert(tx, 'goal', null),
    job: (tx) => insert(tx, 'job', approach),
    task: (tx) => insert(tx, 'task', null),
    label: (tx) =>
      tx.query(
        `update nodes set data = data || jsonb_build_object('label', $2::text), updated_at = now() where project_id = 'ww' and id = $1`,
        [approach, `L${k++}`],
      ),
    done: (tx) =>
      tx.query(`update nodes set data = data || '{"status":"done"}', updated_at = now() where project_id = 'ww' and id = $1`, [jobs[5]]),
    delGoal: (tx) => tx.query(`delete from nodes where project_id = 'ww' and id = $1`, ['goal-999']),
    delJob: (tx) => tx.query(`delete from nodes where project_id = 'ww' and id = $1`, [jobs[7]]),
    batch: (tx) => insert(tx, 'job', approach, 100),
  }
  // a goal with nothing under it, to delete
  await db.query(`insert into nodes (project_id, id, type, data) values ('ww', $1, 'goal', '{"label":"D"}')`, ['goal-999'])
  const names = opt('ops', Object.keys(ops).join(',')).split(',')
  const times: Record<string, { before: number[]; after: number[] }> = {}
  const measure = async (side: 'before' | 'after') => {
    await db.exec(side === 'before' ? before : after)
    for (const name of names) {
      const samples = name === 'batch' ? Math.ceil(SAMPLES / 10) : SAMPLES
      ;(times[name] ??= { before: [], after: [] })[side].push(await cpuMsRolledBack(db, ops[name]!, { samples, before: workLock('ww') }))
    }
  }
  for (let r = 0; r < ROUNDS; r++)
    for (const side of r % 2 ? (['after', 'before'] as const) : (['before', 'after'] as const)) await measure(side)
  console.log(`| statement | before 0027 (CPU ms) | 0027 (CPU ms) | ratio |\n|---|---|---|---|`)
  for (const [name, t] of Object.entries(times))
    console.log(
      `| ${name} | ${median(t.before).toFixed(3)} | ${median(t.after).toFixed(3)} | ${(median(t.after) / median(t.before)).toFixed(2)}× |`,
    )
} finally {
  await s.close()
}
