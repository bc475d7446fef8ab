// What keeping the open memos' count (migration 0049) costs the writes that make no memo, and what
// its WHEN costs (issue 51, 3; bench/writes.md "Thirteenth pass: the open memos' count"): the
// statements on nodes of a goal's label update, a goal's add and a task's add (no kind: every
// single add's), a memo's label update, and the classify loop's statement making 100 tasks memos
// (no loop runs here), and a run of the classify loop (its tick) after a single task's add, under each variant in turn, in one process on one database, round by round
// in a turning order:
//   before 0049  its three triggers disabled, 0010's partial index nodes_open_memos there again
//   0049         as the migration leaves it: the triggers, no index
//   0049, index kept / no triggers: each half alone (the triggers beside the index; the index dropped, no triggers)
//   0049, exact WHEN / kind or status WHEN: the update trigger with another WHEN (exact: being an
//                    open memo changed, so a memo's label update calls nothing; kind or status: a
//                    job's status calls the function too)
// PGlite: this process's CPU (PGlite runs in it). PostgreSQL (BENCH_DATABASE_URL): the statement
// timed inside the backend (clock_timestamp around it, in a plpgsql loop of subtransactions rolled
// back), so the client and the network are left out. The project holds `--memos` open memos.
//
//   bun bench/open-memos-triggers.ts [--rounds 6] [--samples 300] [--memos 700] [--loop-samples 30] [--writer-rounds 0]
// --writer-rounds N: and eight writers of goal labels (POST /mutate, 1 s a round), before 0049 and 0049 in turns
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/open-memos-triggers.ts

import type { Db } from '../src/db'
import { tick } from '../src/nodes/classify-loop'
import { startBenchServer } from './lib/app'
import { benchProject, cpuMsRolledBack, fillMemos, median } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const ROUNDS = Number(opt('rounds', '6'))
const SAMPLES = Number(opt('samples', '300'))
const MEMOS = Number(opt('memos', '700'))
const PG_URL = process.env.BENCH_DATABASE_URL
const LOOP_SAMPLES = Number(opt('loop-samples', '30'))
const WRITER_ROUNDS = Number(opt('writer-rounds', '0'))
const LOOP_OP = "the classify loop's run after a task's add (a memo; PostgreSQL: wall ms of the run)"

const INDEX = `create index if not exists nodes_open_memos on nodes (project_id)
  where type = 'task' and data ->> 'kind' = 'memo' and data ->> 'status' is distinct from 'done'`
// 0049's: any update of a node of kind memo before or after
const WHEN_0049 = `(old.data @> '{"kind": "memo"}' or new.data @> '{"kind": "memo"}')`
// exact: being an open memo changed (a memo's label update calls nothing; the expression is larger)
const WHEN_EXACT = `((new.data @> '{"kind": "memo"}' and not new.data @> '{"status": "done"}')
  <> (old.data @> '{"kind": "memo"}' and not old.data @> '{"status": "done"}'))`
// what changed: kind or status (a job's status calls the function too)
const WHEN_FIELDS = `(new.data -> 'kind' is distinct from old.data -> 'kind' or new.data -> 'status' is distinct from old.data -> 'status')`
const updateTrigger = (when: string) => `drop trigger z_open_memos_update on nodes;
  create trigger z_open_memos_update after update on nodes for each row when ${when} execute function nodes_open_memos_moved();`
const triggers = (on: boolean) =>
  ['insert', 'update', 'delete'].map((op) => `alter table nodes ${on ? 'enable' : 'disable'} trigger z_open_memos_${op};`).join('\n')

const insertTrigger = (when: string) => `drop trigger z_open_memos_insert on nodes;
  create trigger z_open_memos_insert after insert on nodes for each row when ${when} execute function nodes_open_memos_moved();`
