// A label update's SQL on PGlite, as the app sends it and in variants (issue 51, 3, the ninth
// pass): each variant on a PGlite of its own (copies of one database: the app's schema, a project
// and a goal, made through the app), in this process, through src/db/pglite-prepared.ts's
// transaction as the app runs it (BEGIN with the first statement, COMMIT prepared, the deferred
// triggers at the commit), timed by this process's CPU time, the variants taking turns round by
// round. Each round's figure is read against "as it is" in the same round (the ratio is steadier
// on a loaded machine than either figure).
//
//   bun bench/write-update-sql.ts [--rounds 8] [--writes 1000] [--warm 50] [--only word,word] [--same] [--last]
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/write-update-sql.ts …
//
// --warm: the untimed writes before each round's. Many short rounds on separate PGlites
// (`--rounds 300 --writes 25 --warm 2`, the twelfth pass) take turns often enough that a load
// that moves by the second weighs on every variant alike.
// --last times each transaction's last statement alone (in most variants the change's and event's).
// On PostgreSQL every variant runs on one new database (as --same), timed by its backends' CPU.
//
// The variants: "as it is" (the node locked with its edit intent, sql/nodes/lock-with-intent.sql;
// the update, sql/nodes/update.sql; its change and event, bench/lib/one-statement-saving.ts `insertWithChangeSql` since
// migration 0042, bench/lib/one-statement-saving.ts `insertWithChangesSql` before); the eleventh pass's (the change row's
// parts: "before 0042", the change in a JSON array, the table's check, the change's id, the row
// itself, its after, its author, its indexes, its WAL, its sequence; see `eleventh` below);
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
// a row trigger" (work_nodes_update made a row trigger whose WHEN is its body's test); the twelfth
// pass's ("twelfth: …": 0027's statement trigger as before migration 0044, before ÷ after; the
// statement trigger with a WHEN that is false, with and without its transition tables; a row
// trigger whose function does nothing, with WHENs of each form: what each part of a trigger costs).

import { readFileSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import eventsSql from '../sql/events/insert-many.sql' with { type: 'text' }
import lockManySql from '../sql/nodes/lock-many.sql' with { type: 'text' }
import lockSql from '../sql/nodes/lock-with-intent.sql' with { type: 'text' }
import updateSql from '../sql/nodes/update.sql' with { type: 'text' }
import type { PgliteDb } from '../src/db/pglite'
import { pgliteAssets } from '../src/db/pglite-assets'
import { preparedRunner } from '../src/db/pglite-prepared'
import { startBenchServer } from './lib/app'
import { insertWithChangeSql as changeSql, insertWithChangesSql as changesSql } from './lib/one-statement-saving'
import { definition, median, migration, mutate } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const ROUNDS = Number(opt('rounds', '8'))
const WRITES = Number(opt('writes', '1000'))
const ONLY = opt('only', '').split(',').filter(Boolean)
// untimed writes before each round's (plans made, caches warm); fewer with many short rounds on separate PGlites
const WARM = Number(opt('warm', '50'))

// BENCH_DATABASE_URL: on PostgreSQL instead (the eleventh pass), every variant on one new database
// (as --same), through the app's postgres.js Db, timed by the CPU of the database's backends
// (/proc/<pid>/schedstat of each, as npm run bench:writes reads them)
const PG_URL = process.env.BENCH_DATABASE_URL
const s = await startBenchServer(PG_URL)
const call = mutate(s)
await call({ action: 'addProject', project: { id: 'ww', name: 'ww' } })
const target = (await call({ action: 'add', projectId: 'ww', node: { type: 'goal', data: { label: 'g' } } })).node!.id
const copy = PG_URL ? undefined : await (s.deps.db as PgliteDb).dump()
if (!PG_URL) await s.close()

type Run = (text: string, params: unknown[]) => Promise<Record<string, any>[]>
let k = 0
// the author's columns as the app fills them for a request of the owner's key (history.md, 1)
const author = ['usr_AYdLialtJhbldSfK', 'owner', 'key_NwGo54jCPOjWdM2P', null, 'api']

/** The node locked, then its update; answers the node before and after. */
async function lockAndUpdate(run: Run, lock: 'intent' | 'many', update: [string, unknown[]] = [updateSql, ['label']]) {
  const node =
    lock === 'intent'
      ? (await run(lockSql, ['ww', target, ['label'], new Date().toISOString()]))[0]!
      : (await run(lockManySql, ['ww', [target]]))[0]!
  const data = { ...node.data, label: `u${++k}` }
  const after = (await run(update[0], ['ww', target, node.parent_id, JSON.stringify(data), false, ...update[1]]))[0]!
  return { node, after }
}
/** a node as a change keeps it (src/history/change.ts nodeState): {parentId, data} */
const state = (row: Record<string, any> | null) => row && { parentId: row.parent_id, data: row.data }
// the event as src/events/outbox.ts insertEvents writes it
const events = (after: Record<string, any>) =>
  JSON.stringify([
    {
      type: 'node.updated',
      payload: {
        event: 'node.updated',
        project_id: 'ww',
        timestamp: new Date().toISOString(),
        node: { id: after.id, rev: `${after.rev}-e2br`, type: after.type, parentId: after.parent_id, data: after.data },
        actor: { userId: author[0], userName: author[1], via: 'api' },
      },
    },
  ])

/** a label update's one change as bench/lib/one-statement-saving.ts `insertWithChangeSql` takes it ($8..$16; src/history/record.ts oneChangeParams) */
const oneChange = (node: Record<string, any> | null, after: Record<string, any> | null) => [
  'update',
  'node',
  target,
  'goal',
  node && JSON.stringify(state(node)),
  after && JSON.stringify(state(after)),
  '["label"]',
  null,
  null,
]

async function asItIs(run: Run, lock: 'intent' | 'many' = 'intent', update?: [string, unknown[]]) {
  const { node, after } = await lockAndUpdate(run, lock, update)
  await run(changeSql, ['ww', ...author, requestId(), ...oneChange(node, after), events(after)])
}
// a request id as the app makes them (randomUUID)
const requestId = () => `282ac442-a535-4f13-a9dd-${String(k).padStart(12, '0')}`

const revisionInStatement = `with bumped as (
  insert into project_revisions (project_id, revision) values ($1, 1)
  on conflict (project_id) do update set revision = project_revisions.revision + 1
  returning 1
)
${changeSql.replace(/^--.*\n/gm, '').replace(/^with /, ', ')}`

// the same, with the project marked as advanced (arbor.revised, as advance_project_revision marks
// it), so that the deferred triggers, left on, find it done
const revisionMarked = revisionInStatement
  .replace('returning 1\n)', "returning set_config('arbor.revised', '/' || $1 || '/', true) as mark\n)")
  .replace(
    'from jsonb_array_elements($17::jsonb) with ordinality as e(v, n)',
    'from jsonb_array_elements($17::jsonb) with ordinality as e(v, n), bumped',
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

// the twelfth pass: what of the work state's update trigger a label update pays (each against "as it is")
const statementTrigger = `drop trigger work_nodes_update on nodes;
create trigger work_nodes_update after update on nodes
referencing old table as old_nodes new table as new_nodes for each statement execute function work_nodes_updated();`
const rowTriggerWhen = (when: string) => `drop trigger work_nodes_update on nodes;
create trigger work_nodes_update after update on nodes for each row when (${when}) execute function work_nodes_updated_row_probe();`
const probeFunction = `create or replace function work_nodes_updated_row_probe() returns trigger language plpgsql as $$ begin return null; end $$;`
const twelfth: Record<string, Variant> = {
  // before migration 0044 (0027's statement trigger, made again): before ÷ after
  'twelfth: before 0044': {
    write: (run) => asItIs(run),
    setup: `${definition('0027-work-triggers-lighter.sql', 'work_nodes_updated')}\n${statementTrigger}`,
    teardown: migration('0044-work-update-when.sql'),
  },
  'twelfth: statement trigger, when (false)': {
    write: (run) => asItIs(run),
    setup: `drop trigger work_nodes_update on nodes;
create trigger work_nodes_update after update on nodes
referencing old table as old_nodes new table as new_nodes for each statement when (false) execute function work_nodes_updated();`,
    teardown: migration('0044-work-update-when.sql'),
  },
  'twelfth: statement trigger without transition tables, when (false)': {
    write: (run) => asItIs(run),
    setup: `drop trigger work_nodes_update on nodes;
create trigger work_nodes_update after update on nodes for each statement when (false) execute function work_nodes_updated();`,
    teardown: migration('0044-work-update-when.sql'),
  },
  'twelfth: row trigger, when (false)': {
    write: (run) => asItIs(run),
    setup: probeFunction + rowTriggerWhen('false'),
    teardown: migration('0044-work-update-when.sql'),
  },
  'twelfth: row trigger, when of the nine fields': {
    write: (run) => asItIs(run),
    setup:
      probeFunction +
      rowTriggerWhen(`new.type is distinct from old.type or new.parent_id is distinct from old.parent_id
  or new.data -> 'status' is distinct from old.data -> 'status'
  or new.data -> 'approachStatus' is distinct from old.data -> 'approachStatus'
  or new.data -> 'blockedBy' is distinct from old.data -> 'blockedBy'
  or new.data -> 'goalStatus' is distinct from old.data -> 'goalStatus'
  or new.data -> 'kind' is distinct from old.data -> 'kind'
  or new.data -> 'iteration' is distinct from old.data -> 'iteration'
  or new.data -> 'urgent' is distinct from old.data -> 'urgent'`),
    teardown: migration('0044-work-update-when.sql'),
  },
  'twelfth: row trigger, when of the data less the eleven fields': {
    write: (run) => asItIs(run),
    setup:
      probeFunction +
      rowTriggerWhen(
        `new.type is distinct from old.type or new.parent_id is distinct from old.parent_id or (new.data - '{label,description,notes,maturity,measure,kano,size,serves,externalRefs,demand,completedAt}'::text[]) is distinct from (old.data - '{label,description,notes,maturity,measure,kano,size,serves,externalRefs,demand,completedAt}'::text[])`,
      ),
    teardown: migration('0044-work-update-when.sql'),
  },
  'twelfth: row trigger with transition tables, when of the data less label and description': {
    write: (run) => asItIs(run),
    setup:
      probeFunction +
      rowTriggerWhen(
        `new.type is distinct from old.type or new.parent_id is distinct from old.parent_id or (new.data - '{label,description}'::text[]) is distinct from (old.data - '{label,description}'::text[])`,
      ).replace('for each row', 'referencing old table as old_nodes new table as new_nodes for each row'),
    teardown: migration('0044-work-update-when.sql'),
  },
  'twelfth: row trigger, when of the data less label and description': {
    write: (run) => asItIs(run),
    setup:
      probeFunction +
      rowTriggerWhen(
        `new.type is distinct from old.type or new.parent_id is distinct from old.parent_id or (new.data - '{label,description}'::text[]) is distinct from (old.data - '{label,description}'::text[])`,
      ),
    teardown: migration('0044-work-update-when.sql'),
  },
}

// before migration 0040: changes keyed by (id), with changes_project (project_id, id desc) beside
const changesBefore0040 =
  'alter table changes drop constraint changes_pkey, add primary key (id); create index changes_project on changes (project_id, id desc)'
const changesSince0040 = 'alter table changes drop constraint changes_pkey, add primary key (project_id, id); drop index changes_project'

// the eleventh pass (migration 0042): the change row's parts, one at a time (each against "as it is")
const oneBody = changeSql.replace(/^--.*\n/gm, '')
const arrayBody = changesSql.replace(/^--.*\n/gm, '')
// the one change as b2742fc sent it: insert-with-changes.sql with the change's values in place of its recordset
const OLD_ONE = arrayBody
  .replace(
    /select \$1, \$2, \$3, \$4, \$5, \$6, \$7,\n.*?order by c\.n\n/s,
    'values ($1, $2, $3, $4, $5, $6, $7, $8, $9::change_target_kind, $10, $11, $12::jsonb, $13::jsonb, $14::jsonb, $15::bigint, $16::jsonb)\n',
  )
  .replace('$9::jsonb', '$17::jsonb')
const tableCheck = "alter table changes add constraint changes_target_kind_check check (target_kind in ('node', 'iteration'))"
const noTableCheck = 'alter table changes drop constraint changes_target_kind_check'
const plainWrite = (sql: string, change: (node: Record<string, any>, after: Record<string, any>) => unknown[]) => async (run: Run) => {
  const { node, after } = await lockAndUpdate(run, 'intent')
  await run(sql, ['ww', ...author, requestId(), ...change(node, after), events(after)])
}
const arrayWrite = (sql: string, make: (node: Record<string, any>, after: Record<string, any>) => unknown) =>
  plainWrite(sql, (n, a) => [JSON.stringify([make(n, a)])])
const labelChange = (before: unknown, after: unknown) => ({
  action: 'update',
  kind: 'node',
  id: target,
  type: 'goal',
  before,
  after,
  fields: ['label'],
})
const eleventh: Record<string, Variant> = {
  // the same as "as it is", for the noise of the method
  'as it is, again': { write: (run) => asItIs(run) },
  // before 0042: the change in a JSON array taken apart by jsonb_to_recordset, the table's check
  // on target_kind (no cast), as the app wrote a label update's change
  'before 0042: the change in a JSON array, the check of the table': {
    write: arrayWrite(arrayBody.replace('::change_target_kind', ''), (n, a) => labelChange(state(n), state(a))),
    setup: tableCheck,
    teardown: noTableCheck,
  },
  // the one-change statement as b2742fc had it: the change's id and the events' seqs as the rows of a union
  'the one change as b2742fc sent it (a union of ids and seqs)': { write: plainWrite(OLD_ONE, oneChange) },
  // what a write of several changes sends (bench/lib/one-statement-saving.ts `insertWithChangesSql`), with one
  'the change in a JSON array (insert-with-changes.sql)': { write: arrayWrite(arrayBody, (n, a) => labelChange(state(n), state(a))) },
  // the table's check on target_kind as before 0042, the statement as it is (less its cast)
  'the check of the table, as before 0042': {
    write: plainWrite(oneBody.replace('::change_target_kind', ''), oneChange),
    setup: tableCheck,
    teardown: noTableCheck,
  },
  "the change's id not returned": {
    write: plainWrite(oneBody.replace(/\n {2}returning id\n/, '\n').replace(', (select id from ch) as change_id', ''), oneChange),
  },
  // the statement as it is, its change filtered out: what the row itself costs
  'the statement, inserting no change': {
    write: plainWrite(
      oneBody.replace(/values \((.*?)\)\n {2}returning id/s, (_, values: string) => `select ${values}\n  where false\n  returning id`),
      oneChange,
    ),
  },
  'after as the changed fields only': {
    write: plainWrite(oneBody, (n, a) => oneChange(n, a).map((x, i) => (i === 5 ? JSON.stringify({ data: { label: a.data.label } }) : x))),
  },
  'no after (before only)': { write: plainWrite(oneBody, (n) => oneChange(n, null)) },
  'no author columns (all null but via, request)': {
    write: async (run) => {
      const { node, after } = await lockAndUpdate(run, 'intent')
      await run(changeSql, ['ww', null, null, null, null, 'api', requestId(), ...oneChange(node, after), events(after)])
    },
  },
  'changes_target without project_id': {
    write: (run) => asItIs(run),
    setup: 'drop index changes_target; create index changes_target on changes (target_id, id desc)',
    teardown: 'drop index changes_target; create index changes_target on changes (project_id, target_id, id desc)',
  },
  'changes without an index (measured only)': {
    write: (run) => asItIs(run),
    setup: 'alter table changes drop constraint changes_pkey; drop index changes_target',
    teardown:
      'alter table changes add primary key (project_id, id); create index changes_target on changes (project_id, target_id, id desc)',
  },
  'changes unlogged (measured only: a crash would lose them)': {
    write: (run) => asItIs(run),
    setup: 'alter table changes set unlogged',
    teardown: 'alter table changes set logged',
  },
  'changes id sequence cached (32)': {
    write: (run) => asItIs(run),
    setup: 'alter sequence changes_id_seq cache 32',
    teardown: 'alter sequence changes_id_seq cache 1',
  },
}

/** setup: run before the variant's turn; teardown: after it, on --same (one PGlite for all, the variants that have one) */
type Variant = { write: (run: Run) => Promise<unknown>; setup?: string; teardown?: string }
const variants: Record<string, Variant> = {
  'as it is': { write: (run) => asItIs(run) },
  ...eleventh,
  ...twelfth,
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
      await run(changeSql, ['ww', ...author, requestId(), ...oneChange(null, null), events(after)])
    },
  },
  'changes without changes_target': {
    write: (run) => asItIs(run),
    setup: 'drop index changes_target',
    teardown: 'create index changes_target on changes (project_id, target_id, id desc)',
  },
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
      await run(changeSql, ['ww', ...author, requestId(), ...oneChange(node, after), events(after)])
    },
  },
  'revision marked in the statement, triggers on': {
    write: async (run) => {
      const { node, after } = await lockAndUpdate(run, 'intent')
      await run(revisionMarked, ['ww', ...author, requestId(), ...oneChange(node, after), events(after)])
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
    // the trigger as migration 0044 made it
    teardown: `${migration('0044-work-update-when.sql')}\ndrop function work_node_updated();`,
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
      await run(revisionInStatement, ['ww', ...author, requestId(), ...oneChange(node, after), events(after)])
    },
    setup: 'alter table events disable trigger events_advance_revision',
  },
}
// --same: every variant on one PGlite, its setup before its turn and its teardown after (the
// variants without a teardown are left out): no difference between two PGlites in the figures
const SAME = args.includes('--same') || !!PG_URL
const LAST = args.includes('--last') && !PG_URL
const chosen = Object.entries(variants).filter(
  ([name, v]) => (name === 'as it is' || !ONLY.length || ONLY.some((w) => name.includes(w))) && (!SAME || !v.setup || v.teardown),
)

