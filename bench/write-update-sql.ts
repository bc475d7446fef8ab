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
// sends); "change row without before and after"; "changes without changes_target" (its one index
// beside its key since migration 0040); "before 0040: changes keyed by (id), with changes_project"
// (the key and index of before 0040 put back: before ÷ after); "+ select 1" (one more statement: the fixed cost
// of a statement); "lock-many" (the node locked without the intent, sql/nodes/lock-many.sql);
// "lock one row" (the node and its intent as one row of nodes with a subquery); "generic plans"
// (plan_cache_mode forced); "… off" (a trigger disabled); "changes_advance_revision as before
// 0036" (the trigger migration 0036 dropped, created again: before ÷ after); "revision in the statement" (the project's revision advanced by
// the change's statement, the deferred revision triggers disabled) and "revision marked in the
// statement, triggers on" (advanced and marked there, arbor.revised, so the triggers find it done);
// "before 0040" (the node's rev and field revs set by the row trigger nodes_rev, created again, and
// the update without them: before ÷ after), "rev in the update, no key hinted" (the update's field
// revs found by comparing every key), "no rev" (neither: what setting them costs) and "work state by
// a row trigger" (work_nodes_update made a row trigger whose WHEN is its body's test).

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
import { median, migration, mutate } from './lib/sql-cpu'

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
async function lockAndUpdate(run: Run, lock: 'intent' | 'many', update: [string, unknown[]] = [updateSql, ['label']]) {
  const node =
    lock === 'intent'
      ? (await run(lockSql, ['ww', target, ['label'], new Date().toISOString(), 'bench']))[0]!
      : (await run(lockManySql, ['ww', [target]]))[0]!
  const data = { ...node.data, label: `u${++k}` }
  const after = (await run(update[0], ['ww', target, node.parent_id, JSON.stringify(data), false, ...update[1]]))[0]!
  return { node, after }
}
const changes = (node: unknown, after: unknown) =>
  JSON.stringify([{ action: 'update', kind: 'node', id: target, type: 'goal', before: node, after, fields: ['label'] }])
const events = (after: unknown) => JSON.stringify([{ type: 'node.updated', payload: { node: after, fields: ['label'] } }])

