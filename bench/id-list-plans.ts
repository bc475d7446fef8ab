// The generic plans of the statements that look rows up by a list of ids (`id = any($2)`,
// bench/writes.md "Eleventh pass: lists of ids and their generic plans"): each statement prepared,
// explained under plan_cache_mode = force_generic_plan, on (a) one project of N nodes in tables no
// analyze has seen, (b) the same analyzed, and (c) after 3,000 projects of 3 nodes each and `analyze`; and each
// run's time (p50 of --runs executions, after five custom plans, as the plan cache would), and
// which plan the plan cache runs (`generic 7 custom 5`: after twelve executions of the prepared
// statement, pg_prepared_statements' counts; `custom 12`: it plans every run again).
//
//   bun bench/id-list-plans.ts [--nodes 4000] [--runs 200] [--only get-many,lock-many] [--root DIR] [--analyze]
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/id-list-plans.ts

import { existsSync, readFileSync } from 'node:fs'
import type { Db } from '../src/db'
import { startBenchServer } from './lib/app'
import { sqlLiteral } from './lib/sql-literal'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const NODES = Number(opt('nodes', '4000'))
const RUNS = Number(opt('runs', '200'))
const ONLY = opt('only', '')
// where the statements are read from: another checkout's root (`git worktree add`), to compare
const ROOT = opt('root', '.')
const PG_URL = process.env.BENCH_DATABASE_URL
// explain (analyze, buffers) in place of explain: the rows each node read, and the pages (the run rolled back)
const ANALYZE = args.includes('--analyze')

const P = 'pbig'
const ids = ['n0001', 'n2000', 'n3999']
const statements: { name: string; file: string; params: unknown[] }[] = [
  { name: 'nodes/get-many', file: 'sql/nodes/get-many.sql', params: [P, ids] },
  { name: 'nodes/lock-many', file: 'sql/nodes/lock-many.sql', params: [P, ids] },
  { name: 'nodes/with-ancestors', file: 'sql/nodes/with-ancestors.sql', params: [P, ids] },
  { name: 'nodes/subtree', file: 'sql/nodes/subtree.sql', params: [P, ['n3999']] },
  { name: 'search/ancestors-many', file: 'sql/search/ancestors-many.sql', params: [P, ids] },
  { name: 'history/get-many', file: 'sql/history/get-many.sql', params: [P, [1, 2000, 3999]] },
  { name: 'history/latest-of-targets', file: 'sql/history/latest-of-targets.sql', params: [P, ids, 10] },
  // n2000 has a history of 1,500 more changes (fill); $3 (set after the fill) leaves its last 3 after it
  { name: 'history/later', file: 'sql/history/later.sql', params: [P, ids, 0] },
  { name: 'claims/lock-nodes', file: 'sql/claims/lock-nodes.sql', params: [P, ids] },
  { name: 'claims/extend-tokens', file: 'sql/claims/extend-tokens.sql', params: [P, ['t0001', 't2000'], '2020-01-01'] },
  { name: 'claims/end-nodes', file: 'sql/claims/end-nodes.sql', params: [P, ids, '2020-01-01'] },
  { name: 'work/states', file: 'sql/work/states.sql', params: [P, ids] },
  { name: 'nodes/delete-many', file: 'sql/nodes/delete-many.sql', params: [P, ['n3999', 'n2000', 'none'], null, null] },
  // the same statement with the node deleted by name logged (formerly sql/nodes/delete-logged.sql)
  { name: 'nodes/delete-logged', file: 'sql/nodes/delete-many.sql', params: [P, ['n3999', 'n2000', 'none'], 'n3999', '{}'] },
  // bench/writes.md "Twelfth pass: the last lists of ids"
  { name: 'nodes/lock-with-intent', file: 'sql/nodes/lock-with-intent.sql', params: [P, 'n2000', ['label', 'status'], '2020-01-01'] },
  { name: 'search/load-vectors', file: 'sql/search/load-vectors.sql', params: [P, 'e', ['h0001', 'h2000', 'h3999']] },
  // all of them: the same file with null before, a statement of its own since
  { name: 'search/all-vectors', file: 'sql/search/all-vectors.sql', params: [P, 'e'] },
  { name: 'search/prune-vectors', file: 'sql/search/prune-vectors.sql', params: [P, 'e', ['h0001', 'h2000', 'h3999']] },
  { name: 'search/events-since', file: 'sql/search/events-since.sql', params: [P, NODES - 10, '2020-01-01', [NODES - 5, NODES - 4], '0'] },
  { name: 'search/events-all-since', file: 'sql/search/events-all-since.sql', params: [NODES - 10, '2020-01-01', [NODES - 5], '0'] },
  { name: 'share/count-goals', file: 'sql/share/count-goals.sql', params: [P, JSON.stringify(['n0000', 'n2000', 'n3999'])] },
  {
    name: 'nodes/set-classified-many',
    file: 'sql/nodes/set-classified-many.sql',
    params: [JSON.stringify(ids.map((id) => ({ project_id: P, id, data: { label: 'y' } })))],
  },
  {
    name: 'webhooks/record-attempts',
    file: 'sql/webhooks/record-attempts.sql',
    params: [
      JSON.stringify(
        ['d0001', 'd2000', 'd3999'].map((id, n) => ({
          n,
          id,
          attempts: 0,
          status: 'delivered',
          http_status: 200,
          error: null,
          attempted_at: '2020-01-01T00:00:00Z',
          next_attempt_at: '2020-01-01T00:00:00Z',
        })),
      ),
    ],
  },
].filter((s) => !ONLY || ONLY.split(',').some((o) => s.name.includes(o)))

