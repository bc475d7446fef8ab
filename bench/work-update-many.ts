// The statements that update many nodes at once, with the work state's update trigger as migration
// 0044 made it (a row trigger with a WHEN) and as it was before (0027's statement trigger), in
// turns on one database (issue 51, 3, the twelfth pass): an iteration's rename moving every job
// and task of it (sql/nodes/move-iteration.sql) and the classifier's kinds for many tasks
// (sql/nodes/set-classified-many.sql), each sample rolled back, timed by this process's CPU (PGlite)
// or the database backends' (not measured here: run on PGlite).
//
//   bun bench/work-update-many.ts [--jobs 200] [--tasks 100] [--rounds 6] [--samples 20]

import moveIterationSql from '../sql/nodes/move-iteration.sql' with { type: 'text' }
import setClassifiedManySql from '../sql/nodes/set-classified-many.sql' with { type: 'text' }
import { startBenchServer } from './lib/app'
import { cpuMsRolledBack, definition, median, migration, mutate, workLock } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const JOBS = Number(opt('jobs', '200'))
const TASKS = Number(opt('tasks', '100'))
const ROUNDS = Number(opt('rounds', '6'))
const SAMPLES = Number(opt('samples', '20'))

const s = await startBenchServer()
const call = mutate(s)
await call({ action: 'addProject', project: { id: 'wm', name: 'wm' } })
await call({ action: 'addIteration', projectId: 'wm', iteration: { name: 'Now' } })
const add = async (node: unknown) => (await call({ action: 'add', projectId: 'wm', node })).node!.id as string
const goal = await add({ type: 'goal', data: { label: 'g' } })
const need = await add({ type: 'need', parentId: goal, data: { label: 'n' } })
const approach = await add({ type: 'approach', parentId: need, data: { label: 'a' } })
for (let i = 0; i < JOBS; i += 100)
  await call({
    action: 'batch',
    projectId: 'wm',
    mutations: Array.from({ length: Math.min(100, JOBS - i) }, (_, k) => ({
      action: 'add',
      node: { type: 'job', parentId: approach, data: { label: `j${i + k}`, iteration: 'Now' } },
    })),
  })
for (let i = 0; i < TASKS; i++) await add({ type: 'task', data: { label: `t${i}`, iteration: 'Now' } })
const db = s.deps.db
const taskRows = await db.query<{ id: string; data: Record<string, unknown> }>(
  `select id, data from nodes where project_id = 'wm' and type = 'task'`,
)
// the classifier's answer for every task: do-it, so each becomes a work item
const classified = JSON.stringify(taskRows.map((r) => ({ project_id: 'wm', id: r.id, data: { ...r.data, kind: 'do-it' } })))

// 0027's statement trigger, and 0044 (the migration again: it replaces the trigger and its function)
const before = `drop trigger work_nodes_update on nodes;
${definition('0027-work-triggers-lighter.sql', 'work_nodes_updated')}
create trigger work_nodes_update after update on nodes
referencing old table as old_nodes new table as new_nodes for each statement execute function work_nodes_updated();`
const after = migration('0044-work-update-when.sql')

const ops = {
  [`rename: ${JOBS} jobs and ${TASKS} tasks moved`]: (tx: typeof db) => tx.query(moveIterationSql, ['wm', 'Now', 'Next']),
  [`classify: ${TASKS} tasks made do-it`]: (tx: typeof db) => tx.query(setClassifiedManySql, [classified]),
}
const ms: Record<string, number[]> = {}
let state: 'after' | 'before' = 'after'
for (let r = 0; r < ROUNDS; r++)
  for (const v of r % 2 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
    if (v !== state) await db.exec(v === 'before' ? before : after)
    state = v
    for (const [name, op] of Object.entries(ops))
      (ms[`${name}, ${v === 'after' ? '0044 (row trigger)' : 'before 0044 (statement trigger)'}`] ??= []).push(
        await cpuMsRolledBack(db, op, { samples: SAMPLES, warmup: 3, before: workLock('wm') }),
      )
  }
await s.close()
console.log(`| statement, trigger | CPU ms (median of ${ROUNDS} rounds' medians of ${SAMPLES}) |\n|---|---|`)
for (const [name, xs] of Object.entries(ms)) console.log(`| ${name} | ${median(xs).toFixed(2)} |`)
