// What each trigger costs a label update, in one PGlite process (issue 51, 3): the SQL of
// `update` with `data: { label }` on a goal (sql/nodes/update.sql, then its change and event,
// bench/lib/one-statement-saving.ts `insertWithChangesSql`, then the deferred triggers as at a commit: `set constraints
// all immediate`), timed by this process's CPU time (PGlite runs in it, synchronously), each sample
// in a transaction rolled back, with every trigger on and with each trigger disabled in turn
// (`alter table … disable trigger`), taking turns round by round.
//
//   bun bench/write-triggers-label.ts [--rounds 6] [--samples 200] [--type goal|job] [--only work_nodes_update,all off]
//
// `--type job` updates a job's label (a work item) instead of a goal's. Since migration 0040 the
// update sets the node's rev itself (no nodes_rev trigger; bench/write-update-sql.ts "before 0040"
// compares the two).

import updateSql from '../sql/nodes/update.sql' with { type: 'text' }
import type { Db } from '../src/db'
import { startBenchServer } from './lib/app'
import { insertWithChangesSql as changesSql } from './lib/one-statement-saving'
import { benchProject, cpuMsRolledBack, median } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const ROUNDS = Number(opt('rounds', '6'))
const SAMPLES = Number(opt('samples', '200'))
const TYPE = opt('type', 'goal')

const s = await startBenchServer()
try {
  const { add, goal, approach } = await benchProject(s)
  const job = await add('job', approach)
  for (let i = 0; i < 8; i++) await add('goal', null)
  const target = TYPE === 'job' ? job : goal
  const db: Db = s.deps.db
  await db.exec('analyze')
  const node = (
    await db.query<{ parent_id: string | null; data: Record<string, unknown> }>(
      `select parent_id, data from nodes where project_id = 'ww' and id = $1`,
      [target],
    )
  )[0]!

  let k = 0
  const labelUpdate = async (tx: Db) => {
    const data = { ...node.data, label: `u${++k}` }
    const after = (
      await tx.query<Record<string, unknown>>(updateSql, ['ww', target, node.parent_id, JSON.stringify(data), false, 'label'])
    )[0]!
    await tx.query(changesSql, [
      'ww',
      'u',
      'u',
      null,
      null,
      'api',
      'bench',
      JSON.stringify([{ action: 'update', kind: 'node', id: target, type: TYPE, before: node, after, fields: ['label'] }]),
      JSON.stringify([{ type: 'node.updated', payload: { node: after, fields: ['label'] } }]),
    ])
    await tx.exec('set constraints all immediate')
  }

  const triggers = await db.query<{ rel: string; name: string }>(
    `select tgrelid::regclass::text as rel, tgname as name from pg_trigger
       where not tgisinternal and tgrelid::regclass::text in ('nodes', 'changes', 'events', 'work_items', 'work_pending')
       order by 1, 2`,
  )
  const variants = ['all on', ...triggers.map((t) => `${t.rel}.${t.name}`), 'all off']
  // --only a,b: the rows whose name contains one of these words (all of them by default)
  const only = opt('only', '').split(',').filter(Boolean)
  if (only.length) variants.splice(0, variants.length, ...variants.filter((v) => v === 'all on' || only.some((w) => v.includes(w))))
  const setVariant = async (v: string) => {
    for (const t of triggers) {
      const off = v === 'all off' || v === `${t.rel}.${t.name}`
      await db.exec(`alter table ${t.rel} ${off ? 'disable' : 'enable'} trigger ${t.name}`)
    }
  }
  const times: Record<string, number[]> = {}
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...variants].reverse() : variants
    for (const v of order) {
      await setVariant(v)
      ;(times[v] ??= []).push(await cpuMsRolledBack(db, labelUpdate, { samples: SAMPLES, warmup: 5 }))
    }
  }
  await setVariant('all on')
  const base = median(times['all on']!)
  console.log(
    `a ${TYPE}'s label update, ${ROUNDS} rounds of ${SAMPLES}\n\n| triggers | CPU ms (p50 of the rounds' p50s) | less than all on |\n|---|---|---|`,
  )
  for (const v of variants) {
    const m = median(times[v]!)
    console.log(`| ${v === 'all on' || v === 'all off' ? v : `${v} off`} | ${m.toFixed(3)} | ${(base - m).toFixed(3)} |`)
  }
} finally {
  await s.close()
}
