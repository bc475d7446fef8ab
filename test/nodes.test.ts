import { afterAll, describe, expect, it } from 'bun:test'
import { startApp } from './helpers'

// api.md GET /nodes: filters, creation order and _meta (currentIteration, iterations, nodeCounts)
const app = await startApp()
afterAll(() => app.close())

const GUIDE = 'http://arbor.test/api/v1/guide'
const mutate = (body: unknown) => app.call('POST', '/api/v1/mutate', { body })
const get = (p: string, query = '') => app.call('GET', `/api/v1/nodes?projectId=${p}${query}`)
const ids = async (p: string, query = '') => (await get(p, query)).body.nodes.map((n: any) => n.id)

/** Nodes created out of type order: goal-1, task-1, need-1, approach-1, job-1 (S1), task-2 (S1), goal-2, job-2. */
async function seeded() {
  const p = await app.project()
  await mutate({ action: 'addIteration', projectId: p, iteration: { name: 'S1' } })
  for (const node of [
    { type: 'goal', data: { label: 'G1' } },
    { type: 'task', data: { label: 'T1' } },
    { type: 'need', parentId: 'goal-1', data: { label: 'N1' } },
    { type: 'approach', parentId: 'need-1', data: { label: 'A1' } },
    { type: 'job', parentId: 'approach-1', data: { label: 'J1', iteration: 'S1' } },
    { type: 'task', data: { label: 'T2', iteration: 'S1' } },
    { type: 'goal', data: { label: 'G2' } },
    { type: 'job', parentId: 'approach-1', data: { label: 'J2' } },
  ]) {
    const res = await mutate({ action: 'add', projectId: p, node })
    if (res.status !== 200) throw new Error(JSON.stringify(res.body))
  }
  return p
}

describe('GET /nodes', () => {
  it('returns the whole project in creation order as {id,type,parentId,data}, with _meta', async () => {
    const p = await seeded()
    const res = await get(p)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      nodes: [
        { id: 'goal-1', rev: expect.any(String), type: 'goal', parentId: null, data: { label: 'G1' } },
        { id: 'task-1', rev: expect.any(String), type: 'task', parentId: null, data: { label: 'T1', iteration: 'Later' } },
        { id: 'need-1', rev: expect.any(String), type: 'need', parentId: 'goal-1', data: { label: 'N1' } },
        { id: 'approach-1', rev: expect.any(String), type: 'approach', parentId: 'need-1', data: { label: 'A1' } },
        { id: 'job-1', rev: expect.any(String), type: 'job', parentId: 'approach-1', data: { label: 'J1', iteration: 'S1' } },
        { id: 'task-2', rev: expect.any(String), type: 'task', parentId: null, data: { label: 'T2', iteration: 'S1' } },
        { id: 'goal-2', rev: expect.any(String), type: 'goal', parentId: null, data: { label: 'G2' } },
        { id: 'job-2', rev: expect.any(String), type: 'job', parentId: 'approach-1', data: { label: 'J2', iteration: 'Later' } },
      ],
      _meta: {
        currentIteration: 'S1',
        iterations: { active: ['Later', 'S1'], total: 2 },
        nodeCounts: { goal: 2, need: 1, approach: 1, job: 2, task: 2 },
      },
    })
  })

  it('keeps the order of a batch as sent', async () => {
    const p = await app.project()
    await mutate({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'add', node: { type: 'task', data: { label: 'c' } } },
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'a' } } },
        { action: 'add', node: { type: 'task', data: { label: 'b' } } },
        { action: 'add', node: { type: 'need', parentId: 'draft-g', data: { label: 'd' } } },
      ],
    })
    expect(await ids(p)).toEqual(['task-1', 'goal-1', 'task-2', 'need-1'])
  })

  it('filters by type', async () => {
    const p = await seeded()
    expect(await ids(p, '&type=goal')).toEqual(['goal-1', 'goal-2'])
    expect(await ids(p, '&type=task')).toEqual(['task-1', 'task-2'])
    expect(await ids(p, '&type=need')).toEqual(['need-1'])
  })

  it('filters jobs and tasks by iteration, alone or with type', async () => {
    const p = await seeded()
    expect(await ids(p, '&iteration=S1')).toEqual(['job-1', 'task-2'])
    expect(await ids(p, '&iteration=Later')).toEqual(['task-1', 'job-2'])
    expect(await ids(p, '&iteration=S1&type=job')).toEqual(['job-1'])
    expect(await ids(p, '&iteration=S1&type=goal')).toEqual([])
  })

  it('keeps _meta about the whole project when filtered, with a tip for an unknown iteration', async () => {
    const p = await seeded()
    const res = await get(p, '&iteration=S9')
    expect(res.body).toEqual({
      nodes: [],
      _meta: {
        currentIteration: 'S1',
        iterations: { active: ['Later', 'S1'], total: 2 },
        nodeCounts: { goal: 2, need: 1, approach: 1, job: 2, task: 2 },
        _tip: 'No iteration is named S9; active: Later, S1',
      },
    })
  })

  it('reports currentIteration null and zero counts for a new project', async () => {
    const p = await app.project()
    expect((await get(p)).body).toEqual({
      nodes: [],
      _meta: {
        currentIteration: null,
        iterations: { active: ['Later'], total: 1 },
        nodeCounts: { goal: 0, need: 0, approach: 0, job: 0, task: 0 },
      },
    })
  })

  it('counts done iterations in total only, and moves currentIteration to the next active one', async () => {
    const p = await seeded()
    await mutate({ action: 'addIteration', projectId: p, iteration: { name: 'S2' } })
    await mutate({ action: 'updateIteration', projectId: p, iterationName: 'S1', data: { status: 'done' } })
    const meta = (await get(p)).body._meta
    expect(meta.currentIteration).toBe('S2')
    expect(meta.iterations).toEqual({ active: ['Later', 'S2'], total: 3 })
  })

  it('rejects an unknown type with the guide', async () => {
    const p = await seeded()
    const res = await get(p, '&type=epic')
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ success: false, errors: ['type must be one of: goal, need, approach, job, task'], _meta: { guide: GUIDE } })
  })

  it('requires projectId and refuses a project the key cannot reach', async () => {
    const p = await seeded()
    const missing = await app.call('GET', '/api/v1/nodes')
    expect(missing.status).toBe(400)
    expect(missing.body).toEqual({ success: false, errors: ['projectId is required'], _meta: { guide: GUIDE } })
    const stranger = await app.user()
    const denied = await app.call('GET', `/api/v1/nodes?projectId=${p}`, { key: stranger.key })
    expect(denied.status).toBe(403)
    expect(denied.body).toEqual({
      error: 'project_access_denied',
      message: 'API key does not have access to this project',
      _meta: { guide: GUIDE },
    })
  })

  it('lets a member of a team-owned project read it', async () => {
    const p = await seeded()
    const member = await app.user({ tier: 'builder' })
    await app.call('POST', '/api/v1/members', { body: { projectId: p, userId: member.id } })
    expect((await app.call('GET', `/api/v1/nodes?projectId=${p}&type=goal`, { key: member.key })).body.nodes.map((n: any) => n.id)).toEqual(
      ['goal-1', 'goal-2'],
    )
  })
})
