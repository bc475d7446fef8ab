// What the statistics of `changes` cost the writes that record them (history.md 7; bench/writes.md,
// "Twelfth pass: history's share in the app"). PGlite runs no autovacuum: the maintenance loop
// (src/maintenance/loop.ts) analyzes a table once 10% of its rows changed, so every change row
// pays a tenth of an ANALYZE of the whole table, a cost the no-history process
// (ARBOR_BENCH_NO_HISTORY) never has. Migration 0046 sets statistics 0 on nine columns no
// statement filters or sorts by.
//
//   bun bench/history-analyze.ts [--rows 20000] [--big]
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/history-analyze.ts
//   bun bench/history-analyze.ts --app [--writes 6000] [--block 200] [--op goal|update]
//   bun bench/history-analyze.ts --js
//   bun bench/history-analyze.ts --plans      (and with BENCH_DATABASE_URL=…)
//   bun bench/history-analyze.ts [--plans] --take-back 0052   (against 0052 taken back, not 0046)
//   bun bench/history-analyze.ts --events [--rows 6000] [--big] [--plans]   (and with BENCH_DATABASE_URL=…)
//
// Without --app: `analyze changes` over --rows changes of a goal's add and update (`--big`: nodes
// with a description, a priority and tags), timed 7 times (the CPU of this process on PGlite, of the
// database's backends on PostgreSQL), on a database as migrated and on one with 0046 taken back
// (statistics -1 again); a write's share is the median ÷ (50 + 10% of the rows), autovacuum's
// threshold. With --app (PGlite): three apps in this process, each on a PGlite of its own: history
// on, history off (config.recordHistory), history on with 0046 taken back; one writer adds goals
// (or updates one goal's label), blocks of --block writes taking turns, after each block the
// maintenance loop's tick (`maintain`) as the 30 s loop runs it; the process's CPU per write of each
// app, the tick's part, and history's share (on ÷ off) with and without 0046. With --js: the
// JavaScript a label update's change costs, each part in a loop (ns a call): the draft (both
// processes build it), the parameters `changeChunks` builds (only with history), the Bind message
// of the statement with the change (17 parameters) and of the events alone (2). With --plans: the
// plans of the reads of changes, custom and generic, with 0046 and without (the same, or the
// difference). With --events, the same for `events` and migration 0048 (statistics 0 on its
// payload): `analyze events` over --rows events of node writes as the outbox writes them, one a
// transaction (`--big`: nodes with a description, a priority and tags), and with --plans the plans
// of the statements of sql/ that read events, with their row estimates.

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import insertEventsSql from '../sql/events/insert-many.sql' with { type: 'text' }
import insertManySql from '../sql/history/insert-many.sql' with { type: 'text' }
import type { Db } from '../src/db'

import { bindExecuteSync } from '../src/db/pglite-prepared'
import { nodeChange, nodeState } from '../src/history/change'
import { oneChangeParams } from '../src/history/record'
import { maintain } from '../src/maintenance/loop'
import { type BenchServer, startBenchServer } from './lib/app'
import { freshDb, labelUpdateDrafts } from './lib/fresh-db'
import { median, mutate } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const PG = process.env.BENCH_DATABASE_URL
/** the columns 0046 sets to statistics 0 */
const SKIPPED = ['before', 'after', 'fields', 'proposal', 'user_name', 'key_id', 'action', 'target_type', 'revert_of']
/** the ten columns the reads use, whose statistics 0052 sets to 10 (a sample of 3,000 rows) */
const SAMPLED = ['project_id', 'id', 'target_id', 'target_kind', 'user_id', 'agent', 'via', 'request_id', 'at', 'txid']
/** --take-back 0052: compare with 0052 taken back (the ten at the default again) instead of 0046 */
const TAKEN_BACK = opt('take-back', '0046')
if (!['0046', '0052'].includes(TAKEN_BACK)) throw new Error('--take-back: 0046 or 0052')
const takeBack = `alter table changes ${(TAKEN_BACK === '0052' ? SAMPLED : SKIPPED).map((c) => `alter column ${c} set statistics -1`).join(', ')}`
const BEFORE = `before ${TAKEN_BACK}`
/** the columns of events 0048 sets to statistics 0 */
const EVENTS_SKIPPED = ['payload']
const takeBackEvents = `alter table events ${EVENTS_SKIPPED.map((c) => `alter column ${c} set statistics -1`).join(', ')}`
const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

