import { afterAll, describe, expect, it } from 'bun:test'
import { seedPlan, startApp } from './helpers'

// api.md Iteration, Iteration status, GET /iterations, and the addIteration, updateIteration,
// deleteIteration and reorderIterations actions; self-hosting.md's settled readings
const app = await startApp()
afterAll(() => app.close())

const GUIDE = 'http://arbor.test/api/v1/guide'
const mutate = (body: unknown) => app.call('POST', '/api/v1/mutate', { body })
const addIteration = (projectId: string, iteration: unknown) => mutate({ action: 'addIteration', projectId, iteration })
const updateIteration = (projectId: string, iterationName: string, data: unknown) =>
  mutate({ action: 'updateIteration', projectId, iterationName, data })
const iterations = async (p: string, query = '') => (await app.call('GET', `/api/v1/iterations?projectId=${p}${query}`)).body
const nodes = async (p: string, query = '') => (await app.call('GET', `/api/v1/nodes?projectId=${p}${query}`)).body.nodes
const rejected = (errors: string[], meta: Record<string, unknown> = {}) => ({ success: false, errors, _meta: { ...meta, guide: GUIDE } })
const LATER = { name: 'Later', rev: expect.any(String), status: 'active', system: true, sortOrder: 0, gitTags: [], completedAt: null }
const it_ = (name: string, sortOrder: number, extra: Record<string, unknown> = {}) => ({
  name,
  rev: expect.any(String),
  status: 'active',
  system: false,
  sortOrder,
  gitTags: [],
  completedAt: null,
  ...extra,
})

/** iterations S1, S2; job-1 and task-1 in S1, job-2 in S2, task-2 in Later. */
const seeded = () =>
  seedPlan(app, [
    { type: 'job', parentId: 'draft-a', data: { label: 'J1', iteration: 'S1' } },
    { type: 'job', parentId: 'draft-a', data: { label: 'J2', iteration: 'S2' } },
    { type: 'task', data: { label: 'T1', iteration: 'S1' } },
    { type: 'task', data: { label: 'T2' } },
  ])

describe('a new project', () => {
  it('has one system iteration Later, active', async () => {
    const p = await app.project()
    expect(await iterations(p)).toEqual({ iterations: [LATER] })
  })
})

describe('addIteration', () => {
  it('creates an active iteration after the others', async () => {
    const p = await app.project()
    const res = await addIteration(p, { name: '  Sprint 1 ', gitTags: ['v1.0'] })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      success: true,
      iteration: it_('Sprint 1', 1, { gitTags: ['v1.0'] }),
      _meta: { _tip: 'Assign jobs and tasks with data.iteration: "Sprint 1".' },
    })
    expect(await iterations(p)).toEqual({ iterations: [LATER, it_('Sprint 1', 1, { gitTags: ['v1.0'] })] })
  })

  it('rejects a name that exists, an empty name, and bad status or tags', async () => {
    const p = await seeded()
    expect((await addIteration(p, { name: 'S1' })).body).toEqual(rejected(['Iteration S1 already exists in this project']))
    expect((await addIteration(p, { name: ' ' })).body).toEqual(rejected(['iteration.name is required: a non-empty string']))
    expect((await addIteration(p, { name: 'x', status: 'open' })).body).toEqual(rejected(['status must be one of: active, done']))
    expect((await addIteration(p, { name: 'x', gitTags: 'v1' })).body).toEqual(rejected(['gitTags must be an array of strings']))
    expect((await mutate({ action: 'addIteration', projectId: p })).body).toEqual(
      rejected(['iteration is required: {name, status?, gitTags?}']),
    )
  })
})

describe('updateIteration', () => {
  it('renames the iteration and every job and task that names it', async () => {
    const p = await seeded()
    const res = await updateIteration(p, 'S1', { name: 'Sprint One' })
    expect(res.body).toEqual({
      success: true,
      iteration: it_('Sprint One', 1),
      _meta: { _tip: 'Renamed; 2 job(s) and task(s) now name Sprint One.' },
    })
    expect((await nodes(p, '&iteration=Sprint%20One')).map((n: any) => n.id)).toEqual(['job-1', 'task-1'])
    expect(await nodes(p, '&iteration=S1')).toEqual([])
    expect((await nodes(p, '&iteration=S2')).map((n: any) => n.id)).toEqual(['job-2'])
  })

  it('sets completedAt (milliseconds) when marked done, and clears it when active again', async () => {
    const p = await seeded()
    const before = Date.now()
    const done = await updateIteration(p, 'S2', { status: 'done' })
    expect(done.status).toBe(200)
    const completedAt = done.body.iteration.completedAt
    expect(typeof completedAt).toBe('number')
    expect(completedAt).toBeGreaterThanOrEqual(before - 1000)
    expect(done.body).toEqual({
      success: true,
      iteration: it_('S2', 2, { status: 'done', completedAt }),
      _meta: { _tip: 'Marked done: hidden from the app dropdown and matrix; open work in it moves to Later on its next update.' },
    })
    expect((await iterations(p, '&status=done')).iterations).toEqual([it_('S2', 2, { status: 'done', completedAt })])
    const active = await updateIteration(p, 'S2', { status: 'active' })
    expect(active.body.iteration).toEqual(it_('S2', 2))
  })

  it('replaces gitTags whole and changes nothing else', async () => {
    const p = await seeded()
    await updateIteration(p, 'S1', { gitTags: ['a', 'b'] })
    expect((await updateIteration(p, 'S1', { gitTags: ['c'] })).body).toEqual({
      success: true,
      iteration: it_('S1', 1, { gitTags: ['c'] }),
      _meta: {},
    })
  })

  it('refuses an unknown iteration, a taken name, unknown fields and changes to a system iteration', async () => {
    const p = await seeded()
    expect((await updateIteration(p, 'S9', { status: 'done' })).body).toEqual(
      rejected(['Iteration S9 not found'], { _tip: 'Iterations: Later, S1, S2' }),
    )
    expect((await updateIteration(p, 'S1', { name: 'S2' })).body).toEqual(rejected(['Iteration S2 already exists in this project']))
    expect((await updateIteration(p, 'S1', { colour: 'red' })).body).toEqual(
      rejected(['Unknown iteration fields: colour; valid: name, status, gitTags, sortOrder']),
    )
    expect((await updateIteration(p, 'S1', { status: 'closed' })).body).toEqual(rejected(['status must be one of: active, done']))
    expect((await updateIteration(p, 'Later', { name: 'Someday' })).body).toEqual(
      rejected(['Cannot rename or close system iteration Later']),
    )
    expect((await updateIteration(p, 'Later', { status: 'done' })).body).toEqual(
      rejected(['Cannot rename or close system iteration Later']),
    )
  })
})

