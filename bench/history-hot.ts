// History's reads on a hot node (sql/history/list-by-target.sql, list.sql, has-changes.sql): a
// project of CHANGES changes (70,000) of which HOT (20,000) are one node's, most of them recent
// (the node got busy: added after the first 40% of the project's changes, all other nodes', it
// holds two in three of the rest), beside 10 small projects of 1,000. postgres.js and the PGlite runner
// prepare every statement by name, so after five executions the server may keep a statement's
// generic plan (plan_cache_mode auto), and every later call pays that plan.
//
// Part 1, from outside: the p50 of REPEAT calls over HTTP of each read (all of them counted from
// the first: the generic plan, once chosen, is what a long-lived process pays): the node's history
// and the project's, their first page and a page 10,000 changes deep (by the `next` cursors),
// and a stale write of the hot node (an `update` with an older ifRev: has-changes.sql, then
// latest-of-targets.sql for the 409). Part 2: each statement's plan with EXPLAIN (ANALYZE, BUFFERS)
// under plan_cache_mode force_generic_plan and force_custom_plan (a statement prepared by name and
// run with `explain execute`, in a transaction rolled back), and what plan_cache_mode auto chose
// after twelve executions. Part 3: those of the statements that differ, alone, as BASE
// (dd0b052, the commit before they were rewritten; `git show`) and this checkout have them, by
// turns in one run, each run in a transaction that sets plan_cache_mode (auto, then each forced):
// the median of REPEAT_SQL runs of each, and their ratio.
//
//   bun bench/history-hot.ts                                                   (PGlite)
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/history-hot.ts
//
// CHANGES (70,000), HOT (20,000), REPEAT (100), REPEAT_SQL (30), BASE (dd0b052); PLANS=0 leaves out part 2,
// BASE=none part 3.

import getManySql from '../sql/history/get-many.sql' with { type: 'text' }
import hasChangesSql from '../sql/history/has-changes.sql' with { type: 'text' }
import laterSql from '../sql/history/later.sql' with { type: 'text' }
import latestSql from '../sql/history/latest-of-targets.sql' with { type: 'text' }
import listSql from '../sql/history/list.sql' with { type: 'text' }
import listByTargetSql from '../sql/history/list-by-target.sql' with { type: 'text' }
import type { Db } from '../src/db'
import { startBenchServer } from './lib/app'
import { median } from './lib/sql-cpu'
import { sqlLiteral } from './lib/sql-literal'

