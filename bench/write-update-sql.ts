// A label update's SQL on PGlite, as the app sends it and in variants (issue 51, 3, the ninth
// pass): each variant on a PGlite of its own (copies of one database: the app's schema, a project
// and a goal, made through the app), in this process, through src/db/pglite-prepared.ts's
// transaction as the app runs it (BEGIN with the first statement, COMMIT prepared, the deferred
// triggers at the commit), timed by this process's CPU time, the variants taking turns round by
// round. Each round's figure is read against "as it is" in the same round (the ratio is steadier
// on a loaded machine than either figure).
//
//   bun bench/write-update-sql.ts [--rounds 8] [--writes 1000] [--only word,word] [--same]
//
// The variants: "as it is" (the node locked with its edit intent, sql/nodes/lock-with-intent.sql;
// the update, sql/nodes/update.sql; its change and event, sql/events/insert-with-changes.sql);
// "no change row" (the event alone, sql/events/insert-many.sql: what ARBOR_BENCH_NO_HISTORY
// sends); "change row without before and after"; "changes without their two indexes"
// (changes_project and changes_target dropped); "+ select 1" (one more statement: the fixed cost
// of a statement); "lock-many" (the node locked without the intent, sql/nodes/lock-many.sql);
// "lock one row" (the node and its intent as one row of nodes with a subquery); "generic plans"
// (plan_cache_mode forced); "… off" (a trigger disabled); "changes_advance_revision as before
// 0036" (the trigger migration 0036 dropped, created again: before ÷ after); "revision in the statement" (the project's revision advanced by
// the change's statement, the deferred revision triggers disabled) and "revision marked in the
// statement, triggers on" (advanced and marked there, arbor.revised, so the triggers find it done).

import { PGlite } from '@electric-sql/pglite'
import eventsSql from '../sql/events/insert-many.sql' with { type: 'text' }
import changesSql from '../sql/events/insert-with-changes.sql' with { type: 'text' }
import lockManySql from '../sql/nodes/lock-many.sql' with { type: 'text' }
import lockSql from '../sql/nodes/lock-with-intent.sql' with { type: 'text' }
import updateSql from '../sql/nodes/update.sql' with { type: 'text' }
import type { PgliteDb } from '../src/db/pglite'
import { pgliteAssets } from '../src/db/pglite-assets'
import { preparedRunner } from '../src/db/pglite-prepared'
import { startBenchServer } from './lib/app'
import { median, mutate } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const ROUNDS = Number(opt('rounds', '8'))
const WRITES = Number(opt('writes', '1000'))
const ONLY = opt('only', '').split(',').filter(Boolean)

const s = await startBenchServer()
const call = mutate(s)
await call({ action: 'addProject', project: { id: 'ww', name: 'ww' } })
const target = (await call({ action: 'add', projectId: 'ww', node: { type: 'goal', data: { label: 'g' } } })).node!.id
const copy = await (s.deps.db as PgliteDb).dump()
await s.close()

type Run = (text: string, params: unknown[]) => Promise<Record<string, any>[]>
let k = 0
const author = ['u', 'u', null, null, 'api']

/** The node locked, then its update; answers the node before and after. */
async function lockAndUpdate(run: Run, lock: 'intent' | 'many') {
  const node =
    lock === 'intent'
      ? (await run(lockSql, ['ww', target, ['label'], new Date().toISOString(), 'bench']))[0]!
      : (await run(lockManySql, ['ww', [target]]))[0]!
  const data = { ...node.data, label: `u${++k}` }
  const after = (await run(updateSql, ['ww', target, node.parent_id, JSON.stringify(data), false]))[0]!
  return { node, after }
}
const changes = (node: unknown, after: unknown) =>
  JSON.stringify([{ action: 'update', kind: 'node', id: target, type: 'goal', before: node, after, fields: ['label'] }])
const events = (after: unknown) => JSON.stringify([{ type: 'node.updated', payload: { node: after, fields: ['label'] } }])

async function asItIs(run: Run, lock: 'intent' | 'many' = 'intent') {
  const { node, after } = await lockAndUpdate(run, lock)
  await run(changesSql, ['ww', ...author, requestId(), changes(node, after), events(after)])
}
const requestId = () => `r${k}`

const revisionInStatement = `with bumped as (
  insert into project_revisions (project_id, revision) values ($1, 1)
  on conflict (project_id) do update set revision = project_revisions.revision + 1
  returning 1
)
${changesSql.replace(/^--.*\n/gm, '').replace(/^with /, ', ')}`

// the same, with the project marked as advanced (arbor.revised, as advance_project_revision marks
// it), so that the deferred triggers, left on, find it done
const revisionMarked = revisionInStatement
  .replace('returning 1\n)', "returning set_config('arbor.revised', '/' || $1 || '/', true) as mark\n)")
  .replace(
    'from jsonb_array_elements($9::jsonb) with ordinality as e(v, n)',
    'from jsonb_array_elements($9::jsonb) with ordinality as e(v, n), bumped',
  )

// the node and its intent in one row of nodes (no row when the node does not exist)
const lockOneRow = `select n.id, n.type, n.parent_id, n.data, n.created_at, n.rev, n.field_revs,
  (select to_jsonb(i) from (
    select user_id, user_name, agent, via, field, expires_at
    from presence
    where project_id = $1 and node_id = $2 and field = any($3::text[]) and expires_at > $4 and actor_key <> $5
    order by expires_at desc
    limit 1) i) as intent
from nodes n
where n.project_id = $1 and n.id = $2
for update of n`