/** CPU ms the database's backends have run so far (PostgreSQL), or this process (PGlite) */
async function dbCpuMs(db: Db): Promise<number> {
  if (!PG) return cpuMs()
  const pids = await db.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database()')
  let ns = 0
  for (const { pid } of pids)
    try {
      ns += Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0])
    } catch {}
  return ns / 1e6
}

/**
 * The plans of the statements that read changes (sql/history/*.sql but the prune), custom and
 * generic, on 30,000 analyzed changes of seven projects, with 0046 and without: they must be the same.
 */
async function plans() {
  const read = (f: string) => readFileSync(join(import.meta.dir, '..', 'sql', 'history', `${f}.sql`), 'utf8')
  const statements: [string, string, unknown[]][] = [
    ['list', read('list'), ['p1', null, null, null, null, null, null, null, null, 50]],
    ['list, a requestId', read('list'), ['p1', null, null, null, 'r-3', null, null, null, null, 50]],
    ['list-by-target', read('list-by-target'), ['p1', 'g_5', null, null, null, null, null, null, null, null, 50]],
    ['later', read('later'), ['p1', ['g_5', 'g_7'], 100]],
    ['latest-of-targets', read('latest-of-targets'), ['p1', ['g_5'], 20]],
    ['get-many', read('get-many'), ['p1', [1, 2, 3]]],
    ['has-changes', read('has-changes'), ['p1', 'node', 'g_5']],
  ]
  const seen = new Map<string, string[]>()
  for (const variant of ['as migrated', BEFORE]) {
    const { db, close } = await freshDb(`arbor_hist_analyze_${process.pid}`, PG)
    if (variant === BEFORE) await db.exec(takeBack)
    for (let i = 0; i < 30_000; i += 500) {
      await db.query(insertManySql, [
        `p${(i / 500) % 7}`,
        'u_1',
        'Ann',
        'k_1',
        null,
        'api',
        `r-${i / 500}`,
        JSON.stringify(labelUpdateDrafts(i)),
      ])
    }
    await db.exec('analyze changes')
    // a statement prepared in SQL and explained by EXECUTE goes through the plan cache as the app's
    // prepared statements do (an EXPLAIN of the text with parameters would plan it with their values)
    const literal = (v: unknown): string =>
      v === null ? 'null' : Array.isArray(v) ? `'{${v.join(',')}}'` : typeof v === 'number' ? String(v) : `'${v}'`
    let n = 0
    for (const [label, text, params] of statements)
      for (const mode of ['force_custom_plan', 'force_generic_plan']) {
        const name = `plan_${++n}`
        await db.exec(`set plan_cache_mode = ${mode}; prepare ${name} as ${text}`)
        const plan = (await db.query<Record<string, string>>(`explain (costs off) execute ${name}(${params.map(literal).join(', ')})`))
          .map((r) => Object.values(r)[0])
          .join('\n')
        seen.set(`${label} (${mode})`, [...(seen.get(`${label} (${mode})`) ?? []), plan])
      }
    await close()
  }
  for (const [label, [now, before]] of seen)
    console.log(
      `${label}: ${now === before ? `the same plan: ${now!.replaceAll('\n', ' ').replace(/ +/g, ' ')}` : `differs\n${before}\n-- with ${TAKEN_BACK}:\n${now}`}`,
    )
}

