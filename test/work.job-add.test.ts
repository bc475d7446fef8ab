import { afterAll, describe, expect, it } from 'bun:test'
import type { Db } from '../src/db'
import { startApp, workItemsStoredAndRecomputed } from './helpers'

// A job added beside an open sibling takes its approach, goal, blocked and focus from the
// sibling's work item (migration 0033, work_jobs_added) instead of work_refresh's recompute: each
// row it writes must be the row work_refresh would write, whatever the approach's state.
const app = await startApp()
afterAll(() => app.close())

const mutate = async (body: Record<string, unknown>) => {
  const res = (await app.call('POST', '/api/v1/mutate', { body })).body
  if (!res.success) throw new Error(JSON.stringify(res))
  return res
}

/** The project's work items as stored, and as work_refresh recomputes them (test/helpers.ts). */
const storedAndRecomputed = (db: Db, p: string) =>
  workItemsStoredAndRecomputed<{ open: boolean; blocked: boolean }>(
    db,
    p,
    'node_id, type, approach_id, goal_id, open, blocked, urgent, iteration, iter_rank, focus, created_at, ord',
  )

/**
 * A project of two goals (G1 in focus), a need under each and two approaches under each need, each
 * approach with one job; A3 blocked by A1 (which has an open job: not clear) and A4 by A2 (whose
 * only job is done: clear).
 */
