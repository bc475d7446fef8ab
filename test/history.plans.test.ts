import { afterAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { sqlLiteral, startApp } from './helpers'

// GET /history reads a page of changes newest first (sql/history/list.sql, list-by-target.sql),
// and a stale write asks whether its target still has any (has-changes.sql). The app prepares
// every statement by name (PGlite's runner, postgres.js), and after five runs the server may keep
// its generic plan, made without the parameters' values. On a node holding thousands of changes
// (bench/history-hot.ts: 20,000 of 70,000) the generic plan of list.sql read all of the project's
// changes and sorted them for a page (its optional filters, written `$2 is null or …`, were each
// counted as keeping about 0.5% of the rows), a later page of either list read every change newer
// than its cursor (the cursor a filter, not a bound of the index), and the custom plan of
// has-changes.sql was a sequential scan up to the node's first change. Each of them must read
// about a page in both plans: no sort, no sequential or bitmap scan, and the index scan passes
// no more rows than the page holds. And the pages must answer what they answered.
const app = await startApp()
afterAll(() => app.close())

const sql = (file: string) => readFileSync(join(import.meta.dir, '..', 'sql', 'history', file), 'utf8').replace(/^--.*$/gm, '')
const rolledBack = new Error('rolled back')
let runs = 0
/** EXPLAIN ANALYZE of the statement prepared by name, under this plan_cache_mode (in a transaction rolled back) */
async function plan(text: string, params: unknown[], mode: 'force_generic_plan' | 'force_custom_plan') {
  let out = ''
  await app.db
    .tx(async (tx) => {
      await tx.exec(`prepare history_plan as ${text}`)
      await tx.exec(`set local plan_cache_mode = ${mode}`)
      // a text of its own for each run: the runner keeps a prepared statement per text, with its columns
      const rows = await tx.query<Record<string, string>>(
        `explain (analyze, buffers, costs off, timing off, summary off) execute history_plan(${params.map(sqlLiteral).join(', ')}) -- ${++runs}`,
      )
      out = rows.map((r) => Object.values(r)[0]).join('\n')
      await tx.exec('deallocate history_plan')
      throw rolledBack
    })
    .catch((e) => {
      if (e !== rolledBack) throw e
    })
  return out
}

/** the plan reads `index` in order, and its scan passes at most `most` rows (those it returns and those its filter drops) */
function readsAPage(p: string, index: string, most: number) {
  expect(p).not.toMatch(/Sort|Seq Scan|Bitmap/)
  const lines = p.split('\n')
  const at = lines.findIndex((l) => new RegExp(`Index Scan (Backward )?using ${index} on changes`).test(l))
  expect(at).toBeGreaterThanOrEqual(0)
  const returned = Number(/actual rows=([\d.]+)/.exec(lines[at]!)![1])
  // the scan node's own lines, up to the next node
  const own = lines.slice(at + 1).filter((_, i, all) => !all.slice(0, i + 1).some((x) => x.includes('->')))
  const removed = own.map((l) => /Rows Removed by Filter: (\d+)/.exec(l)).find(Boolean)
  expect(returned + Number(removed?.[1] ?? 0)).toBeLessThanOrEqual(most)
}

const p = await app.project()
const add = await app.call('POST', '/api/v1/mutate', {
  body: { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'hot' } } },
})
const hot: string = add.body.node.id
// 3,000 changes of 500 other nodes first, then 6,000 of which two in three are the hot node's
// (a node that got busy), one a second up to now; an agent on every fifth, `mcp` on every seventh
const fill = (from: number, count: number, target: string) =>
  app.db.query(
    `insert into changes (project_id, at, user_name, agent, via, request_id, action, target_kind, target_id, target_type, before, after, fields)
    select $1, now() - make_interval(secs => 10000 - i), 'test', case when i % 5 = 0 then 'bot-a' end,
      case when i % 7 = 0 then 'mcp' else 'api' end, 'r-' || (i / 100), 'update', 'node', ${target}, 'goal',
      '{"parentId": null, "data": {"label": "b"}}', '{"parentId": null, "data": {"label": "a"}}', '["label"]'
    from generate_series($2::int, $2::int + $3::int - 1) as i`,
    [p, from, count],
  )