async function analyzeOnly() {
  const rows = Number(opt('rows', '20000'))
  const big = args.includes('--big')
  const desc = 'A longer description of what this node is for, as people write them. '.repeat(4)
  const data = (label: string) => (big ? { label, description: desc + label, priority: 'high', tags: ['a', 'b'] } : { label })
  for (const variant of ['as migrated', BEFORE]) {
    const { db, close } = await freshDb(`arbor_hist_analyze_${process.pid}`, PG)
    if (variant === BEFORE) await db.exec(takeBack)
    let k = 0
    for (let i = 0; i < rows; i += 500) {
      const drafts = Array.from({ length: Math.min(500, rows - i) }, (_, j) => {
        const update = j % 3 === 0
        return {
          action: update ? 'update' : 'add',
          kind: 'node',
          id: `g_${i + j}`,
          type: 'goal',
          before: update ? { parentId: null, data: data(`b${k++}`) } : null,
          after: { parentId: j % 2 ? null : `a_${j}`, data: data(`x${k++}`) },
          fields: update ? ['label'] : ['parentId', 'label'],
        }
      })
      await db.query(insertManySql, ['bench', 'u_1', 'Ann', 'k_1', null, 'api', crypto.randomUUID(), JSON.stringify(drafts)])
    }
    const ms: number[] = []
    for (let r = 0; r < 7; r++) {
      const at = await dbCpuMs(db)
      await db.exec('analyze changes')
      ms.push((await dbCpuMs(db)) - at)
    }
    await close()
    const each = (median(ms) / (50 + 0.1 * rows)) * 1000
    console.log(
      `${PG ? 'postgres' : 'pglite'}, ${rows} changes${big ? ' (larger nodes)' : ''}, ${variant}: analyze ${median(ms).toFixed(1)} ms CPU ` +
        `(${ms.map((x) => x.toFixed(0)).join(' ')}), a write's share ${each.toFixed(1)} µs`,
    )
  }
}

async function inApp() {
  const writes = Number(opt('writes', '6000'))
  const block = Number(opt('block', '200'))
  const op = opt('op', 'goal')
  const targets = ['history', 'no history', 'history, taken back'] as const
  const apps = new Map<(typeof targets)[number], { s: BenchServer; write: () => Promise<unknown> }>()
  for (const t of targets) {
    const s = await startBenchServer()
    ;(s.deps.config as { recordHistory: boolean }).recordHistory = t !== 'no history'
    if (t === 'history, taken back') await s.deps.db.exec(takeBack)
    const call = mutate(s)
    await call({ action: 'addProject', project: { id: 'bench', name: 'bench' } })
    const goal = (await call({ action: 'add', projectId: 'bench', node: { type: 'goal', data: { label: 'g' } } })).node!.id
    let k = 0
    const write =
      op === 'update'
        ? () => call({ action: 'update', projectId: 'bench', nodeId: goal, data: { label: `u${++k}` } })
        : () => call({ action: 'add', projectId: 'bench', node: { type: 'goal', data: { label: `x${++k}` } } })
    apps.set(t, { s, write })
  }
  const cpu = new Map(targets.map((t) => [t, { writes: 0, ms: 0, tick: 0 }]))
  try {
    for (let done = 0, turn = 0; done < writes; done += block, turn++) {
      // the targets' order turns block by block, so each sees the same moments of the machine
      for (let i = 0; i < targets.length; i++) {
        const t = targets[(i + turn) % targets.length]!
        const { s, write } = apps.get(t)!
        const c = cpu.get(t)!
        const at = cpuMs()
        for (let n = 0; n < block; n++) await write()
        const ticked = cpuMs()
        await maintain(s.deps.db)
        c.tick += cpuMs() - ticked
        c.ms += cpuMs() - at
        c.writes += block
      }
    }
  } finally {
    for (const { s } of apps.values()) await s.close()
  }
  const per = (t: (typeof targets)[number]) => cpu.get(t)!.ms / cpu.get(t)!.writes
  for (const t of targets) {
    const c = cpu.get(t)!
    console.log(
      `${t}: ${((c.ms / c.writes) * 1000).toFixed(0)} µs CPU a write, of it the maintenance tick ${((c.tick / c.writes) * 1000).toFixed(1)} µs`,
    )
  }
  console.log(
    `history's share (CPU a write, on ÷ off), ${writes} ${op === 'update' ? 'label updates' : 'goal adds'}: ` +
      `${(per('history') / per('no history')).toFixed(3)}×; ${BEFORE} ${(per('history, taken back') / per('no history')).toFixed(3)}×`,
  )
}