/** setup: run before the variant's turn; teardown: after it, on --same (one PGlite for all, the variants that have one) */
type Variant = { write: (run: Run) => Promise<unknown>; setup?: string; teardown?: string }
const variants: Record<string, Variant> = {
  'as it is': { write: (run) => asItIs(run) },
  'no change row': {
    write: async (run) => {
      const { after } = await lockAndUpdate(run, 'intent')
      await run(eventsSql, ['ww', events(after)])
    },
  },
  '+ select 1': {
    write: async (run) => {
      await asItIs(run)
      await run('select 1', [])
    },
  },
  'lock-many': { write: (run) => asItIs(run, 'many') },
  'change row without before and after': {
    write: async (run) => {
      const { after } = await lockAndUpdate(run, 'intent')
      await run(changesSql, ['ww', ...author, requestId(), changes(null, null), events(after)])
    },
  },
  'changes without their two indexes': { write: (run) => asItIs(run), setup: 'drop index changes_project; drop index changes_target' },
  'generic plans': { write: (run) => asItIs(run), setup: 'set plan_cache_mode = force_generic_plan' },
  'lock one row': {
    write: async (run) => {
      const node = (await run(lockOneRow, ['ww', target, ['label'], new Date().toISOString(), 'bench']))[0]!
      const data = { ...node.data, label: `u${++k}` }
      const after = (await run(updateSql, ['ww', target, node.parent_id, JSON.stringify(data), false]))[0]!
      await run(changesSql, ['ww', ...author, requestId(), changes(node, after), events(after)])
    },
  },
  'revision marked in the statement, triggers on': {
    write: async (run) => {
      const { node, after } = await lockAndUpdate(run, 'intent')
      await run(revisionMarked, ['ww', ...author, requestId(), changes(node, after), events(after)])
    },
  },
  'events_advance_revision off, no revision': {
    write: (run) => asItIs(run),
    setup: 'alter table events disable trigger events_advance_revision',
  },
  // before migration 0036: each change row queued the deferred revision trigger too
  'changes_advance_revision as before 0036': {
    write: (run) => asItIs(run),
    setup: `create constraint trigger changes_advance_revision after insert on changes
      deferrable initially deferred for each row execute function advance_project_revision()`,
    teardown: 'drop trigger changes_advance_revision on changes',
  },
  'work_nodes_update off': {
    write: (run) => asItIs(run),
    setup: 'alter table nodes disable trigger work_nodes_update',
    teardown: 'alter table nodes enable trigger work_nodes_update',
  },
  'nodes_rev off': {
    write: (run) => asItIs(run),
    setup: 'alter table nodes disable trigger nodes_rev',
    teardown: 'alter table nodes enable trigger nodes_rev',
  },
  'revision in the statement': {
    write: async (run) => {
      const { node, after } = await lockAndUpdate(run, 'intent')
      await run(revisionInStatement, ['ww', ...author, requestId(), changes(node, after), events(after)])
    },
    setup: 'alter table events disable trigger events_advance_revision',
  },
}
// --same: every variant on one PGlite, its setup before its turn and its teardown after (the
// variants without a teardown are left out): no difference between two PGlites in the figures
const SAME = args.includes('--same')
const chosen = Object.entries(variants).filter(
  ([name, v]) => (name === 'as it is' || !ONLY.length || ONLY.some((w) => name.includes(w))) && (!SAME || !v.setup || v.teardown),
)

const dbs = new Map<string, { pg: PGlite; runner: ReturnType<typeof preparedRunner> }>()
const shared = SAME ? await PGlite.create({ ...(await pgliteAssets()), loadDataDir: copy }) : undefined
for (const [name, v] of chosen) {
  const pg = shared ?? (await PGlite.create({ ...(await pgliteAssets()), loadDataDir: copy }))
  if (v.setup && !SAME) await pg.exec(v.setup)
  dbs.set(name, { pg, runner: shared && dbs.size ? [...dbs.values()][0]!.runner : preparedRunner(pg) })
}
const us: Record<string, number[]> = {}
try {
  for (let r = 0; r < ROUNDS; r++)
    for (const [name, v] of r % 2 ? [...chosen].reverse() : chosen) {
      const { pg, runner } = dbs.get(name)!
      if (SAME && v.setup) await pg.exec(v.setup)
      const write = () => runner.transaction(() => v.write((t, p) => runner.run(t, p, true)))
      for (let i = 0; i < 50; i++) await write() // untimed: plans made, caches warm
      const cpu = process.cpuUsage()
      for (let i = 0; i < WRITES; i++) await write()
      const d = process.cpuUsage(cpu)
      ;(us[name] ??= []).push((d.user + d.system) / WRITES)
      if (SAME && v.teardown) await pg.exec(v.teardown)
    }
} finally {
  for (const pg of new Set([...dbs.values()].map((d) => d.pg))) await pg.close()
}
const base = us['as it is']!
console.log(
  `a goal's label update's SQL in a transaction (PGlite), ${ROUNDS} rounds of ${WRITES}\n\n| variant | CPU µs a write (median of the rounds) | ÷ as it is (median of the rounds' ratios) |\n|---|---|---|`,
)
for (const [name, xs] of Object.entries(us))
  console.log(`| ${name} | ${median(xs).toFixed(1)} | ${median(xs.map((x, i) => x / base[i]!)).toFixed(3)}× |`)