/** Where a variant runs: its statements, a transaction of them, the CPU they cost (µs so far), the WAL's position. */
interface Target {
  exec: (sql: string) => Promise<unknown>
  transaction: (write: (run: Run) => Promise<unknown>) => Promise<unknown>
  cpuUs: () => Promise<number>
  lsn: () => Promise<string>
  close: () => Promise<void>
}
const processCpuUs = async () => {
  const c = process.cpuUsage()
  return c.user + c.system
}
function pgliteTarget(pg: PGlite, runner: ReturnType<typeof preparedRunner>, last: { us: number }): Target {
  // --last: each statement timed alone, the transaction's last one kept (the change's and event's, in most variants)
  const timed: Run = async (t, p) => {
    const cpu = process.cpuUsage()
    const rows = await runner.run<Record<string, any>>(t, p, true)
    const d = process.cpuUsage(cpu)
    last.us = d.user + d.system
    return rows
  }
  return {
    exec: (sql) => pg.exec(sql),
    transaction: (write) => runner.transaction(() => write(LAST ? timed : (t, p) => runner.run<Record<string, any>>(t, p, true))),
    cpuUs: processCpuUs,
    lsn: async () => (await pg.query<{ l: string }>('select pg_current_wal_lsn()::text as l')).rows[0]!.l,
    close: () => pg.close(),
  }
}
async function postgresTarget(): Promise<Target> {
  const db = s.deps.db
  const name = (await db.query<{ d: string }>('select current_database() as d'))[0]!.d
  const backendNs = (pid: number) => {
    try {
      return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0])
    } catch {
      return 0 // a backend that ended
    }
  }
  let pids: number[] = []
  return {
    exec: (sql) => db.exec(sql),
    transaction: (write) => db.tx((tx) => write((t, p) => tx.query<Record<string, any>>(t, p))),
    // the backends are listed before the timed writes (the query's own CPU left out of them)
    cpuUs: async () => pids.reduce((sum, pid) => sum + backendNs(pid) / 1000, 0),
    lsn: async () => {
      pids = (await db.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [name])).map((r) => Number(r.pid))
      return (await db.query<{ l: string }>('select pg_current_wal_lsn()::text as l'))[0]!.l
    },
    close: () => s.close(),
  }
}