describe('deleteIteration', () => {
  it('refuses a system iteration', async () => {
    const p = await seeded()
    const res = await mutate({ action: 'deleteIteration', projectId: p, iterationName: 'Later' })
    expect(res.status).toBe(400)
    expect(res.body).toEqual(rejected(['Cannot delete system iteration Later']))
  })

  it('moves its jobs and tasks to Later, and the tip says how many', async () => {
    const p = await seeded()
    const res = await mutate({ action: 'deleteIteration', projectId: p, iterationName: 'S1' })
    expect(res.body).toEqual({
      success: true,
      deleted: { name: 'S1' },
      movedToLater: ['job-1', 'task-1'],
      _meta: { _tip: 'Deleted iteration S1; 2 job(s) and task(s) moved to Later.' },
    })
    expect((await nodes(p, '&iteration=Later')).map((n: any) => n.id)).toEqual(['job-1', 'task-1', 'task-2'])
    expect((await iterations(p)).iterations.map((i: any) => i.name)).toEqual(['Later', 'S2'])
  })

  it('refuses an unknown iteration', async () => {
    const p = await seeded()
    expect((await mutate({ action: 'deleteIteration', projectId: p, iterationName: 'S9' })).body).toEqual(
      rejected(['Iteration S9 not found'], { _tip: 'Iterations: Later, S1, S2' }),
    )
  })
})

describe('reorderIterations', () => {
  it('sets the display order from the full list', async () => {
    const p = await seeded()
    const res = await mutate({ action: 'reorderIterations', projectId: p, order: ['S2', 'Later', 'S1'] })
    expect(res.body).toEqual({ success: true, iterations: [it_('S2', 0), { ...LATER, sortOrder: 1 }, it_('S1', 2)] })
    expect((await iterations(p, '&current=true')).iteration.name).toBe('S2')
  })

  it('refuses a list that is not every iteration exactly once', async () => {
    const p = await seeded()
    const tip = { _tip: 'Current iterations: Later, S1, S2' }
    const reorder = (order: unknown) => mutate({ action: 'reorderIterations', projectId: p, order })
    expect((await reorder(['S2', 'Later'])).body).toEqual(
      rejected(['order must list every iteration of the project exactly once; missing: S1'], tip),
    )
    expect((await reorder(['S2', 'Later', 'S1', 'S3'])).body).toEqual(
      rejected(['order must list every iteration of the project exactly once; unknown: S3'], tip),
    )
    expect((await reorder(['S2', 'Later', 'S1', 'S1'])).body).toEqual(
      rejected(['order must list every iteration of the project exactly once'], tip),
    )
    expect((await reorder('S1')).body).toEqual(rejected(['order is required: the full ordered list of iteration names']))
  })
})

describe('GET /iterations', () => {
  it('filters by status', async () => {
    const p = await seeded()
    await updateIteration(p, 'S1', { status: 'done' })
    expect((await iterations(p, '&status=active')).iterations.map((i: any) => i.name)).toEqual(['Later', 'S2'])
    expect((await iterations(p, '&status=done')).iterations.map((i: any) => i.name)).toEqual(['S1'])
  })

  it('returns the first active, non-system iteration by sortOrder with current=true', async () => {
    const p = await seeded()
    expect(await iterations(p, '&current=true')).toEqual({ iteration: it_('S1', 1) })
    await updateIteration(p, 'S1', { status: 'done' })
    expect(await iterations(p, '&current=true')).toEqual({ iteration: it_('S2', 2) })
  })

  it('returns {iteration:null} when no iteration is current', async () => {
    const p = await app.project()
    expect(await iterations(p, '&current=true')).toEqual({ iteration: null })
    await addIteration(p, { name: 'Old', status: 'done' })
    expect(await iterations(p, '&current=true')).toEqual({ iteration: null })
  })

  it('rejects an unknown status with the guide', async () => {
    const p = await seeded()
    const res = await app.call('GET', `/api/v1/iterations?projectId=${p}&status=open`)
    expect(res.status).toBe(400)
    expect(res.body).toEqual(rejected(['status must be one of: active, done']))
  })

  it('refuses a project the key cannot reach', async () => {
    const p = await seeded()
    const stranger = await app.user()
    const res = await app.call('GET', `/api/v1/iterations?projectId=${p}`, { key: stranger.key })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({
      error: 'project_access_denied',
      message: 'API key does not have access to this project',
      _meta: { guide: GUIDE },
    })
  })
})