const INSERT_0049 = `(new.data @> '{"kind": "memo"}')`
const INSERT_TEXT = `(new.data ->> 'kind' = 'memo')`
const VARIANTS: Record<string, string> = {
  'before 0049': `${updateTrigger(WHEN_0049)} ${insertTrigger(INSERT_0049)} ${triggers(false)} ${INDEX}`,
  '0049': `${updateTrigger(WHEN_0049)} ${insertTrigger(INSERT_0049)} ${triggers(true)} drop index if exists nodes_open_memos`,
  "0049, insert WHEN ->> 'kind'": `${updateTrigger(WHEN_0049)} ${insertTrigger(INSERT_TEXT)} ${triggers(true)} drop index if exists nodes_open_memos`,
  '0049, index kept': `${updateTrigger(WHEN_0049)} ${insertTrigger(INSERT_0049)} ${triggers(true)} ${INDEX}`,
  '0049, no triggers': `${triggers(false)} drop index if exists nodes_open_memos`,
  '0049, exact WHEN': `${updateTrigger(WHEN_EXACT)} ${insertTrigger(INSERT_0049)} ${triggers(true)} drop index if exists nodes_open_memos`,
  '0049, kind or status WHEN': `${updateTrigger(WHEN_FIELDS)} ${insertTrigger(INSERT_0049)} ${triggers(true)} drop index if exists nodes_open_memos`,
}