function js() {
  const deps = {
    author: { actor: { userId: 'usr_1', userName: 'Ann', keyId: 'key_1', via: 'api' as const }, requestId: crypto.randomUUID() },
  }
  const node = { id: 'goal-123', type: 'goal' }
  const state = (label: string) => nodeState({ parentId: null, data: { label } })
  const draft = nodeChange('update', node, state('a'), state('b'))
  const one = () => oneChangeParams(deps.author.actor, deps.author.requestId, draft)
  const params = ['bench', ...one().map((x) => (x == null ? null : String(x)))]
  const event = JSON.stringify([
    {
      type: 'node.updated',
      payload: {
        event: 'node.updated',
        project_id: 'bench',
        timestamp: new Date().toISOString(),
        node: { ...node, rev: '12', parentId: null, data: { label: 'b' } },
      },
    },
  ])
  let k = 0
  const parts: [string, () => unknown][] = [
    ["the draft (nodeChange: both processes' work)", () => nodeChange('update', node, state('a'), state(`x${k++}`))],
    ['its parameters (oneChangeParams: history only)', one],
    ['Bind with the change (17 parameters)', () => bindExecuteSync('arbor_1', [...params, event])],
    ['Bind of the events alone (2 parameters)', () => bindExecuteSync('arbor_1', ['bench', event])],
  ]
  const n = 200_000
  for (const [label, f] of parts) {
    for (let i = 0; i < 20_000; i++) f()
    const at = cpuMs()
    for (let i = 0; i < n; i++) f()
    console.log(`${label}: ${(((cpuMs() - at) / n) * 1e6).toFixed(0)} ns`)
  }
}

/**
 * `rows` events of `projects` projects as the outbox writes a write's event (insert-many.sql, one a
 * transaction): node.added, node.updated and now and then node.claimed, their payloads as api.md's.
 */
async function fillEvents(db: Db, rows: number, projects: number, big: boolean) {
  const desc = 'A longer description of what this node is for, as people write them. '.repeat(4)
  const data = (label: string) => (big ? { label, description: desc + label, priority: 'high', tags: ['a', 'b'] } : { label })
  await db.exec(`insert into users (id, name) values ('u_1', 'Ann')`)
  for (let p = 0; p < projects; p++) await db.query(`insert into projects (id, name, owner_id) values ($1, $1, 'u_1')`, [`p${p}`])
  const actor = { userId: 'u_1', userName: 'Ann', agent: 'bench-agent', via: 'api' }
  for (let i = 0; i < rows; i++) {
    const project = `p${Math.floor(i / 50) % projects}`
    const id = `g_${i % 3000}`
    const type = i % 17 === 0 ? 'node.claimed' : i % 3 === 0 ? 'node.updated' : 'node.added'
    const subject =
      type === 'node.claimed'
        ? { nodeId: id, agent: 'bench-agent', expiresAt: new Date(Date.now() + 60_000).toISOString() }
        : { node: { id, rev: String(i + 1), type: 'goal', parentId: i % 2 ? null : `a_${i % 40}`, data: data(`x${i}`) } }
    const payload = { event: type, project_id: project, timestamp: new Date(Date.now() + i).toISOString(), ...subject, actor }
    await db.query(insertEventsSql, [project, JSON.stringify([{ type, payload }])])
  }
}

async function analyzeEvents() {
  const rows = Number(opt('rows', '6000'))
  const big = args.includes('--big')
  for (const variant of ['as migrated', 'before 0048']) {
    const { db, close } = await freshDb(`arbor_hist_analyze_${process.pid}`, PG)
    if (variant === 'before 0048') await db.exec(takeBackEvents)
    await fillEvents(db, rows, 7, big)
    const ms: number[] = []
    for (let r = 0; r < 7; r++) {
      const at = await dbCpuMs(db)
      await db.exec('analyze events')
      ms.push((await dbCpuMs(db)) - at)
    }
    await close()
    const each = (median(ms) / (50 + 0.1 * rows)) * 1000
    console.log(
      `${PG ? 'postgres' : 'pglite'}, ${rows} events${big ? ' (larger nodes)' : ''}, ${variant}: analyze events ${median(ms).toFixed(1)} ms CPU ` +
        `(${ms.map((x) => x.toFixed(0)).join(' ')}), a write's share ${each.toFixed(1)} µs`,
    )
  }
}

/**
 * The plans of the statements of sql/ that read events, custom and generic, on --rows analyzed
 * events of seven projects (two with webhooks and deliveries), with 0048 and without: their shape
 * (costs off) and their row estimates must be the same; only the width of payload may differ.
 */