const last = { us: 0 }
const targets = new Map<string, Target>()
const shared = PG_URL
  ? await postgresTarget()
  : SAME
    ? await (async () => {
        const pg = await PGlite.create({ ...(await pgliteAssets({ initdb: false })), loadDataDir: copy })
        return pgliteTarget(pg, preparedRunner(pg), last)
      })()
    : undefined
for (const [name, v] of chosen) {
  if (shared) {
    targets.set(name, shared)
    continue
  }
  const pg = await PGlite.create({ ...(await pgliteAssets({ initdb: false })), loadDataDir: copy })
  if (v.setup) await pg.exec(v.setup)
  targets.set(name, pgliteTarget(pg, preparedRunner(pg), last))
}
const us: Record<string, number[]> = {}
/** the WAL a write made (bytes), each round */
const walBytes: Record<string, number[]> = {}
try {
  for (let r = 0; r < ROUNDS; r++)
    for (const [name, v] of r % 2 ? [...chosen].reverse() : chosen) {
      const t = targets.get(name)!
      if (SAME && v.setup) await t.exec(v.setup)
      for (let i = 0; i < WARM; i++) await t.transaction(v.write) // untimed: plans made, caches warm
      const walFrom = await t.lsn()
      const cpu = await t.cpuUs()
      let lastSum = 0
      for (let i = 0; i < WRITES; i++) {
        await t.transaction(v.write)
        lastSum += last.us
      }
      const spent = (await t.cpuUs()) - cpu
      ;(us[name] ??= []).push((LAST ? lastSum : spent) / WRITES)
      const walTo = await t.lsn()
      const wal = ((await t.transaction((run) => run(`select pg_wal_lsn_diff('${walTo}', '${walFrom}') as b`, []))) as { b: string }[])[0]!
        .b
      ;(walBytes[name] ??= []).push(Number(wal) / WRITES)
      if (SAME && v.teardown) await t.exec(v.teardown)
    }
} finally {
  for (const t of new Set(targets.values())) await t.close()
}
const base = us['as it is']!
console.log(
  `a goal's label update's SQL in a transaction (${PG_URL ? "PostgreSQL, its backends' CPU" : 'PGlite'}${LAST ? ', the last statement alone' : ''}), ${ROUNDS} rounds of ${WRITES}\n\n| variant | CPU µs a write (median of the rounds) | ÷ as it is (median of the rounds' ratios) | WAL bytes a write |\n|---|---|---|---|`,
)
for (const [name, xs] of Object.entries(us))
  console.log(
    // on PostgreSQL the WAL is the whole server's (the other databases' writes in it too): not shown
    `| ${name} | ${median(xs).toFixed(1)} | ${median(xs.map((x, i) => x / base[i]!)).toFixed(3)}× | ${PG_URL ? '–' : median(walBytes[name]!).toFixed(0)} |`,
  )