const CHANGES = Number(process.env.CHANGES ?? 70_000)
const HOT = Number(process.env.HOT ?? 20_000)
const REPEAT = Number(process.env.REPEAT ?? 100)
const PLANS = process.env.PLANS !== '0'
const REPEAT_SQL = Number(process.env.REPEAT_SQL ?? 30)
/** the commit whose statements part 3 compares with this checkout's (none: leave part 3 out) */
const BASE = process.env.BASE ?? 'dd0b052'
const baseText = (file: string) => {
  const r = Bun.spawnSync(['git', 'show', `${BASE}:sql/history/${file}`], { cwd: import.meta.dir, stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`git show ${BASE}:sql/history/${file}: ${r.stderr.toString()}`)
  return r.stdout.toString()
}
const PG = process.env.BENCH_DATABASE_URL

/** Run `fn` on one connection in a transaction that is rolled back; its result. */
async function rolledBack<T>(on: Db, fn: (tx: Db) => Promise<T>): Promise<T> {
  let out: T | undefined
  await on
    .tx(async (tx) => {
      out = await fn(tx)
      throw new Error('rollback')
    })
    .catch((e: Error) => {
      if (e.message !== 'rollback') throw e
    })
  return out as T
}

const bare = (text: string) => text.replace(/^--.*$/gm, '')
const values = (params: unknown[]) => params.map(sqlLiteral).join(', ')

/** EXPLAIN (ANALYZE, BUFFERS) of the statement prepared by name, under this plan_cache_mode */
const explain = (on: Db, text: string, params: unknown[], mode: string) =>
  rolledBack(on, async (tx) => {
    await tx.exec(`prepare hot_plan as ${bare(text)}`)
    await tx.exec(`set local plan_cache_mode = ${mode}`)
    const rows = await tx.query<Record<string, string>>(`explain (analyze, buffers) execute hot_plan(${values(params)})`)
    await tx.exec('deallocate hot_plan')
    return rows.map((r) => Object.values(r)[0]).join('\n')
  })

/** the plan cache's own choice (plan_cache_mode auto): twelve executions, then its counts */
const planCache = (on: Db, text: string, params: unknown[]) =>
  rolledBack(on, async (tx) => {
    await tx.exec(`prepare hot_cache as ${bare(text)}`)
    for (let i = 0; i < 12; i++) await tx.exec(`execute hot_cache(${values(params)})`)
    const [c] = await tx.query<{ generic_plans: number; custom_plans: number }>(
      `select generic_plans, custom_plans from pg_prepared_statements where name = 'hot_cache'`,
    )
    await tx.exec('deallocate hot_cache')
    return `${c!.generic_plans} generic, ${c!.custom_plans} custom`
  })

const s = await startBenchServer(PG)
const db = s.deps.db
const headers = { authorization: `Bearer ${s.ownerKey}`, 'content-type': 'application/json' }
async function call(method: string, path: string, body?: unknown, expect = 200) {
  const res = await fetch(s.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const json = (await res.json()) as any
  if (res.status !== expect) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`)
  return json
}

try {
  await call('POST', '/api/v1/mutate', { action: 'addProject', project: { name: 'Hot', id: 'hot' } })
  // the changes in the order of their ids and times (one a second, the newest now)
  const t0 = performance.now()
  const fill = (project: string, from: number, count: number, target: string) =>
    db.query(
      `insert into changes (project_id, at, user_name, via, request_id, action, target_kind, target_id, target_type, before, after, fields)
      select $1, now() - make_interval(secs => $4::int - i), 'bench', 'api', 'bulk-' || (i / 100), 'update', 'node', ${target}, 'goal',
        jsonb_build_object('parentId', null, 'data', jsonb_build_object('label', 'b' || i)),
        jsonb_build_object('parentId', null, 'data', jsonb_build_object('label', 'a' || i)), '["label"]'::jsonb
      from generate_series($2::int, $2::int + $3::int - 1) as i`,
      [project, from, count, CHANGES + 20_000],
    )
  // the other nodes: 2,000 of them; the hot node: two in three of the later changes
  const other = `'goal-' || (10 + i % 2000)`
  const cold = CHANGES - Math.round(HOT * 1.5)
  for (let k = 0; k < 10; k++) await fill(`small-${k}`, k * 1000, 1000, `'goal-' || (i % 50)`)
  for (let done = 0; done < cold; done += 10_000) await fill('hot', 10_000 + done, Math.min(10_000, cold - done), other)
  // the hot node, added (and changed, so that its first rev is an older one) after the others' changes
  const added = await call('POST', '/api/v1/mutate', { action: 'add', projectId: 'hot', node: { type: 'goal', data: { label: 'hot' } } })
  const hotId: string = added.node.id
  const oldRev: string = added.node.rev
  await call('POST', '/api/v1/mutate', { action: 'update', projectId: 'hot', nodeId: hotId, data: { label: 'hot, again' } })
  await fill('hot', 10_000 + cold, CHANGES - cold, `case when i % 3 = 0 then ${other} else ${sqlLiteral(hotId)} end`)
  await db.exec('analyze changes')
  const count = async (where: string, params: unknown[]) =>
    Number((await db.query<{ n: string }>(`select count(*)::text as n from changes where ${where}`, params))[0]!.n)
  const inProject = await count(`project_id = 'hot'`, [])
  const ofHot = await count(`project_id = 'hot' and target_id = $1`, [hotId])
  console.log(
    `${PG ? 'PostgreSQL' : 'PGlite'}: project hot ${inProject.toLocaleString('en')} changes, node ${hotId} ${ofHot.toLocaleString('en')}, loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
  )

  // the cursors of pages 10,000 changes deep: 50 pages of 200
  const deep = async (query: string) => {
    let after = ''
    for (let i = 0; i < 50; i++) after = (await call('GET', `/api/v1/history?${query}&limit=200${after && `&after=${after}`}`)).next
    return after
  }
  const nodeQuery = `projectId=hot&nodeId=${encodeURIComponent(hotId)}`
  const nodeDeep = await deep(nodeQuery)
  const projectDeep = await deep('projectId=hot')
  const nodeSecond = (await call('GET', `/api/v1/history?${nodeQuery}`)).next
  const projectSecond = (await call('GET', '/api/v1/history?projectId=hot')).next

  // part 1: the reads over HTTP
  const stale = { action: 'update', projectId: 'hot', nodeId: hotId, ifRev: oldRev, data: { label: 'stale' } }
  const reads: [string, () => Promise<unknown>][] = [
    ["a node's history, first page", () => call('GET', `/api/v1/history?${nodeQuery}`)],
    ["a node's history, second page", () => call('GET', `/api/v1/history?${nodeQuery}&after=${nodeSecond}`)],
    ["a node's history, 10,000 deep", () => call('GET', `/api/v1/history?${nodeQuery}&after=${nodeDeep}`)],
    ["the project's history, first page", () => call('GET', '/api/v1/history?projectId=hot')],
    ["the project's history, second page", () => call('GET', `/api/v1/history?projectId=hot&after=${projectSecond}`)],
    ["the project's history, 10,000 deep", () => call('GET', `/api/v1/history?projectId=hot&after=${projectDeep}`)],
    ['a stale write of the node (409: has-changes, latest-of-targets)', () => call('POST', '/api/v1/mutate', stale, 409)],
  ]
  console.log(`| read over HTTP | p50 of ${REPEAT} calls | p90 |\n|---|---|---|`)
  for (const [name, run] of reads) {
    const ms: number[] = []
    for (let i = 0; i < REPEAT; i++) {
      const t = performance.now()
      await run()
      ms.push(performance.now() - t)
    }
    const p90 = [...ms].sort((a, b) => a - b)[Math.floor(ms.length * 0.9)]!
    console.log(`| ${name} | ${median(ms).toFixed(2)} ms | ${p90.toFixed(2)} ms |`)
  }

  // the statements as GET /history and the stale write above ran them
  const below = (cursor: string) => cursor.split('.')[0]!
  const snap = nodeDeep.slice(nodeDeep.indexOf('.') + 1)
  const f = [null, null, null, null, null, null]
  const ids = (await db.query<{ id: string }>(`select id::text as id from changes where project_id = 'hot' order by id desc limit 20`)).map(
    (r) => Number(r.id),
  )
  const statements: [string, string, string, unknown[]][] = [
    ['list-by-target.sql, first page', 'list-by-target.sql', listByTargetSql, ['hot', hotId, ...f, null, null, 50]],
    ['list-by-target.sql, 10,000 deep', 'list-by-target.sql', listByTargetSql, ['hot', hotId, ...f, below(nodeDeep), snap, 50]],
    ['list.sql, first page', 'list.sql', listSql, ['hot', ...f, null, null, 50]],
    ['list.sql, 10,000 deep', 'list.sql', listSql, ['hot', ...f, below(projectDeep), snap, 50]],
    ['has-changes.sql', 'has-changes.sql', hasChangesSql, ['hot', 'node', hotId]],
    ['latest-of-targets.sql', 'latest-of-targets.sql', latestSql, ['hot', [hotId], 500]],
    ['later.sql (after the 100th newest)', 'later.sql', laterSql, ['hot', [hotId], ids[19]! - 100]],
    ['get-many.sql (20 ids)', 'get-many.sql', getManySql, ['hot', ids]],
  ]

  // part 2: the plans
  if (PLANS)
    for (const [name, , text, params] of statements) {
      console.log(`\n### ${name}: plan cache (auto) after 12 runs: ${await planCache(db, text, params)}`)
      for (const mode of ['force_generic_plan', 'force_custom_plan'])
        console.log(`\n${mode}:\n\n${(await explain(db, text, params, mode)).replace(/^/gm, '    ')}`)
    }

  // part 3: each statement of BASE and of this checkout, by turns in one run, under each plan_cache_mode
  if (BASE !== 'none') {
    console.log(`\n| statement | plan_cache_mode | ${BASE} (median of ${REPEAT_SQL}) | this checkout | ratio |\n|---|---|---|---|---|`)
    for (const [name, file, text, params] of statements) {
      const old = baseText(file)
      if (old === text) continue
      for (const mode of ['auto', 'force_generic_plan', 'force_custom_plan']) {
        const ms: Record<'old' | 'new', number[]> = { old: [], new: [] }
        for (let i = 0; i < REPEAT_SQL; i++)
          for (const side of (i % 2 ? ['new', 'old'] : ['old', 'new']) as ('old' | 'new')[])
            await db.tx(async (tx) => {
              await tx.exec(`set local plan_cache_mode = ${mode}`)
              const t = performance.now()
              await tx.query(side === 'old' ? old : text, params)
              ms[side].push(performance.now() - t)
            })
        const [o, n] = [median(ms.old), median(ms.new)]
        console.log(`| ${name} | ${mode} | ${o.toFixed(3)} ms | ${n.toFixed(3)} ms | ${(n / o).toFixed(3)}× |`)
      }
    }
  }
} finally {
  await s.close()
}