async function eventPlans() {
  const rows = Number(opt('rows', '6000'))
  const read = (f: string) => readFileSync(join(import.meta.dir, '..', 'sql', `${f}.sql`), 'utf8')
  const at = new Date(Date.now() - 3_600_000).toISOString()
  const statements: [string, unknown[]][] = [
    ['events/list-page', ['p1', null, null, 100]],
    ['events/list-page', ['p1', '700', 300, 100]],
    ['events/latest', ['p1']],
    ['events/has-cursor', ['p1', '700', 300]],
    ['events/delete-expired', [at]],
    ['search/events-since', ['p1', 300, at, [301, 302], '700']],
    ['search/events-all-since', [300, at, [301], '700']],
    ['search/recent-projects', [300]],
    ['search/head', ['p1']],
    ['search/max-seq', []],
    ['webhooks/fan-out', [100, at, 10]],
    ['webhooks/list-deliveries', ['p1', 'wh_1', 50]],
    ['webhooks/claim-due', [at, at, 10]],
    ['live/claim-presence', ['p1', at]],
    ['projects/delete-import-part', ['p1', 500]],
  ]
  const seen = new Map<string, { shape: string; rows: string }[]>()
  for (const variant of ['as migrated', 'before 0048']) {
    const { db, close } = await freshDb(`arbor_hist_analyze_${process.pid}`, PG)
    if (variant === 'before 0048') await db.exec(takeBackEvents)
    await fillEvents(db, rows, 7, false)
    for (const p of ['p1', 'p2'])
      await db.query(
        `insert into webhooks (id, project_id, url, events, secret, since) values ($1, $2, 'http://127.0.0.1:9/', '["node.added"]', 's', '1')`,
        [`wh_${p.slice(1)}`, p],
      )
    await db.exec(
      `insert into webhook_deliveries (webhook_id, event_seq, status) select 'wh_' || substr(project_id, 2), seq, case when seq % 5 = 0 then 'pending' else 'delivered' end from events where project_id in ('p1', 'p2') and type = 'node.added'`,
    )
    await db.exec('analyze')
    const literal = (v: unknown): string =>
      v === null ? 'null' : Array.isArray(v) ? `'{${v.join(',')}}'` : typeof v === 'number' ? String(v) : `'${v}'`
    let n = 0
    for (const [file, params] of statements)
      for (const mode of ['force_custom_plan', 'force_generic_plan']) {
        const name = `plan_${++n}`
        const call = params.length ? `execute ${name}(${params.map(literal).join(', ')})` : `execute ${name}`
        // one transaction: the prepared statement and its explain on the same connection
        const { shape, estimates } = await db.tx(async (tx) => {
          await tx.exec(`set local plan_cache_mode = ${mode}; prepare ${name} as ${read(file)}`)
          const lines = async (costs: boolean) =>
            (await tx.query<Record<string, string>>(`explain (costs ${costs ? 'on' : 'off'}) ${call}`)).map((r) => Object.values(r)[0]!)
          const shape = (await lines(false)).join('\n')
          const estimates = (await lines(true)).map((l) => /rows=(\d+)/.exec(l)?.[1] ?? '').join(' ')
          await tx.exec(`deallocate ${name}`)
          return { shape, estimates }
        })
        const label = `${file}(${params.map(literal).join(', ')}) (${mode})`
        seen.set(label, [...(seen.get(label) ?? []), { shape, rows: estimates }])
      }
    await close()
  }
  for (const [label, [now, before]] of seen)
    console.log(
      `${label}: ${
        now!.shape === before!.shape
          ? `the same plan${now!.rows === before!.rows ? ', the same estimates' : `, estimates differ: ${before!.rows} → ${now!.rows}`}: ${now!.shape.replaceAll('\n', ' ').replace(/ +/g, ' ')}`
          : `differs\n${before!.shape}\n-- with 0048:\n${now!.shape}`
      }`,
    )
}

if (args.includes('--events')) await (args.includes('--plans') ? eventPlans() : analyzeEvents())
else if (args.includes('--app')) await inApp()
else if (args.includes('--plans')) await plans()
else if (args.includes('--js')) js()
else await analyzeOnly()
