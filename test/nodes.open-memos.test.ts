import { afterAll, describe, expect, it } from 'bun:test'
import { restore } from '../src/backup/restore'
import type { Db } from '../src/db'
import { migrate } from '../src/db/migrate'
import { classifyTask } from '../src/nodes/classify'
import { MEMO_INBOX_THRESHOLD } from '../src/nodes/service'
import { emptyPglite, emptyPostgres } from './backup-db'
import { ADMIN_TOKEN, startApp } from './helpers'

// The project's open memos (tasks of kind memo not done), which the inbox_overflow advisory
// reports exactly (api.md), are kept by the writes (migration 0049: node_open_memos, moved by row
// triggers on nodes) and read by a task's add in the statement that reserves its id. The app runs
// with its loops, so the classify loop makes the memos as it does for users; every write that can
// make or unmake a memo is checked against a recount: adds, the loop's classification, classify,
// kind and status updates, deletes of a node and of a subtree, restore, revert, batch, an import,
// a backup restored, a backup from before 0049 migrated, and random writes.
const PG_URL = process.env.TEST_DATABASE_URL
const app = await startApp({}, { loops: true })
afterAll(() => app.close())

const MEMO = (i: number | string) => `Idea: a dark theme for the canvas ${i}`
const TODO = (i: number | string) => `Fix the login button ${i}`
// the labels classify as the test needs (the loop's classifier is src/nodes/classify.ts)
expect(classifyTask({ label: MEMO(1) }).kind).toBe('memo')
expect(classifyTask({ label: TODO(1) }).kind).toBe('do-it')

const mutate = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  app.call('POST', '/api/v1/mutate', { body, headers })
const ok = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
  const res = await mutate(body, headers)
  expect([res.status, res.body.errors]).toEqual([200, undefined])
  return res.body
}

const RECOUNT = `select count(*)::int as n from nodes
  where project_id = $1 and type = 'task' and data ->> 'kind' = 'memo' and data ->> 'status' is distinct from 'done'`
/** the project's open memos counted over its nodes */
const recount = async (db: Db, p: string) => (await db.query<{ n: number }>(RECOUNT, [p]))[0]!.n
/** the count the writes keep (no row: none ever) */
const kept = async (db: Db, p: string) =>
  (await db.query<{ n: number }>('select coalesce((select memos from node_open_memos where project_id = $1), 0)::int as n', [p]))[0]!.n

/** polls `fn` until it returns true, with a generous deadline */
async function until(fn: () => Promise<boolean>, what: string, timeoutMs = 60_000) {
  const end = Date.now() + timeoutMs
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`${what} not reached within ${timeoutMs} ms`)
    await Bun.sleep(25)
  }
}

/** the classify loop has looked at every task of the project (a memo's label is a memo now) */
const settled = (p: string) =>
  until(
    async () =>
      (
        await app.db.query<{ n: number }>(
          `select count(*)::int as n from nodes where project_id = $1 and type = 'task' and classified_at is null`,
          [p],
        )
      )[0]!.n === 0,
    `the classify loop done with ${p}`,
  )

let probes = 0
/**
 * Once the loop is done with the project: the kept count equals the recount, and the advisory of a
 * task's add (one the loop will make a do-it, so no memo) reports exactly that count once over the
 * threshold. Returns the count.
 */
async function check(p: string, expected?: number): Promise<number> {
  await settled(p)
  const n = await recount(app.db, p)
  if (expected !== undefined) expect(n).toBe(expected)
  expect(await kept(app.db, p)).toBe(n)
  const added = await ok({ action: 'add', projectId: p, node: { type: 'task', data: { label: TODO(`probe ${++probes}`) } } })
  // beside others (a possible duplicate of an earlier probe)
  const advisories: Record<string, unknown>[] = added._meta.advisories ?? (added._meta.advisory ? [added._meta.advisory] : [])
  expect(advisories.find((a) => a.type === 'inbox_overflow')).toEqual(
    n > MEMO_INBOX_THRESHOLD
      ? { type: 'inbox_overflow', memos: n, threshold: MEMO_INBOX_THRESHOLD, suggestedFlow: 'task-curate' }
      : undefined,
  )
  return n
}

const taskIds = async (p: string, where: string) =>
  (
    await app.db.query<{ id: string }>(
      `select id from nodes where project_id = $1 and type = 'task' and ${where} order by (split_part(id, '-', 2))::int`,
      [p],
    )
  ).map((r) => r.id)
const memoIds = (p: string) => taskIds(p, `data ->> 'kind' = 'memo' and data ->> 'status' is distinct from 'done'`)