async function fill(db: Db, project: string, n: number, prefix: string) {
  await db.exec(`insert into projects (id, name, owner_id) select '${project}', '${project}', (select id from users limit 1)`)
  await db.exec(`insert into nodes (project_id, id, type, parent_id, data)
    select '${project}', '${prefix}' || lpad(i::text, 4, '0'), case when i = 0 then 'goal' else 'job' end,
      case when i = 0 then null else '${prefix}' || lpad((i / 10)::text, 4, '0') end, jsonb_build_object('label', 'x' || i)
    from generate_series(0, ${n - 1}) i`)
  await db.exec(`insert into changes (project_id, via, request_id, action, target_kind, target_id, fields)
    select '${project}', 'api', 'r', 'add', 'node', '${prefix}' || lpad(i::text, 4, '0'), '[]' from generate_series(0, ${n - 1}) i`)
  // one node with a long history (bench/writes.md "Thirteenth pass: history/later")
  await db.exec(`insert into changes (project_id, via, request_id, action, target_kind, target_id, fields)
    select '${project}', 'api', 'r', 'update', 'node', '${prefix}2000', '["label"]' from generate_series(1, 1500) i`)
  await db.exec(`insert into claims (project_id, node_id, agent, token_hash, expires_at, claimed_at, lease_seconds)
    select '${project}', '${prefix}' || lpad(i::text, 4, '0'), 'a', '${project}t' || lpad(i::text, 4, '0'), now(), now(), 60 from generate_series(0, ${n - 1}) i`)
  await db.exec(`insert into work_items (project_id, node_id, type, open, blocked, urgent, iter_rank, focus, created_at, ord, touched_tx, blocked_before)
    select '${project}', '${prefix}' || lpad(i::text, 4, '0'), 'job', true, false, 1, 0, 1, now(), i, 0, false from generate_series(0, ${n - 1}) i`)
  // one actor on each node, an edit intent on half of them (live.md 4), expired or not
  await db.exec(`insert into presence (project_id, actor_key, user_id, user_name, via, node_id, field, since, expires_at)
    select '${project}', 'a' || i, 'u', 'u', 'app', '${prefix}' || lpad(i::text, 4, '0'), case when i % 2 = 0 then 'label' end, now(), now()
    from generate_series(0, ${n - 1}) i`)
  await db.exec(`insert into search_vectors (project_id, embedder, text_hash, vector)
    select '${project}', 'e', 'h' || lpad(i::text, 4, '0'), '\\x00' from generate_series(0, ${n - 1}) i`)
  await db.exec(`insert into events (project_id, type, payload)
    select '${project}', 'node.updated', '{}' from generate_series(0, ${n - 1}) i`)
  await db.exec(`insert into webhooks (id, project_id, url, events, secret) values ('w${project}', '${project}', 'http://x', '[]', 's')`)
  await db.exec(`insert into webhook_deliveries (id, webhook_id, event_seq)
    select 'd' || ${prefix === 'n' ? "''" : `'${project}'`} || lpad(i::text, 4, '0'), 'w${project}', e.seq
    from (select seq, row_number() over (order by seq) - 1 as i from events where project_id = '${project}') e`)
}

async function explain(db: Db, text: string, params: unknown[]) {
  let plan = ''
  await db
    .tx(async (tx) => {
      await tx.exec(`prepare s as ${text.replace(/^--.*$/gm, '')}`)
      await tx.exec('set local plan_cache_mode = force_generic_plan')
      const how = ANALYZE ? '(analyze, buffers, timing off) ' : ''
      const rows = await tx.query<Record<string, string>>(`explain ${how}execute s(${params.map(sqlLiteral).join(', ')})`)
      await tx.exec('deallocate s')
      plan = rows.map((r) => Object.values(r)[0]).join('\n')
      throw new Error('rollback')
    })
    .catch((e: Error) => {
      if (e.message !== 'rollback') throw e
    })
  return plan
}

/** the plan cache's choice: twelve executions of the statement prepared, then its counts (each in a transaction rolled back) */
async function planCache(db: Db, text: string, params: unknown[]) {
  let counts = ''
  await db
    .tx(async (tx) => {
      await tx.exec(`prepare id_list_cache as ${text.replace(/^--.*$/gm, '')}`)
      for (let i = 0; i < 12; i++) await tx.exec(`execute id_list_cache(${params.map(sqlLiteral).join(', ')})`)
      const [c] = await tx.query<{ generic_plans: number; custom_plans: number }>(
        `select generic_plans, custom_plans from pg_prepared_statements where name = 'id_list_cache'`,
      )
      counts = `generic ${c!.generic_plans} custom ${c!.custom_plans}`
      await tx.exec('deallocate id_list_cache')
      throw new Error('rollback')
    })
    .catch((e: Error) => {
      if (e.message !== 'rollback') throw e
    })
  return counts
}

