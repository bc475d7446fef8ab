import { afterAll, describe, expect, it } from 'bun:test'
import { seedPlan, startApp } from './helpers'

// api.md States and transitions: Job and task status, every row of its table
const app = await startApp()
afterAll(() => app.close())

const GUIDE = 'http://arbor.test/api/v1/guide'
const mutate = (body: unknown) => app.call('POST', '/api/v1/mutate', { body })
const update = (projectId: string, nodeId: string, data: unknown) => mutate({ action: 'update', projectId, nodeId, data })
const closeIteration = (projectId: string, iterationName: string) =>
  mutate({ action: 'updateIteration', projectId, iterationName, data: { status: 'done' } })
const stored = async (p: string, id: string) =>
  (await app.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes.find((n: any) => n.id === id)
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** goal-1 > need-1 > approach-1 > job-1 (in S1), task-1 (in S1), and iterations S1, S2. */
const seeded = () =>
  seedPlan(app, [
    { type: 'job', parentId: 'draft-a', data: { label: 'J', iteration: 'S1' } },
    { type: 'task', data: { label: 'T', iteration: 'S1' } },
  ])

describe('open (status absent)', () => {
  for (const id of ['job-1', 'task-1'])
    it(`${id.split('-')[0]}: update status done, iteration not done → done with completedAt set`, async () => {
      const p = await seeded()
      const before = Date.now()
      const res = await update(p, id, { status: 'done' })
      expect(res.status).toBe(200)
      const { completedAt, ...data } = res.body.node.data
      expect(data).toEqual({ label: id.startsWith('job') ? 'J' : 'T', iteration: 'S1', status: 'done' })
      expect(completedAt).toMatch(ISO)
      expect(Date.parse(completedAt)).toBeGreaterThanOrEqual(before - 1000)
      expect((await stored(p, id)).data.completedAt).toBe(completedAt)
      const [event] = await app.db.query<{ payload: any }>(
        "select payload from events where project_id = $1 and type = 'node.updated' order by seq desc limit 1",
        [p],
      )
      expect(event!.payload.node).toEqual(res.body.node)
    })

  it('update status done while its iteration is done → 400, unchanged, with a tip naming the iteration and both ways out', async () => {
    const p = await seeded()
    await closeIteration(p, 'S1')
    for (const id of ['job-1', 'task-1']) {
      const res = await update(p, id, { status: 'done' })
      expect(res.status).toBe(400)
      expect(res.body).toEqual({
        success: false,
        errors: [`Cannot mark ${id} done: its iteration S1 is done`],
        _meta: {
          _tip: 'Iteration S1 is done. Either reopen it ({action:"updateIteration", iterationName:"S1", data:{status:"active"}}) and retry, or move the node in the same call: data:{status:"done", iteration:"<an active iteration>"}.',
          guide: GUIDE,
        },
      })
      expect((await stored(p, id)).data).toEqual({ label: id.startsWith('job') ? 'J' : 'T', iteration: 'S1' })
    }
  })

  it('both ways out of the refusal work: moving in the same call, or reopening the iteration', async () => {
    const p = await seeded()
    await closeIteration(p, 'S1')
    const moved = await update(p, 'job-1', { status: 'done', iteration: 'S2' })
    expect(moved.status).toBe(200)
    expect(moved.body.node.data).toMatchObject({ status: 'done', iteration: 'S2' })
    await mutate({ action: 'updateIteration', projectId: p, iterationName: 'S1', data: { status: 'active' } })
    expect((await update(p, 'task-1', { status: 'done' })).body.node.data).toMatchObject({ status: 'done', iteration: 'S1' })
  })
})

describe('done', () => {
  it('update status open → open (stored as absent), completedAt cleared', async () => {
    const p = await seeded()
    await update(p, 'job-1', { status: 'done' })
    const res = await update(p, 'job-1', { status: 'open' })
    expect(res.body.node.data).toEqual({ label: 'J', iteration: 'S1' })
    expect((await stored(p, 'job-1')).data).toEqual({ label: 'J', iteration: 'S1' })
  })

  it('update status null → open, completedAt cleared', async () => {
    const p = await seeded()
    await update(p, 'task-1', { status: 'done' })
    expect((await update(p, 'task-1', { status: null })).body.node.data).toEqual({ label: 'T', iteration: 'S1' })
  })

  it('update status open with iteration Later in the same call, in a done iteration → open, in Later', async () => {
    const p = await seeded()
    await update(p, 'job-1', { status: 'done' })
    await closeIteration(p, 'S1')
    const res = await update(p, 'job-1', { status: 'open', iteration: 'Later' })
    expect(res.status).toBe(200)
    expect(res.body.node.data).toEqual({ label: 'J', iteration: 'Later' })
    expect(res.body._meta._tip).toBeUndefined()
  })

  it('marking done again keeps the first completedAt', async () => {
    const p = await seeded()
    const first = (await update(p, 'job-1', { status: 'done' })).body.node.data.completedAt
    expect((await update(p, 'job-1', { status: 'done', label: 'J!' })).body.node.data.completedAt).toBe(first)
  })

  it('a done job stays in its done iteration when another field changes', async () => {
    const p = await seeded()
    await update(p, 'job-1', { status: 'done' })
    await closeIteration(p, 'S1')
    const res = await update(p, 'job-1', { label: 'Shipped' })
    expect(res.body.node.data).toMatchObject({ label: 'Shipped', status: 'done', iteration: 'S1' })
    expect(res.body._meta._tip).toBeUndefined()
  })
})

describe('any state: status delivered (deprecated)', () => {
  it('is accepted, stored as sent, and treated as not done: no completedAt', async () => {
    const p = await seeded()
    expect((await update(p, 'job-1', { status: 'delivered' })).body.node.data).toEqual({ label: 'J', iteration: 'S1', status: 'delivered' })
    await update(p, 'task-1', { status: 'done' })
    expect((await update(p, 'task-1', { status: 'delivered' })).body.node.data).toEqual({
      label: 'T',
      iteration: 'S1',
      status: 'delivered',
    })
  })

  it('may be sent on add', async () => {
    const p = await seeded()
    const res = await mutate({
      action: 'add',
      projectId: p,
      node: { type: 'task', data: { label: 'Old', status: 'delivered', iteration: 'S2' } },
    })
    expect(res.body.node.data).toEqual({ label: 'Old', status: 'delivered', iteration: 'S2' })
  })
})

describe('open job in a done iteration, reached by another route', () => {
  it('an update that leaves it there moves it to Later, and the tip says so', async () => {
    const p = await seeded()
    await closeIteration(p, 'S1') // job-1 and task-1 are open in S1
    const res = await update(p, 'job-1', { description: 'still to do' })
    expect(res.status).toBe(200)
    expect(res.body.node.data).toEqual({ label: 'J', iteration: 'Later', description: 'still to do' })
    expect(res.body._meta._tip).toBe('job-1 is not done and sat in done iteration S1; it moved to Later.')
    const task = await update(p, 'task-1', { status: 'delivered' })
    expect(task.body.node.data).toEqual({ label: 'T', iteration: 'Later', status: 'delivered' })
    expect(task.body._meta._tip).toBe('task-1 is not done and sat in done iteration S1; it moved to Later.')
  })
})

describe('open job in a done iteration, other routes', () => {
  it('reopening a done job left in a done iteration without naming Later also moves it to Later', async () => {
    const p = await seeded()
    await update(p, 'job-1', { status: 'done' })
    await closeIteration(p, 'S1')
    const res = await update(p, 'job-1', { status: 'open' })
    expect(res.body.node.data).toEqual({ label: 'J', iteration: 'Later' })
    expect(res.body._meta._tip).toBe('job-1 is not done and sat in done iteration S1; it moved to Later.')
  })

  it('an open job added into a done iteration lands in Later, and the tip says so', async () => {
    const p = await seeded()
    await closeIteration(p, 'S1')
    const res = await mutate({
      action: 'add',
      projectId: p,
      node: { type: 'job', parentId: 'approach-1', data: { label: 'New', iteration: 'S1' } },
    })
    expect(res.body.node.data).toEqual({ label: 'New', iteration: 'Later' })
    expect(res.body._meta._tip).toBe('job-2 is not done and sat in done iteration S1; it moved to Later.')
  })
})

describe('completedAt', () => {
  it('is set by the service, not by an update without status done', async () => {
    const p = await seeded()
    expect((await update(p, 'job-1', { completedAt: '2025-01-01T00:00:00.000Z' })).body).toEqual({
      success: false,
      errors: ['completedAt is set by the service when status becomes done'],
      _meta: { guide: GUIDE },
    })
  })
})