async function asItIs(run: Run, lock: 'intent' | 'many' = 'intent', update?: [string, unknown[]]) {
  const { node, after } = await lockAndUpdate(run, lock, update)
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

// before migration 0040: the update as it was, its rev and field revs set by the row trigger nodes_rev
const updateBefore0040 = `update nodes
set parent_id = $3, data = $4::jsonb, updated_at = now(),
  classified_at = case when $5 then coalesce(classified_at, now()) else classified_at end
where project_id = $1 and id = $2
returning id, type, parent_id, data, created_at, rev`
const nodesRev = `${/create or replace function nodes_rev_update\(.*?end \$\$;\n/s.exec(migration('0031-label-update-lighter.sql'))![0]}
create trigger nodes_rev before update of data, parent_id on nodes for each row
when (old.data is distinct from new.data or old.parent_id is distinct from new.parent_id)
execute function nodes_rev_update();`

// tried in the tenth pass, not kept: the work state's update trigger as a row trigger whose WHEN
// is what its body tests (false for a label), the statement trigger dropped
const workRowTrigger = `create or replace function work_node_updated() returns trigger
language plpgsql as $$
begin
  if new.type is distinct from old.type or new.parent_id is distinct from old.parent_id
      or new.data -> 'status' is distinct from old.data -> 'status'
      or new.data -> 'approachStatus' is distinct from old.data -> 'approachStatus'
      or new.data -> 'blockedBy' is distinct from old.data -> 'blockedBy'
      or new.data -> 'goalStatus' is distinct from old.data -> 'goalStatus'
      or new.data -> 'kind' is distinct from old.data -> 'kind' then
    perform work_changed(jsonb_build_array(jsonb_build_object('project_id', new.project_id, 'id', new.id, 'type', new.type,
      'parent_id', new.parent_id, 'data', new.data, 'old_type', old.type, 'old_parent_id', old.parent_id, 'old_data', old.data)));
  else
    update work_items w set
      iteration = x.iteration,
      iter_rank = coalesce(
        (select r.rank from work_iter_ranks(new.project_id) r where r.name = x.iteration),
        (select r.rank from work_iter_ranks(new.project_id) r where r.name is null)),
      urgent = case when new.type = 'task' and new.data -> 'urgent' = 'true'::jsonb then 0 else 1 end
    from (select case when jsonb_typeof(new.data -> 'iteration') = 'string' then new.data ->> 'iteration' end as iteration) x
    where w.project_id = new.project_id and w.node_id = new.id;
  end if;
  return null;
end
$$;
drop trigger work_nodes_update on nodes;
create trigger work_nodes_update after update on nodes for each row
when (new.type is distinct from old.type or new.parent_id is distinct from old.parent_id
  or new.data -> 'status' is distinct from old.data -> 'status'
  or new.data -> 'approachStatus' is distinct from old.data -> 'approachStatus'
  or new.data -> 'blockedBy' is distinct from old.data -> 'blockedBy'
  or new.data -> 'goalStatus' is distinct from old.data -> 'goalStatus'
  or new.data -> 'kind' is distinct from old.data -> 'kind'
  or new.data -> 'iteration' is distinct from old.data -> 'iteration'
  or new.data -> 'urgent' is distinct from old.data -> 'urgent')
execute function work_node_updated();
`

// before migration 0040: changes keyed by (id), with changes_project (project_id, id desc) beside
const changesBefore0040 =
  'alter table changes drop constraint changes_pkey, add primary key (id); create index changes_project on changes (project_id, id desc)'
const changesSince0040 = 'alter table changes drop constraint changes_pkey, add primary key (project_id, id); drop index changes_project'

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
  'changes without changes_target': { write: (run) => asItIs(run), setup: 'drop index changes_target' },
  'before 0040: changes keyed by (id), with changes_project': {
    write: (run) => asItIs(run),
    setup:
      'alter table changes drop constraint changes_pkey, add primary key (id); create index changes_project on changes (project_id, id desc)',
    teardown: 'alter table changes drop constraint changes_pkey, add primary key (project_id, id); drop index changes_project',
  },
  'generic plans': { write: (run) => asItIs(run), setup: 'set plan_cache_mode = force_generic_plan' },
  'lock one row': {
    write: async (run) => {
      const node = (await run(lockOneRow, ['ww', target, ['label'], new Date().toISOString(), 'bench']))[0]!
      const data = { ...node.data, label: `u${++k}` }
      const after = (await run(updateSql, ['ww', target, node.parent_id, JSON.stringify(data), false, 'label']))[0]!
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
  'before 0040: rev by the trigger nodes_rev': {
    write: (run) => asItIs(run, 'intent', [updateBefore0040, []]),
    setup: nodesRev,
    teardown: 'drop trigger nodes_rev on nodes; drop function nodes_rev_update()',
  },
  'work state by a row trigger': {
    write: (run) => asItIs(run),
    setup: workRowTrigger,
    teardown: `drop trigger work_nodes_update on nodes;
create trigger work_nodes_update after update on nodes
referencing old table as old_nodes new table as new_nodes for each statement execute function work_nodes_updated();`,
  },
  'before 0040, all of it (the trigger nodes_rev; changes keyed by (id), with changes_project)': {
    write: (run) => asItIs(run, 'intent', [updateBefore0040, []]),
    setup: `${nodesRev}; ${changesBefore0040}`,
    teardown: `drop trigger nodes_rev on nodes; drop function nodes_rev_update(); ${changesSince0040}`,
  },
  'rev in the update, no key hinted': { write: (run) => asItIs(run, 'intent', [updateSql, [null]]) },
  'no rev (neither the trigger nor the statement sets it)': {
    write: (run) => asItIs(run, 'intent', [updateBefore0040, []]),
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