async function seeded() {
  const p = await app.project()
  await mutate({
    action: 'batch',
    projectId: p,
    mutations: [
      { action: 'addIteration', iteration: { name: 'S1' } },
      { action: 'addIteration', iteration: { name: 'S2' } },
      { action: 'add', node: { id: 'draft-g1', type: 'goal', data: { label: 'G1', goalStatus: 'focus' } } },
      { action: 'add', node: { id: 'draft-g2', type: 'goal', data: { label: 'G2' } } },
      { action: 'add', node: { id: 'draft-n1', type: 'need', parentId: 'draft-g1', data: { label: 'N1' } } },
      { action: 'add', node: { id: 'draft-n2', type: 'need', parentId: 'draft-g2', data: { label: 'N2' } } },
      // a blocker with an open job (not clear), one whose jobs are all done (clear), and their dependants
      { action: 'add', node: { id: 'draft-a1', type: 'approach', parentId: 'draft-n1', data: { label: 'A1' } } },
      { action: 'add', node: { id: 'draft-a2', type: 'approach', parentId: 'draft-n2', data: { label: 'A2' } } },
      { action: 'add', node: { id: 'draft-a3', type: 'approach', parentId: 'draft-n1', data: { label: 'A3' } } },
      { action: 'add', node: { id: 'draft-a4', type: 'approach', parentId: 'draft-n2', data: { label: 'A4' } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-a1', data: { label: 'open blocker job' } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-a2', data: { label: 'done blocker job', status: 'done' } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-a3', data: { label: 'J3', iteration: 'S2' } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-a4', data: { label: 'J4' } } },
    ],
  })
  const nodes = (await app.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes as { id: string; data: { label: string } }[]
  const id = (label: string) => nodes.find((n) => n.data.label === label)!.id
  const [a1, a2, a3, a4] = ['A1', 'A2', 'A3', 'A4'].map(id) as [string, string, string, string]
  await mutate({ action: 'update', projectId: p, nodeId: a3, data: { blockedBy: [a1] } })
  await mutate({ action: 'update', projectId: p, nodeId: a4, data: { blockedBy: [a2] } })
  return { p, id, a1, a2, a3, a4 }
}

describe("a job's add beside an open sibling", () => {
  it('writes the work item the whole recompute writes: blocked, clear, focus, done goal, retired approach, iterations', async () => {
    const { p, id, a1, a2, a3, a4 } = await seeded()
    const addJob = (parentId: string, data: Record<string, unknown> = {}) =>
      mutate({ action: 'add', projectId: p, node: { type: 'job', parentId, data: { label: 'new', ...data } } })
    // under a blocked approach (its blocker has an open job), in a focus goal, with and without an iteration
    await addJob(a3)
    await addJob(a3, { iteration: 'S1' })
    await addJob(a3, { iteration: 'Later', status: 'done' })
    // under an unblocked approach (its blocker is clear), and under the blockers themselves
    await addJob(a4, { iteration: 'S2' })
    await addJob(a1)
    await addJob(a1, { status: 'done' })
    // the goal done, the approach retired: the next jobs take that from their sibling's row
    await mutate({ action: 'update', projectId: p, nodeId: id('G2'), data: { goalStatus: 'done' } })
    await addJob(a4)
    await mutate({ action: 'update', projectId: p, nodeId: a3, data: { approachStatus: 'retired' } })
    await addJob(a3, { iteration: 'S2' })
    // a job of a clear blocker (all its jobs done) goes the whole way: a4's jobs are blocked again
    await addJob(a2)
    // the iterations reordered (S2 now current) and S1 closed: a job beside a sibling of its own
    // iteration takes the sibling's rank, one beside a sibling of another iteration reads its own
    await mutate({ action: 'reorderIterations', projectId: p, order: ['S2', 'S1', 'Later'] })
    await addJob(a4, { iteration: 'S2' })
    await addJob(a4, { iteration: 'S1' })
    await mutate({ action: 'updateIteration', projectId: p, iterationName: 'S2', data: { status: 'done' } })
    await addJob(a4, { iteration: 'S1' })
    await addJob(a3, { iteration: 'Later' })

    const { stored, recomputed } = await storedAndRecomputed(app.db, p)
    expect(stored.length).toBe(17)
    expect(stored).toEqual(recomputed)
    const blocked = (await app.call('GET', `/api/v1/ready?projectId=${p}&limit=100`)).body._meta.blocked
    expect(blocked).toBe(stored.filter((w) => w.open && w.blocked).length)
  })

  it('ranks a job that names no iteration of the project, or none, as the whole recompute does (the rank of a name no iteration has)', async () => {
    const { p, a3, a4 } = await seeded()
    // rows written straight into nodes, as a restore or an import may hold them (an add through the
    // API names an iteration that exists, or lands in Later): one alone, then two in one statement
    const insert = (rows: [string, string, Record<string, unknown>][]) =>
      app.db.query(
        `insert into nodes (project_id, id, type, parent_id, data, created_at)
         select $1, r ->> 0, 'job', r ->> 1, r -> 2, now() from jsonb_array_elements($2::jsonb) r`,
        [p, JSON.stringify(rows)],
      )
    await insert([[`${p}-gone`, a3, { label: 'gone', iteration: 'Gone' }]])
    await insert([
      [`${p}-none`, a3, { label: 'none' }],
      [`${p}-gone2`, a4, { label: 'gone 2', iteration: 'Gone' }],
    ])
    const { stored, recomputed } = await storedAndRecomputed(app.db, p)
    expect(stored.length).toBe(7)
    expect(stored).toEqual(recomputed)
    const ranks = await app.db.query<{ iter_rank: number }>(
      `select iter_rank from work_items where project_id = $1 and node_id = any($2::text[])`,
      [p, [`${p}-gone`, `${p}-none`, `${p}-gone2`]],
    )
    expect(ranks.map((r) => r.iter_rank)).toEqual([2000000000, 2000000000, 2000000000])
  })
})

describe('a batch of adds only, its work state kept by its one insert (not set aside and flushed)', () => {
  it('writes the rows the whole recompute writes, jobs beside open siblings or not, with approaches in the same batch', async () => {
    const { p, id, a1, a2, a3, a4 } = await seeded()
    const jobs = (parentId: string, n: number, data: Record<string, unknown> = {}) =>
      Array.from({ length: n }, (_, i) => ({ action: 'add', node: { type: 'job', parentId, data: { label: `b${i}`, ...data } } }))
    const batch = (mutations: unknown[]) => mutate({ action: 'batch', projectId: p, mutations })
    const check = async (count: number) => {
      const { stored, recomputed } = await storedAndRecomputed(app.db, p)
      expect(stored.length).toBe(count)
      expect(stored).toEqual(recomputed)
      const meta = (await app.call('GET', `/api/v1/ready?projectId=${p}&limit=100`)).body._meta
      expect(meta.blocked).toBe(stored.filter((w) => w.open && w.blocked).length)
      expect(meta.total).toBe(stored.filter((w) => w.open && !w.blocked).length)
    }
    // jobs of one project beside open siblings, under a blocked, a clear and a blocking approach, in a focus goal
    await batch([...jobs(a3, 5), ...jobs(a4, 3, { iteration: 'S1' }), ...jobs(a1, 2, { status: 'done' })])
    await check(14)
    // the first job under a clear blocker (its only job done): a4's jobs are blocked again
    await batch(jobs(a2, 2))
    await check(16)
    // a new approach with its jobs and a blocker's job in one batch: the whole recompute, once
    await batch([
      { action: 'add', node: { id: 'draft-a5', type: 'approach', parentId: id('N2'), data: { label: 'A5', blockedBy: [a3] } } },
      ...jobs('draft-a5', 3),
      ...jobs(a2, 1),
    ])
    await check(20)
    // the goal done, an approach retired: jobs added after them take it from their siblings' rows
    await mutate({ action: 'update', projectId: p, nodeId: id('G2'), data: { goalStatus: 'done' } })
    await mutate({ action: 'update', projectId: p, nodeId: a3, data: { approachStatus: 'retired' } })
    await batch([...jobs(a4, 2), ...jobs(a3, 2, { iteration: 'S1' })])
    await check(24)
    expect(await app.db.query(`select 1 from work_pending`)).toEqual([])
  })
})