await fill(0, 3000, `'goal-x' || (i % 500)`)
await fill(3000, 6000, `case when i % 3 = 0 then 'goal-x' || (i % 500) else ${sqlLiteral(hot)} end`)
await app.db.exec('analyze changes')
const ids = async (where: string, params: unknown[]) =>
  (await app.db.query<{ id: string }>(`select id::text as id from changes where ${where} order by changes.id desc`, params)).map(
    (r) => r.id,
  )
const ofHot = await ids(`project_id = $1 and target_id = $2 and target_kind = 'node'`, [p, hot])
const ofProject = await ids('project_id = $1', [p])
const snapshot = (await app.db.query<{ s: string }>('select pg_current_snapshot()::text as s'))[0]!.s
const off = [null, null, null, null, null, null]

describe("history's reads on a node with thousands of changes", () => {
  it('read a page in their generic and custom plans', async () => {
    expect(ofHot.length).toBeGreaterThan(4000)
    for (const mode of ['force_generic_plan', 'force_custom_plan'] as const) {
      readsAPage(await plan(sql('list-by-target.sql'), [p, hot, ...off, null, null, 50], mode), 'changes_target', 50)
      readsAPage(await plan(sql('list-by-target.sql'), [p, hot, ...off, ofHot[3000], snapshot, 50], mode), 'changes_target', 50)
      readsAPage(await plan(sql('list.sql'), [p, ...off, null, null, 50], mode), 'changes_pkey', 50)
      readsAPage(await plan(sql('list.sql'), [p, ...off, ofProject[6000], snapshot, 50], mode), 'changes_pkey', 50)
      readsAPage(await plan(sql('has-changes.sql'), [p, 'node', hot], mode), 'changes_target', 1)
    }
  })

  /** every page of GET /history with this query, by its `next` cursors: the ids, in order */
  async function pages(query: string, limit: number) {
    const out: string[] = []
    let after = ''
    for (;;) {
      const res = await app.call('GET', `/api/v1/history?projectId=${p}&limit=${limit}${query}${after && `&after=${after}`}`)
      expect(res.status).toBe(200)
      out.push(...res.body.changes.map((c: { changeId: string }) => String(c.changeId)))
      if (!res.body.next) return out
      after = res.body.next
    }
  }

  it("later.sql (a revert's conflicts) reads the target's changes after the cut, not its whole history", async () => {
    // a cut 50 changes back: the scan of changes_target stops there. As the row comparison
    // `(target_id, id) > (…, $3)` it did not on PostgreSQL 15 (whose btree kept reading the
    // target's older entries, none of them returned): only the pages read tell
    for (const mode of ['force_generic_plan', 'force_custom_plan'] as const) {
      const p50 = await plan(sql('later.sql'), [p, [hot], ofHot[50]], mode)
      expect(p50).toMatch(/Index (Only )?Scan using changes_target on changes r/)
      const pages =
        /Index (?:Only )?Scan using changes_target[^\n]*\n(?:(?!\s*->)[^\n]*\n)*?\s*Buffers: shared ((?:hit|read)=\d+(?: (?:hit|read|dirtied|written)=\d+)*)/
          .exec(p50)![1]!
          .split(' ')
          .filter((b) => /^(hit|read)=/.test(b))
          .reduce((n, b) => n + Number(b.split('=')[1]), 0)
      expect(pages).toBeLessThanOrEqual(20)
    }
  })

  it('answer every change once, newest first, page by page, with and without filters', async () => {
    expect(await pages(`&nodeId=${hot}`, 200)).toEqual(ofHot)
    expect(await pages('', 200)).toEqual(ofProject)
    expect(await pages(`&nodeId=${hot}&agent=bot-a`, 37)).toEqual(
      await ids(`project_id = $1 and target_id = $2 and target_kind = 'node' and agent = 'bot-a'`, [p, hot]),
    )
    expect(await pages('&via=mcp&agent=bot-a', 50)).toEqual(await ids(`project_id = $1 and via = 'mcp' and agent = 'bot-a'`, [p]))
    const [since, until] = (
      await app.db.query<{ since: string; until: string }>(
        `select (now() - interval '3000 seconds')::timestamptz as since, (now() - interval '1000 seconds')::timestamptz as until`,
      )
    ).map((r) => [new Date(r.since).toISOString(), new Date(r.until).toISOString()])[0]!
    expect(await pages(`&nodeId=${hot}&since=${since}&until=${until}`, 150)).toEqual(
      await ids(`project_id = $1 and target_id = $2 and target_kind = 'node' and at >= $3 and at <= $4`, [p, hot, since, until]),
    )
  })
})