describe('the inbox_overflow advisory', () => {
  it('reports the open memos exactly through every write that makes or unmakes one', async () => {
    const p = await app.project()
    // 24 tasks the loop makes memos, 3 it makes do-its, added in one batch
    await ok({
      action: 'batch',
      projectId: p,
      mutations: [
        ...Array.from({ length: 24 }, (_, i) => ({ action: 'add', node: { type: 'task', data: { label: MEMO(i) } } })),
        ...Array.from({ length: 3 }, (_, i) => ({ action: 'add', node: { type: 'task', data: { label: TODO(i) } } })),
      ],
    })
    await check(p, 24)
    // single adds, classified by the loop
    for (const i of [24, 25]) await ok({ action: 'add', projectId: p, node: { type: 'task', data: { label: MEMO(i) } } })
    await check(p, 26)

    // kind and status updates
    const [m1, m2, m3] = await memoIds(p)
    await ok({ action: 'update', projectId: p, nodeId: m1, data: { kind: 'do-it' } })
    await check(p, 25)
    await ok({ action: 'update', projectId: p, nodeId: m2, data: { status: 'done' } })
    await check(p, 24)
    await ok({ action: 'update', projectId: p, nodeId: m2, data: { label: 'Idea: renamed, still done' } })
    await check(p, 24)
    await ok({ action: 'update', projectId: p, nodeId: m2, data: { status: 'open' } })
    await check(p, 25)
    await ok({ action: 'update', projectId: p, nodeId: m3, data: { label: MEMO('relabelled') } })
    await check(p, 25)

    // classify: the task made a do-it by hand above is a memo again, and its answer says so exactly
    const classified = await ok({ action: 'classify', projectId: p, nodeId: m1 })
    expect(classified.node.data.kind).toBe('memo')
    expect(classified._meta.advisory).toEqual({
      type: 'inbox_overflow',
      memos: 26,
      threshold: MEMO_INBOX_THRESHOLD,
      suggestedFlow: 'task-curate',
    })
    await check(p, 26)

    // a delete, and a restore of it
    await ok({ action: 'delete', projectId: p, nodeId: m3 })
    await check(p, 25)
    await ok({ action: 'restore', projectId: p, nodeId: m3 })
    await check(p, 26)

    // a subtree's delete (tasks have no parent: it holds none, and leaves the count as it was)
    await ok({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
        { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
        { action: 'add', node: { id: 'draft-j', type: 'job', parentId: 'draft-a', data: { label: 'J' } } },
        // four more memos, their kinds set in the batch that adds them
        ...Array.from({ length: 5 }, (_, i) => ({
          action: 'add',
          node: { id: `draft-t${i}`, type: 'task', data: { label: TODO(`batched ${i}`) } },
        })),
        ...Array.from({ length: 5 }, (_, i) => ({ action: 'update', nodeId: `draft-t${i}`, data: { kind: i < 4 ? 'memo' : 'do-it' } })),
      ],
    })
    await check(p, 30)
    const goal = (await app.db.query<{ id: string }>(`select id from nodes where project_id = $1 and type = 'goal'`, [p]))[0]!.id
    await ok({ action: 'delete', projectId: p, nodeId: goal })
    await check(p, 30)

    // memos deleted in a batch, and the revert of that batch bringing them back
    const gone = (await memoIds(p)).slice(0, 3)
    const deleted = await ok(
      { action: 'batch', projectId: p, mutations: gone.map((nodeId) => ({ action: 'delete', nodeId })) },
      { prefer: 'change-ids' },
    )
    await check(p, 27)
    await ok({ action: 'revert', projectId: p, changeIds: deleted.changeIds })
    await check(p, 30)

    // a batch that makes, unmakes and deletes memos together
    const [a, b, c, d] = await memoIds(p)
    const [todo] = await taskIds(p, `data ->> 'kind' = 'do-it'`)
    await ok({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'update', nodeId: a, data: { kind: 'do-it' } },
        { action: 'update', nodeId: b, data: { status: 'done' } },
        { action: 'delete', nodeId: c },
        { action: 'update', nodeId: todo, data: { kind: 'memo' } },
        { action: 'update', nodeId: d, data: { label: 'Idea: only the label' } },
        { action: 'add', node: { id: 'draft-x', type: 'task', data: { label: TODO('made a memo') } } },
        { action: 'update', nodeId: 'draft-x', data: { kind: 'memo' } },
      ],
    })
    await check(p, 29)

    // an import of the project's export: the new project's memos are counted as its own
    const bundle = await app.call('GET', `/api/v1/export-okf?projectId=${p}`)
    expect(bundle.status).toBe(200)
    const imported = await app.call('POST', '/api/v1/import-okf', { body: { files: bundle.body.files } })
    expect([imported.status, imported.body.errors]).toEqual([200, undefined])
    const q = imported.body.project.id as string
    await check(q, 29)
    await check(p, 29)
  })
})