const s = await startBenchServer(PG_URL)
try {
  const { call, goal } = await benchProject(s)
  await fillMemos(call, MEMOS)
  const db: Db = s.deps.db
  const memo = (await db.query<{ id: string }>(`select id from nodes where project_id = 'ww' and data ->> 'kind' = 'memo' limit 1`))[0]!.id
  // 100 tasks not classified yet, for the classify loop's statement (each made a memo)
  await call({
    action: 'batch',
    projectId: 'ww',
    mutations: Array.from({ length: 100 }, (_, i) => ({ action: 'add', node: { type: 'task', data: { label: `U${i}` } } })),
  })
  await db.exec('analyze')
  // the statements on nodes, as the app sends them in substance (sql/nodes/update.sql sets more columns)
  const OPS: Record<string, string> = {
    "a goal's label update": `update nodes set data = data || jsonb_build_object('label', 'u' || random()), updated_at = now() where project_id = 'ww' and id = '${goal}'`,
    "a goal's add": `insert into nodes (project_id, id, type, data) values ('ww', 'goal-x', 'goal', '{"label": "G"}')`,
    "a task's add": `insert into nodes (project_id, id, type, data) values ('ww', 'task-x', 'task', '{"label": "T"}')`,
    // as sql/nodes/set-classified-many.sql sets them (its rev and field_revs left out)
    "the classify loop's 100 tasks made memos (one statement)": `update nodes set data = data || '{"kind": "memo"}', classified_at = now(), updated_at = now() where project_id = 'ww' and type = 'task' and classified_at is null`,
    "a memo's label update": `update nodes set data = data || jsonb_build_object('label', 'u' || random()), updated_at = now() where project_id = 'ww' and id = '${memo}'`,
  }
  if (PG_URL)
    await db.exec(`create or replace function bench_stmt_ms(n integer, stmt text) returns float8
language plpgsql as $$
declare
  t0 timestamptz;
  xs float8[] := '{}';
begin
  for i in 1..n loop
    begin
      t0 := clock_timestamp();
      execute stmt;
      xs := xs || extract(epoch from clock_timestamp() - t0) * 1000;
      raise exception using errcode = 'P0001';
    exception when sqlstate 'P0001' then
      null;
    end;
  end loop;
  return (select percentile_disc(0.5) within group (order by x) from unnest(xs) x);
end
$$`)
  const measure = async (sql: string): Promise<number> => {
    if (!PG_URL) return cpuMsRolledBack(db, (tx) => tx.exec(sql), { samples: SAMPLES, warmup: 5 })
    // a function of the bench's own database (dropped with it); 5 runs first, not counted
    await db.query('select bench_stmt_ms(5, $1)', [sql])
    return (await db.query<{ ms: number }>('select bench_stmt_ms($1, $2) as ms', [SAMPLES, sql]))[0]!.ms
  }
  const names = Object.keys(VARIANTS)
  const times: Record<string, Record<string, number[]>> = {}
  for (let r = 0; r < ROUNDS; r++) {
    const order = names.map((_, i) => names[(i + r) % names.length]!)
    for (const v of order) {
      await db.exec(VARIANTS[v]!)
      for (const [op, sql] of Object.entries(OPS)) ((times[op] ??= {})[v] ??= []).push(await measure(sql))
    }
  }
  // the classify loop's run after a single task's add (the loop is woken after each write), the task
  // added untimed (a memo's label): the run's wall time (PostgreSQL), this process's CPU (PGlite);
  // the 100 tasks above classified first
  await tick(s.deps, new Date())
  for (let r = 0; r < ROUNDS; r++) {
    const order = names.map((_, i) => names[(i + r) % names.length]!)
    for (const v of order) {
      await db.exec(VARIANTS[v]!)
      const runs: number[] = []
      for (let i = 0; i < LOOP_SAMPLES; i++) {
        await call({ action: 'add', projectId: 'ww', node: { type: 'task', data: { label: `Idea: loop ${r} ${v} ${i}` } } })
        const t0 = performance.now()
        const c0 = process.cpuUsage()
        if ((await tick(s.deps, new Date())) !== 1) throw new Error('the loop did not classify the one task')
        const c = process.cpuUsage(c0)
        runs.push(PG_URL ? performance.now() - t0 : (c.user + c.system) / 1000)
      }
      ;((times[LOOP_OP] ??= {})[v] ??= []).push(median(runs))
    }
  }
  // eight writers, each updating its own goal's label through POST /mutate for 1 s, before 0049
  // and 0049 in turns (`--writer-rounds N`, none by default): writes a second
  const goals: string[] = []
  for (let i = 0; i < (WRITER_ROUNDS ? 8 : 0); i++)
    goals.push((await call({ action: 'add', projectId: 'ww', node: { type: 'goal', data: { label: `W${i}` } } })).node!.id)
  const writers: Record<string, number[]> = { 'before 0049': [], '0049': [] }
  for (let r = -1; r < WRITER_ROUNDS; r++)
    for (const v of r % 2 ? ['before 0049', '0049'] : ['0049', 'before 0049']) {
      await db.exec(VARIANTS[v]!)
      const t0 = performance.now()
      const end = t0 + 1000
      let n = 0
      await Promise.all(
        goals.map(async (id) => {
          while (performance.now() < end) {
            await call({ action: 'update', projectId: 'ww', nodeId: id, data: { label: `w${n}` } })
            n++
          }
        }),
      )
      if (r >= 0) writers[v]!.push((n * 1000) / (performance.now() - t0))
    }
  await db.exec(VARIANTS['0049']!)
  if (WRITER_ROUNDS)
    console.log(
      `eight writers of goal labels, ${WRITER_ROUNDS} rounds of 1 s, writes a second (median; rounds): ${Object.entries(writers)
        .map(([v, xs]) => `${v} ${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`)
        .join(
          ', ',
        )}; 0049 ÷ before, round by round: median ${median(writers['0049']!.map((x, i) => x / writers['before 0049']![i]!)).toFixed(2)}\n`,
    )
  console.log(
    `${PG_URL ? 'PostgreSQL, ms inside the backend' : "PGlite, this process's CPU ms"} (p50 of the rounds' p50s), ${ROUNDS} rounds of ${SAMPLES}, ${MEMOS} open memos\n`,
  )
  console.log(`| statement | ${names.join(' | ')} |\n|---|${names.map(() => '---|').join('')}`)
  for (const op of [...Object.keys(OPS), LOOP_OP])
    console.log(`| ${op} | ${names.map((v) => median(times[op]![v]!).toFixed(4)).join(' | ')} |`)
} finally {
  await s.close()
}
