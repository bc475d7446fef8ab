import { afterAll, describe, expect, it } from 'bun:test'
import type { Db } from '../src/db'
import * as nodes from '../src/nodes/queries'
import { startApp, workItemsStoredAndRecomputed } from './helpers'

// The work state's update trigger fires only for a row that changed its type, its parent, or its
// data outside the fields the work state never reads (migration 0044): a label update calls no
// trigger function. Every change the work state reads must still reach it, through every statement
// that updates nodes, one row or many, alone or after another in the same transaction.
const app = await startApp()
afterAll(() => app.close())

const mutate = async (body: Record<string, unknown>) => {
  const res = (await app.call('POST', '/api/v1/mutate', { body })).body
  if (!res.success) throw new Error(JSON.stringify(res))
  return res
}

type Item = { node_id: string; iteration: string | null; urgent: number }

/** The project's work items as stored, and as work_refresh recomputes them (test/helpers.ts). */
const storedAndRecomputed = (db: Db, p: string) =>
  workItemsStoredAndRecomputed<Item>(db, p, 'node_id, type, approach_id, goal_id, open, blocked, urgent, iteration, iter_rank, focus')

/** Two goals, a need under each, approaches A1..A3 (A3 blocked by A1), a job under each, two do-it tasks. */
async function seeded() {
  const p = await app.project()
  await mutate({
    action: 'batch',
    projectId: p,
    mutations: [
      { action: 'addIteration', iteration: { name: 'S1' } },
      { action: 'addIteration', iteration: { name: 'S2' } },
      { action: 'add', node: { id: 'draft-g1', type: 'goal', data: { label: 'G1' } } },
      { action: 'add', node: { id: 'draft-g2', type: 'goal', data: { label: 'G2' } } },
      { action: 'add', node: { id: 'draft-n1', type: 'need', parentId: 'draft-g1', data: { label: 'N1' } } },
      { action: 'add', node: { id: 'draft-n2', type: 'need', parentId: 'draft-g2', data: { label: 'N2' } } },
      { action: 'add', node: { id: 'draft-a1', type: 'approach', parentId: 'draft-n1', data: { label: 'A1' } } },
      { action: 'add', node: { id: 'draft-a2', type: 'approach', parentId: 'draft-n2', data: { label: 'A2' } } },
      { action: 'add', node: { id: 'draft-a3', type: 'approach', parentId: 'draft-n1', data: { label: 'A3' } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-a1', data: { label: 'J1', iteration: 'S1' } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-a2', data: { label: 'J2', iteration: 'S1' } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-a3', data: { label: 'J3', iteration: 'S1' } } },
      { action: 'add', node: { type: 'task', data: { label: 'T1', iteration: 'S1' } } },
      { action: 'add', node: { type: 'task', data: { label: 'T2', iteration: 'S1' } } },
    ],
  })
  const all = (await app.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes as { id: string; data: { label: string } }[]
  const id = (label: string) => all.find((n) => n.data.label === label)!.id
  await mutate({ action: 'update', projectId: p, nodeId: id('A3'), data: { blockedBy: [id('A1')] } })
  for (const t of ['T1', 'T2']) await mutate({ action: 'update', projectId: p, nodeId: id(t), data: { kind: 'do-it' } })
  return { p, id }
}

const ready = async (p: string) =>
  ((await app.call('GET', `/api/v1/ready?projectId=${p}&limit=100`)).body.items as { node: { id: string } }[]).map((r) => r.node.id).sort()

describe("the work state's update trigger (migration 0044)", () => {
  it('lets through every field of data the work state reads: none of them is among the fields its WHEN leaves out', async () => {
    const def = (
      await app.db.query<{ d: string }>(
        `select pg_get_triggerdef(t.oid) as d from pg_trigger t where t.tgrelid = 'nodes'::regclass and t.tgname = 'work_nodes_update'`,
      )
    )[0]!.d
    const left = /'\{([^}]*)\}'::text\[\]/.exec(def)?.[1]?.split(',') ?? []
    expect(left).toContain('label')
    // the keys of data read by the work state's functions (work_refresh, work_after_change, the triggers' bodies…)
    const bodies = (await app.db.query<{ src: string }>(`select prosrc as src from pg_proc where proname like 'work\\_%'`)).map(
      (r) => r.src,
    )
    const read = new Set(bodies.flatMap((src) => [...src.matchAll(/data\s*->>?\s*'(\w+)'/g)].map((m) => m[1]!)))
    for (const field of ['status', 'approachStatus', 'blockedBy', 'goalStatus', 'kind', 'iteration', 'urgent'])
      expect(read).toContain(field)
    expect(left.filter((k) => read.has(k))).toEqual([])
  })

  it('a label update leaves the work state as it was; each change it reads, and a move, reach it', async () => {
    const { p, id } = await seeded()
    const check = async () => {
      const { stored, recomputed } = await storedAndRecomputed(app.db, p)
      expect(stored).toEqual(recomputed)
    }
    await check()
    expect(await ready(p)).toEqual([id('J1'), id('J2'), id('T1'), id('T2')].sort())
    const writes: Record<string, unknown>[] = [
      { nodeId: id('J1'), data: { label: 'J1 again' } },
      { nodeId: id('J1'), data: { status: 'done' } }, // A1 clear: J3 unblocked (_meta.unblocked)
      { nodeId: id('A2'), data: { approachStatus: 'retired' } },
      { nodeId: id('A3'), data: { blockedBy: [id('A2')] } },
      { nodeId: id('G1'), data: { goalStatus: 'done' } },
      { nodeId: id('G1'), data: { goalStatus: 'focus' } },
      { nodeId: id('T1'), data: { urgent: true } },
      { nodeId: id('T2'), data: { kind: 'memo' } },
      { nodeId: id('J2'), data: { iteration: 'S2' } },
      { nodeId: id('J2'), parentId: id('A1') },
      { nodeId: id('A2'), data: { approachStatus: 'development', description: 'back' } },
      { nodeId: id('G2'), data: { label: 'G2 again', description: 'd' } },
    ]
    for (const w of writes) {
      await mutate({ action: 'update', projectId: p, ...w })
      await check()
    }
    // J1 done; J2 moved under A1 (G1 in focus); J3 blocked by A2, which has no job left; T2 a memo
    expect(await ready(p)).toEqual([id('J2'), id('T1')].sort())
  })

  it('keeps it through statements of many rows, each followed by another in the same transaction', async () => {
    const { p, id } = await seeded()
    const tasks = await app.db.query<{ id: string; data: Record<string, unknown> }>(
      `select id, data from nodes where project_id = $1 and type = 'task' order by id`,
      [p],
    )
    // 0044's count of a statement's rows still to fire: none left once each statement has ended
    // (no statement updates nodes in two parts: test/work.update-parts.test.ts)
    const counted: string[] = []
    const leftOver = async (tx: Db, after: string) => {
      const [row] = await tx.query<{ n: string | null }>(`select current_setting('arbor.work_update_rows', true) as n`)
      if (Number(row!.n || 0) !== 0) counted.push(`${after}: ${row!.n}`)
    }
    await app.db.tx(async (tx) => {
      // every job and task of S1 moved (five rows fire), then one job marked done (it fires alone)
      await nodes.moveIteration(tx, p, 'S1', 'S2')
      await leftOver(tx, 'moveIteration')
      const j1 = (
        await tx.query<{ data: Record<string, unknown> }>(`select data from nodes where project_id = $1 and id = $2`, [p, id('J1')])
      )[0]!
      await nodes.update(tx, p, id('J1'), id('A1'), { ...j1.data, status: 'done' }, false, 'status')
      await leftOver(tx, 'update')
      // the classifier: one task's kind changed, the other's label only (one row of two fires), then a label, then a kind
      await nodes.setClassifiedMany(tx, [
        { project_id: p, id: tasks[0]!.id, data: { ...tasks[0]!.data, kind: 'memo' } },
        { project_id: p, id: tasks[1]!.id, data: { ...tasks[1]!.data, label: 'T2 again' } },
      ])
      await leftOver(tx, 'setClassifiedMany')
      const t2 = { ...tasks[1]!.data, iteration: 'S2', label: 'T2 again' }
      await nodes.setClassified(tx, p, tasks[1]!.id, { ...t2, description: 'only text' })
      await nodes.setClassified(tx, p, tasks[1]!.id, { ...t2, description: 'only text', urgent: true })
      await leftOver(tx, 'setClassified')
    })
    expect(counted).toEqual([])
    const { stored, recomputed } = await storedAndRecomputed(app.db, p)
    expect(stored).toEqual(recomputed)
    expect(stored.find((w) => w.node_id === tasks[1]!.id)).toMatchObject({
      iteration: 'S2',
      urgent: 0,
    })
    expect(await ready(p)).toEqual([id('J2'), id('J3'), tasks[1]!.id].sort())
  })
})