describe('the kept count', () => {
  it('equals a recount after random writes in several projects', async () => {
    let seed = 51
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed / 2 ** 31
    }
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!
    const projects = [await app.project(), await app.project()]
    const changeIds: Record<string, string[][]> = {}
    for (let step = 0; step < 60; step++) {
      const p = pick(projects)
      const tasks = await taskIds(p, 'true')
      // an add sends no kind (the loop or a later update gives it)
      const data = () => {
        const d: Record<string, unknown> = { label: random() < 0.5 ? MEMO(step) : TODO(step) }
        if (random() < 0.2) d.status = 'done'
        return d
      }
      const roll = random()
      if (roll < 0.3 || tasks.length < 3) await ok({ action: 'add', projectId: p, node: { type: 'task', data: data() } })
      else if (roll < 0.55)
        await ok({
          action: 'update',
          projectId: p,
          nodeId: pick(tasks),
          data: pick([{ kind: 'memo' }, { kind: 'do-it' }, { status: 'done' }, { status: 'open' }, { label: MEMO(step) }]),
        })
      else if (roll < 0.65) {
        const res = await ok({ action: 'delete', projectId: p, nodeId: pick(tasks) }, { prefer: 'change-ids' })
        ;(changeIds[p] ??= []).push(res.changeIds)
      } else if (roll < 0.72 && changeIds[p]?.length) {
        const ids = changeIds[p]!.splice(Math.floor(random() * changeIds[p]!.length), 1)[0]!
        await ok({ action: 'revert', projectId: p, changeIds: ids })
      } else if (roll < 0.8) await ok({ action: 'classify', projectId: p, nodeId: pick(tasks) })
      else {
        const named = [...new Set([pick(tasks), pick(tasks), pick(tasks)])]
        await ok({
          action: 'batch',
          projectId: p,
          mutations: [
            { action: 'add', node: { id: 'draft-1', type: 'task', data: data() } },
            { action: 'add', node: { type: 'task', data: data() } },
            { action: 'update', nodeId: 'draft-1', data: { kind: pick(['memo', 'do-it']) } },
            ...named.slice(1).map((id) => ({
              action: 'update',
              nodeId: id,
              data: pick([{ kind: 'memo' }, { kind: 'do-it' }, { status: 'done' }, { status: 'open' }]),
            })),
            { action: 'delete', nodeId: named[0] },
          ],
        })
      }
      if (step % 10 === 9) for (const q of projects) await check(q)
    }
    for (const q of projects) {
      await settled(q)
      expect(await kept(app.db, q)).toBe(await recount(app.db, q))
    }
    // a project deleted takes its count along (the foreign keys' cascade, the nodes' triggers beside it)
    await app.db.query('delete from projects where id = $1', [projects[0]])
    expect(await app.db.query('select * from node_open_memos where project_id = $1', [projects[0]])).toEqual([])
    expect(await kept(app.db, projects[1]!)).toBe(await recount(app.db, projects[1]!))
  })
})

describe('concurrent writes', () => {
  it('keep the count exact, and wait for each other without a deadlock (the classify loop among them)', async () => {
    const p = await app.project()
    await ok({
      action: 'batch',
      projectId: p,
      mutations: Array.from({ length: 40 }, (_, i) => ({ action: 'add', node: { type: 'task', data: { label: MEMO(`c${i}`) } } })),
    })
    await check(p, 40)
    const t = await taskIds(p, `data ->> 'kind' = 'memo'`)
    for (const id of t.slice(20, 25)) await ok({ action: 'update', projectId: p, nodeId: id, data: { kind: 'do-it' } })
    // all at once: adds the loop makes memos while they reserve their ids, kind and status updates,
    // deletes, classifications and batches, each on nodes of its own
    const answers = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) =>
        mutate({ action: 'add', projectId: p, node: { type: 'task', data: { label: MEMO(`new ${i}`) } } }),
      ),
      ...t.slice(0, 10).map((id) => mutate({ action: 'update', projectId: p, nodeId: id, data: { kind: 'do-it' } })),
      ...t.slice(10, 15).map((id) => mutate({ action: 'update', projectId: p, nodeId: id, data: { status: 'done' } })),
      ...t.slice(15, 20).map((id) => mutate({ action: 'delete', projectId: p, nodeId: id })),
      ...t.slice(20, 25).map((id) => mutate({ action: 'classify', projectId: p, nodeId: id })),
      ...Array.from({ length: 5 }, (_, i) =>
        mutate({
          action: 'batch',
          projectId: p,
          mutations: [
            { action: 'update', nodeId: t[25 + 2 * i], data: { kind: 'do-it' } },
            { action: 'update', nodeId: t[26 + 2 * i], data: { status: 'done' } },
            { action: 'delete', nodeId: t[35 + i] },
            { action: 'add', node: { type: 'task', data: { label: MEMO(`batched ${i}`) } } },
          ],
        }),
      ),
    ])
    expect(answers.map((a) => [a.status, a.body.errors])).toEqual(answers.map(() => [200, undefined]))
    // 35 (five made do-its above), - 10 do-its, - 5 done, - 5 deleted, + 5 classified memos again, the
    // batches' - 5 - 5 - 5, and the 15 tasks added made memos by the loop
    await check(p, 20)
  })
})

