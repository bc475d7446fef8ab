import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startApp, type TestApp } from './helpers'
import { expectRetries, nodes, planProject, workflow } from './workflow-fixtures'

let app: TestApp
beforeAll(async () => {
  app = await startApp()
})
afterAll(() => app.close())

const mutate = (body: Record<string, unknown>) => app.call('POST', '/api/v1/mutate', { body })

async function startPhases(projectId: string) {
  const res = await workflow(app, { projectId, action: 'start', flow: 'phase-assign' })
  expect(res.status).toBe(200)
  return res.body
}

describe('phase-assign flow', () => {
  it('ends at once with done:true when no open job waits in Later', async () => {
    const projectId = await app.project()
    expect(await startPhases(projectId)).toEqual({
      done: true,
      changeset: [],
      focus: null,
      message: 'No open job waits in Later: nothing to plan.',
      _meta: { viewCommand: null },
    })
  })

  it('lists only open jobs in Later, reuses an active iteration by name and creates the others', async () => {
    const projectId = await planProject(app)
    await mutate({ action: 'addIteration', projectId, iteration: { name: 'Managers see progress' } })
    await mutate({
      action: 'batch',
      projectId,
      mutations: [
        { action: 'add', node: { type: 'job', parentId: 'approach-2', data: { label: 'Done already', status: 'done' } } },
        { action: 'add', node: { type: 'job', parentId: 'approach-2', data: { label: 'Planned', iteration: 'Managers see progress' } } },
        { action: 'add', node: { type: 'job', parentId: 'approach-2', data: { label: 'Dashboard loads in a second' } } },
      ],
    })
    const started = await startPhases(projectId)
    expect(started._meta).toEqual({ flow: 'phase-assign', step: 'assign' })
    const jobsPart = started.prompt.split('## Jobs to plan')[1].split('##')[0]
    expect(jobsPart.match(/^- job-\d+/gm)).toEqual(['- job-1', '- job-2', '- job-5'])
    expect(started.prompt).toContain('- "Managers see progress": active, 1 jobs and tasks')

    const before = new Map((await nodes(app, projectId)).map((n) => [n.id, n]))
    const res = await workflow(app, {
      projectId,
      action: 'advance',
      state: started.state,
      response: {
        signal: 'draft_ready',
        message: 'Two phases.',
        phases: [
          { name: 'managers SEE progress', jobIds: ['job-1', 'job-2'] },
          { name: 'Instant dashboard', jobIds: ['job-5'] },
        ],
      },
    })
    expect(res.status).toBe(200)
    const moved = (id: string, iteration: string) => {
      const b = before.get(id)!
      return {
        action: 'update',
        nodeId: id,
        type: 'job',
        before: b,
        after: { ...b, rev: expect.any(String), data: { ...b.data, iteration } },
      }
    }
    const view = { projectId, command: { type: 'selectNode', nodeId: 'job-1' } }
    expect(res.body).toEqual({
      done: true,
      changeset: [
        {
          action: 'addIteration',
          nodeId: null,
          type: 'iteration',
          before: null,
          after: {
            name: 'Instant dashboard',
            rev: expect.any(String),
            status: 'active',
            system: false,
            sortOrder: 2,
            gitTags: [],
            completedAt: null,
          },
        },
        moved('job-1', 'Managers see progress'),
        moved('job-2', 'Managers see progress'),
        moved('job-5', 'Instant dashboard'),
      ],
      focus: 'job-1',
      message: 'Planned 3 job(s) in 2 phase(s): 4 change(s) applied.',
      _meta: { viewCommand: view, focus: { nodeId: 'job-1', viewCommand: view }, _tip: 'Applied 4 mutation(s).' },
    })
    const iterations = await app.call('GET', `/api/v1/iterations?projectId=${projectId}`)
    expect(iterations.body.iterations.map((i: any) => i.name)).toEqual(['Later', 'Managers see progress', 'Instant dashboard'])
  })

  it('refuses phase names that describe no user value, in any letter case, with retry:true', async () => {
    const projectId = await planProject(app)
    const { state } = await startPhases(projectId)
    for (const name of ['Later', 'later', 'BACKLOG', 'Polish', 'polish ', 'Catch-all', 'catch all', 'CATCHALL']) {
      const res = await workflow(app, {
        projectId,
        action: 'advance',
        state,
        response: { signal: 'draft_ready', phases: [{ name, jobIds: ['job-1'] }] },
      })
      expect({ name, status: res.status, retry: res.body.retry, same: res.body.state === state }).toEqual({
        name,
        status: 400,
        retry: true,
        same: true,
      })
      expect(res.body.error).toContain('describes no user value')
    }
    const iterations = await app.call('GET', `/api/v1/iterations?projectId=${projectId}`)
    expect(iterations.body.iterations.map((i: any) => i.name)).toEqual(['Later'])
  })

  it('refuses out-of-limit and invalid plans with 400 retry:true and the state unchanged', async () => {
    const projectId = await planProject(app)
    await mutate({ action: 'addIteration', projectId, iteration: { name: 'Shipped', status: 'done' } })
    const { state } = await startPhases(projectId)
    const cases: [unknown, string][] = [
      [
        { signal: 'draft_ready', phases: Array.from({ length: 101 }, (_, i) => ({ name: `Phase ${i}`, jobIds: ['job-1'] })) },
        'phases has 101 entries; at most 100 are allowed',
      ],
      [
        { signal: 'draft_ready', phases: [{ name: 'Big', jobIds: Array.from({ length: 1001 }, () => 'job-1') }] },
        'phases assign 1001 job ids; at most 1000 are allowed',
      ],
      [{ signal: 'draft_ready', phases: [{ name: 'A', jobIds: ['job-1', 'job-1'] }] }, 'phases[0].jobIds[1]: job-1 is assigned twice'],
      [
        { signal: 'draft_ready', phases: [{ name: 'A', jobIds: ['job-77'] }] },
        'phases[0].jobIds[0] must be a job id from the list in the prompt',
      ],
      [
        { signal: 'draft_ready', phases: [{ name: 'shipped', jobIds: ['job-1'] }] },
        'phases[0].name "shipped" is a done iteration; choose another name',
      ],
      [{ signal: 'draft_ready', phases: [{ name: 'A', jobIds: [] }] }, 'phases[0].jobIds is required: a non-empty array of job ids'],
      [
        {
          signal: 'draft_ready',
          phases: [
            { name: 'A', jobIds: ['job-1'] },
            { name: 'a', jobIds: ['job-2'] },
          ],
        },
        'phases[1].name "a" is used by another phase of this answer',
      ],
      [{ signal: 'draft_ready' }, 'phases is required: a non-empty array of {name, jobIds:[…]}'],
    ]
    await expectRetries(app, projectId, state, cases)
  })

  it('accepts 1000 assignments over 100 phases, and refuses a job that left Later since the prompt', async () => {
    const projectId = await planProject(app)
    const approach = 'approach-1'
    await mutate({
      action: 'batch',
      projectId,
      mutations: Array.from({ length: 998 }, (_, i) => ({
        action: 'add',
        node: { type: 'job', parentId: approach, data: { label: `J${i}` } },
      })),
    })
    const { state } = await startPhases(projectId)
    const ids = Array.from({ length: 1000 }, (_, i) => `job-${i + 1}`)
    const phases = Array.from({ length: 100 }, (_, p) => ({ name: `Theme ${p}`, jobIds: ids.slice(p * 10, p * 10 + 10) }))
    await mutate({ action: 'update', projectId, nodeId: 'job-7', data: { status: 'done' } })
    const stale = await workflow(app, { projectId, action: 'advance', state, response: { signal: 'draft_ready', phases } })
    expect(stale.status).toBe(400)
    expect(stale.body.error).toBe('phases[0].jobIds[6]: job-7 is no longer an open job in Later; leave it out')
    await mutate({ action: 'update', projectId, nodeId: 'job-7', data: { status: 'open' } })
    const res = await workflow(app, { projectId, action: 'advance', state, response: { signal: 'draft_ready', phases } })
    expect(res.status).toBe(200)
    expect(res.body.changeset).toHaveLength(1100)
  })
})