async function timeIt(db: Db, text: string, params: unknown[]) {
  // each run in a transaction rolled back (delete-many, end-nodes, extend-tokens change rows)
  const times: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now()
    await db
      .tx(async (tx) => {
        await tx.query(text, params)
        throw new Error('rollback')
      })
      .catch(() => {})
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]!.toFixed(3)
}

const s = await startBenchServer(PG_URL)
try {
  const db: Db = s.deps.db
  for (const t of ['nodes', 'changes', 'claims', 'work_items', 'events', 'presence', 'search_vectors', 'webhook_deliveries'])
    await db.exec(`alter table ${t} disable trigger all`)
  await fill(db, P, NODES, 'n')
  // claims' tokens for the big project are `pbigt0001`…
  for (const st of statements) if (st.name === 'claims/extend-tokens') st.params[1] = ['pbigt0001', 'pbigt2000']
  // history/later: after all but the last 3 changes of n2000's 1,501 (the other two targets' are older)
  const [last] = await db.query<{ id: number }>(`select max(id)::int as id from changes where project_id = '${P}' and target_id = 'n2000'`)
  for (const st of statements) if (st.name === 'history/later') st.params[2] = last!.id - 3
  const report = async (label: string) => {
    console.log(`\n## ${PG_URL ? 'postgres' : 'pglite'}: ${label}`)
    for (const st of statements) {
      if (!existsSync(`${ROOT}/${st.file}`)) continue
      const text = readFileSync(`${ROOT}/${st.file}`, 'utf8')
      const plan = await explain(db, text, st.params)
      const cache = await planCache(db, text, st.params)
      const ms = await timeIt(db, text, st.params)
      console.log(`\n### ${st.name}: p50 ${ms} ms, ${cache}\n${plan}`)
    }
  }
  await report(`one project of ${NODES} nodes, never analyzed`)
  await db.exec('analyze')
  await report(`one project of ${NODES} nodes, analyzed`)
  await db.exec(
    `insert into projects (id, name, owner_id) select 'q' || i, 'q' || i, (select id from users limit 1) from generate_series(1, 3000) i`,
  )
  await db.exec(`insert into nodes (project_id, id, type, parent_id, data)
    select 'q' || (i / 3 + 1), 'n' || lpad((i % 3)::text, 4, '0'), 'job', null, '{}' from generate_series(0, 8999) i`)
  await db.exec(`insert into changes (project_id, via, request_id, action, target_kind, target_id, fields)
    select 'q' || (i / 3 + 1), 'api', 'r', 'add', 'node', 'n' || lpad((i % 3)::text, 4, '0'), '[]' from generate_series(0, 8999) i`)
  await db.exec(`insert into claims (project_id, node_id, agent, token_hash, expires_at, claimed_at, lease_seconds)
    select 'q' || (i / 3 + 1), 'n' || lpad((i % 3)::text, 4, '0'), 'a', 'q' || i, now(), now(), 60 from generate_series(0, 8999) i`)
  await db.exec(`insert into work_items (project_id, node_id, type, open, blocked, urgent, iter_rank, focus, created_at, ord, touched_tx, blocked_before)
    select 'q' || (i / 3 + 1), 'n' || lpad((i % 3)::text, 4, '0'), 'job', true, false, 1, 0, 1, now(), i, 0, false from generate_series(0, 8999) i`)
  await db.exec(`insert into presence (project_id, actor_key, user_id, user_name, via, node_id, field, since, expires_at)
    select 'q' || (i / 3 + 1), 'a' || (i % 3), 'u', 'u', 'app', 'n' || lpad((i % 3)::text, 4, '0'), 'label', now(), now() from generate_series(0, 8999) i`)
  await db.exec(`insert into search_vectors (project_id, embedder, text_hash, vector)
    select 'q' || (i / 3 + 1), 'e', 'h' || lpad((i % 3)::text, 4, '0'), '\\x00' from generate_series(0, 8999) i`)
  await db.exec(`insert into events (project_id, type, payload)
    select 'q' || (i / 3 + 1), 'node.updated', '{}' from generate_series(0, 8999) i`)
  await db.exec(`insert into webhooks (id, project_id, url, events, secret)
    select 'wq' || i, 'q' || i, 'http://x', '[]', 's' from generate_series(1, 3000) i`)
  await db.exec(`insert into webhook_deliveries (id, webhook_id, event_seq)
    select 'dq' || seq, 'w' || project_id, seq from events where project_id like 'q%'`)
  await db.exec('analyze')
  await report(`3,000 projects of 3 nodes and one of ${NODES}, analyzed`)
} finally {
  await s.close()
}