describe('a restore', () => {
  const emptyDb = async () => {
    if (!PG_URL) {
      const db = await emptyPglite()
      return { db, drop: () => db.close() }
    }
    const made = await emptyPostgres()
    const db = await made.db()
    return {
      db,
      drop: async () => {
        await db.close()
        await made.drop()
      },
    }
  }

  it('brings every project its count back with the backup', async () => {
    const p = await app.project()
    await ok({
      action: 'batch',
      projectId: p,
      mutations: [
        ...Array.from({ length: 23 }, (_, i) => ({ action: 'add', node: { id: `draft-${i}`, type: 'task', data: { label: TODO(i) } } })),
        ...Array.from({ length: 22 }, (_, i) => ({ action: 'update', nodeId: `draft-${i}`, data: { kind: 'memo' } })),
      ],
    })
    await settled(p)
    const res = await app.handle(new Request('http://arbor.test/admin/v1/backup', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))
    expect(res.status).toBe(200)
    const text = await res.text()
    const target = await emptyDb()
    try {
      await restore(
        target.db,
        (async function* () {
          yield* text.split('\n')
        })(),
      )
      const projects = (await target.db.query<{ id: string }>('select id from projects order by id')).map((r) => r.id)
      expect(projects).toContain(p)
      for (const q of projects) expect([q, await kept(target.db, q)]).toEqual([q, await recount(target.db, q)])
      expect(await kept(target.db, p)).toBe(22)
    } finally {
      await target.drop()
    }
  })

  it('of a database from before the count (migration 0049) counts each project once migrated', async () => {
    const target = await emptyDb()
    try {
      await migrate(target.db, '0048-events-statistics')
      await target.db.exec(`
        insert into users (id, name) values ('u1', 'U');
        insert into projects (id, name, owner_id) values ('a', 'A', 'u1'), ('b', 'B', 'u1'), ('c', 'C', 'u1');
        insert into nodes (project_id, id, type, data) values
          ('a', 'task-1', 'task', '{"label": "m", "kind": "memo"}'),
          ('a', 'task-2', 'task', '{"label": "m", "kind": "memo", "status": "open"}'),
          ('a', 'task-3', 'task', '{"label": "m", "kind": "memo", "status": "done"}'),
          ('a', 'task-4', 'task', '{"label": "t", "kind": "do-it"}'),
          ('a', 'task-5', 'task', '{"label": "t"}'),
          ('a', 'goal-1', 'goal', '{"label": "g", "kind": "memo"}'),
          ('b', 'task-1', 'task', '{"label": "m", "kind": "memo"}'),
          ('c', 'task-1', 'task', '{"label": "m", "kind": "memo", "status": "done"}');
      `)
      await migrate(target.db)
      expect(await target.db.query('select project_id, memos from node_open_memos order by project_id')).toEqual([
        { project_id: 'a', memos: 2 },
        { project_id: 'b', memos: 1 },
      ])
      // and the triggers keep them from there
      await target.db.exec(`
        update nodes set data = data || '{"status": "open"}' where project_id = 'c';
        update nodes set data = data || '{"label": "m2"}' where project_id = 'a';
        delete from nodes where project_id = 'a' and id = 'task-1';
        update nodes set data = data - 'kind' where project_id = 'b';
      `)
      for (const q of ['a', 'b', 'c']) expect([q, await kept(target.db, q)]).toEqual([q, await recount(target.db, q)])
      expect(await kept(target.db, 'a')).toBe(1)
    } finally {
      await target.drop()
    }
  })
})
