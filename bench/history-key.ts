// The reads of `changes` on its two layouts (issue 51, 3; migration 0040): before 0040 a key on
// (id) and the index changes_project (project_id, id desc) beside changes_target; since 0040 the
// key (project_id, id) in place of both. On one database of CHANGES rows (a big project with most
// of them over 10,000 nodes, and 30 small projects), each read of sql/history as the app sends
// it (a prepared statement on its generic plan): its plan (`explain`) and its median time over
// REPEAT runs, on the layout as migrated and on the layout of before 0040, put back, in turns; and
// the prune (sql/history/prune.sql, in a transaction rolled back) on both.
//
//   bun bench/history-key.ts                      (PGlite)
//   BENCH_DATABASE_URL=postgres://… bun bench/history-key.ts
//
// CHANGES (300,000), REPEAT (200).

import getManySql from '../sql/history/get-many.sql' with { type: 'text' }
import latestSql from '../sql/history/latest-of-targets.sql' with { type: 'text' }
import listSql from '../sql/history/list.sql' with { type: 'text' }
import listByTargetSql from '../sql/history/list-by-target.sql' with { type: 'text' }
import pruneSql from '../sql/history/prune.sql' with { type: 'text' }
import { startBenchServer } from './lib/app'
import { median } from './lib/sql-cpu'

const CHANGES = Number(process.env.CHANGES ?? 300_000)
const REPEAT = Number(process.env.REPEAT ?? 200)

const s = await startBenchServer(process.env.BENCH_DATABASE_URL)
const db = s.deps.db
const small = 30
const perSmall = 1_000
const big = CHANGES - small * perSmall
try {
  // the rows in the order of their ids and times (one a second, the newest now), the small projects'
  // interleaved with the big one's in chunks
  let n = 0
  const insert = async (project: string, rows: number, targets: number) => {
    await db.query(
      `insert into changes (project_id, at, user_name, via, request_id, action, target_kind, target_id, target_type, before, after, fields)
      select $1, now() - make_interval(secs => $4::int - i), 'bench', 'api', 'bulk-' || (i / 100), 'update', 'node', 'goal-' || (i % $3::int), 'goal',
        jsonb_build_object('parentId', null, 'data', jsonb_build_object('label', 'b' || i)),
        jsonb_build_object('parentId', null, 'data', jsonb_build_object('label', 'a' || i)), '["label"]'::jsonb
      from generate_series($2::int, $2::int + $5::int - 1) as i`,
      [project, n, targets, CHANGES, rows],
    )
    n += rows
  }
  const chunk = 20_000
  for (let done = 0; done < big; done += chunk) {
    await insert('big', Math.min(chunk, big - done), 10_000)
    await insert(`small-${Math.floor(done / chunk) % small}`, perSmall / 2, 50)
  }
  for (let k = 0; k < small; k++) await insert(`small-${k}`, perSmall / 2, 50)
  await db.exec('analyze changes')
  const ids = (
    await db.query<{ id: string }>(
      `select id::text as id from changes where project_id = 'big' order by changes.id desc limit 200 offset 5000`,
    )
  ).map((r) => r.id)
  const nothing = [null, null, null, null, null, null]
  const reads: [string, string, unknown[]][] = [
    ['GET /history, first page (big project)', listSql, ['big', ...nothing, null, null, 50]],
    ['GET /history, a page 5,000 deep (big project)', listSql, ['big', ...nothing, ids[0], null, 50]],
    ['GET /history, first page (small project)', listSql, ['small-3', ...nothing, null, null, 50]],
    ["a node's history (big project)", listByTargetSql, ['big', 'goal-17', ...nothing, null, null, 50]],
    ['changes by id (get-many, 200)', getManySql, ['big', ids]],
    ['latest of targets', latestSql, ['big', ['goal-17', 'goal-18'], 20]],
  ]
  const before0040 =
    'alter table changes drop constraint changes_pkey, add primary key (id); create index changes_project on changes (project_id, id desc); analyze changes'
  const since0040 =
    'alter table changes drop constraint changes_pkey, add primary key (project_id, id); drop index changes_project; analyze changes'
  // each layout twice, in turns (the first round warms the process)
  const layouts: [string, string][] = [
    ['since 0040: key (project_id, id)', ''],
    ['before 0040: key (id) and changes_project', before0040],
    ['since 0040 again', since0040],
    ['before 0040 again', before0040],
  ]
  for (const [layout, setup] of layouts) {
    if (setup) await db.exec(setup)
    console.log(`\n## ${layout}\n`)
    for (const [name, sql, params] of reads) {
      const text = `explain ${sql.replace(/^--.*\n/gm, '')}`
      const plan = await db.tx(async (tx) => {
        await tx.exec('set local plan_cache_mode = force_generic_plan')
        return (await tx.query<Record<string, string>>(text, params)).map((r) => Object.values(r)[0]).join('\n')
      })
      for (let i = 0; i < 10; i++) await db.query(sql, params)
      const ms: number[] = []
      for (let i = 0; i < REPEAT; i++) {
        const t = performance.now()
        await db.query(sql, params)
        ms.push(performance.now() - t)
      }
      console.log(`### ${name}: ${median(ms).toFixed(3)} ms (median of ${REPEAT})\n\n${plan}\n`)
    }
    // the prune of the oldest third of the changes, rolled back
    const cutAt = (
      await db.query<{ at: string }>(`select at::text from changes where project_id = 'big' order by id limit 1 offset $1`, [
        Math.floor(big / 3),
      ])
    )[0]!.at
    const ms: number[] = []
    let pruned = 0
    for (let i = 0; i < 3; i++) {
      const t = performance.now()
      await db
        .tx(async (tx) => {
          pruned = (await tx.query<{ count: number }>(pruneSql, [cutAt]))[0]!.count
          throw new Error('rollback')
        })
        .catch(() => {})
      ms.push(performance.now() - t)
    }
    console.log(`### prune of ${pruned} changes: ${median(ms).toFixed(1)} ms (median of 3, rolled back)\n`)
  }
} finally {
  await s.close()
}
