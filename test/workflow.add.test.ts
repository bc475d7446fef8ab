import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startApp, type TestApp } from './helpers'
import { expectRetries, nodes, planProject, workflow } from './workflow-fixtures'

let app: TestApp
beforeAll(async () => {
  app = await startApp()
})
afterAll(() => app.close())

const draft = { id: 'draft-1', type: 'job', parentId: 'approach-1', data: { label: 'A manager can export the summary as CSV' } }

async function startAdd(projectId: string, input = 'Export the weekly summary as CSV') {
  const res = await workflow(app, { projectId, action: 'start', flow: 'add', input })
  expect(res.status).toBe(200)
  return res.body
}

describe('add flow', () => {
  it('runs classified → confirmed → draft_ready and applies the drafts as one batch', async () => {
    const projectId = await planProject(app)
    const started = await startAdd(projectId)
    expect(started).toEqual({
      done: false,
      prompt: expect.any(String),
      state: expect.any(String),
      _meta: { flow: 'add', step: 'classify' },
    })
    expect(started.prompt).toContain('Export the weekly summary as CSV')
    expect(started.prompt).toContain('approach-1 "Weekly summary e-mail"')
    expect(started.prompt).toContain('kano: must-have | incremental | delighter')

    const classified = await workflow(app, {
      projectId,
      action: 'advance',
      state: started.state,
      response: { signal: 'classified', message: 'A job under the weekly summary.', context: { type: 'job', parentId: 'approach-1' } },
    })
    expect(classified.status).toBe(200)
    expect(classified.body._meta).toEqual({ flow: 'add', step: 'confirm' })
    expect(classified.body.prompt).toContain('a job under approach-1 "Weekly summary e-mail"')
    expect(classified.body.prompt).toContain('The user did not object')

    const confirmed = await workflow(app, {
      projectId,
      action: 'advance',
      state: classified.body.state,
      response: { signal: 'confirmed', message: 'Placement accepted.' },
      nextInput: 'Yes, and mention Excel',
    })
    expect(confirmed.status).toBe(200)
    expect(confirmed.body._meta).toEqual({ flow: 'add', step: 'draft' })
    expect(confirmed.body.prompt).toContain('The user answered: "Yes, and mention Excel"')

    const second = { ...draft, id: 'draft-2', parentId: 'draft-1', type: 'job', data: { label: 'Excel opens the CSV' } }
    const done = await workflow(app, {
      projectId,
      action: 'advance',
      state: confirmed.body.state,
      response: {
        signal: 'draft_ready',
        message: 'Two jobs.',
        draftNodes: [draft, { ...second, type: 'approach', parentId: 'need-1', data: { label: 'CSV export', kano: 'incremental' } }],
      },
    })
    expect(done.status).toBe(200)
    const view = { projectId, command: { type: 'selectNode', nodeId: 'job-3' } }
    expect(done.body).toEqual({
      done: true,
      changeset: [
        {
          action: 'add',
          nodeId: 'job-3',
          type: 'job',
          before: null,
          after: { id: 'job-3', rev: expect.any(String), type: 'job', parentId: 'approach-1', data: { ...draft.data, iteration: 'Later' } },
        },
        {
          action: 'add',
          nodeId: 'approach-3',
          type: 'approach',
          before: null,
          after: {
            id: 'approach-3',
            rev: expect.any(String),
            type: 'approach',
            parentId: 'need-1',
            data: { label: 'CSV export', kano: 'incremental' },
          },
        },
      ],
      focus: 'job-3',
      message: 'Added 2 node(s) to the plan.',
      _meta: { viewCommand: view, focus: { nodeId: 'job-3', viewCommand: view }, _tip: expect.any(String) },
    })
    const after = await nodes(app, projectId)
    expect(after.filter((n) => n.id === 'job-3' || n.id === 'approach-3').length).toBe(2)
  })

  it('ends at the classify step when the first answer is a valid draft_ready', async () => {
    const projectId = await planProject(app)
    const started = await startAdd(projectId)
    const done = await workflow(app, {
      projectId,
      action: 'advance',
      state: started.state,
      response: { signal: 'draft_ready', message: 'Small enough.', draftNodes: [draft] },
    })
    expect(done.status).toBe(200)
    expect(done.body.done).toBe(true)
    expect(done.body.changeset.map((c: any) => [c.action, c.nodeId])).toEqual([['add', 'job-3']])
    // history.md, 1: the terminal advance writes as the workflow
    const history = await app.call('GET', `/api/v1/history?projectId=${projectId}&nodeId=job-3`)
    expect(history.body.changes.map((c: any) => [c.action, c.actor.via])).toEqual([['add', 'workflow']])
  })

  it('keeps the step on needs_clarification and carries the question and the answer into the next prompt', async () => {
    const projectId = await planProject(app)
    const started = await startAdd(projectId, 'reports')
    const asked = await workflow(app, {
      projectId,
      action: 'advance',
      state: started.state,
      response: { signal: 'needs_clarification', message: 'Which report do you mean?' },
      nextInput: 'The weekly summary, as CSV',
    })
    expect(asked.status).toBe(200)
    expect(asked.body._meta.step).toBe('classify')
    expect(asked.body.prompt).toContain('- You (needs_clarification): Which report do you mean?\n- User: The weekly summary, as CSV')
  })

  it('goes back to confirm when the model moves the idea at the draft step', async () => {
    const projectId = await planProject(app)
    const started = await startAdd(projectId)
    const confirmed = await workflow(app, {
      projectId,
      action: 'advance',
      state: started.state,
      response: { signal: 'confirmed', message: 'Under the summary.', context: { type: 'job', parentId: 'approach-1' } },
    })
    expect(confirmed.body._meta.step).toBe('draft')
    const moved = await workflow(app, {
      projectId,
      action: 'advance',
      state: confirmed.body.state,
      nextInput: 'No, it belongs to the dashboard',
      response: { signal: 'classified', message: 'Under the dashboard then.', context: { type: 'job', parentId: 'approach-2' } },
    })
    expect(moved.status).toBe(200)
    expect(moved.body._meta.step).toBe('confirm')
    expect(moved.body.prompt).toContain('a job under approach-2 "Live dashboard"')
    expect(moved.body.prompt).toContain('The user answered: "No, it belongs to the dashboard"')
  })

  it('refuses a draft that breaks a mutate rule with 400 retry:true and the same state, then accepts the corrected answer', async () => {
    const projectId = await planProject(app)
    const started = await startAdd(projectId)
    const bad = await workflow(app, {
      projectId,
      action: 'advance',
      state: started.state,
      response: { signal: 'draft_ready', draftNodes: [{ ...draft, parentId: 'need-1' }] },
    })
    expect(bad.status).toBe(400)
    expect(bad.body).toEqual({
      error: "draftNodes[0]: A job's parent must be an approach; need-1 is a need",
      retry: true,
      state: started.state,
      _meta: { _tip: expect.any(String), guide: 'http://arbor.test/api/v1/guide' },
    })
    const badEnum = await workflow(app, {
      projectId,
      action: 'advance',
      state: started.state,
      response: {
        signal: 'draft_ready',
        draftNodes: [{ ...draft, type: 'approach', parentId: 'need-1', data: { label: 'x', kano: 'big' } }],
      },
    })
    expect(badEnum.status).toBe(400)
    expect(badEnum.body.error).toBe('draftNodes[0]: kano must be one of: must-have, incremental, performance, delighter')
    expect(await nodes(app, projectId)).toHaveLength(6)
    const good = await workflow(app, {
      projectId,
      action: 'advance',
      state: started.state,
      response: { signal: 'draft_ready', draftNodes: [draft] },
    })
    expect(good.status).toBe(200)
    expect(good.body.focus).toBe('job-3')
  })

  it('refuses malformed answers with retry:true: unknown signal, bad placement, non-draft ids, over 50 drafts', async () => {
    const projectId = await planProject(app)
    const { state } = await startAdd(projectId)
    const cases: [unknown, string][] = [
      [{ signal: 'maybe' }, 'signal must be one of: classified, confirmed, draft_ready, needs_clarification'],
      [{ signal: 'classified', context: { type: 'job', parentId: 'need-1' } }, "a job's parent must be an approach; need-1 is a need"],
      [
        { signal: 'classified', context: { type: 'job', parentId: 'approach-99' } },
        'context.parentId approach-99 is not a node of this project',
      ],
      [{ signal: 'classified' }, 'context is required: {type, parentId}, e.g. {"type":"job","parentId":"approach-3"}'],
      [{ signal: 'confirmed' }, 'Nothing to confirm yet: answer classified with context {type, parentId} first'],
      [{ signal: 'needs_clarification' }, 'needs_clarification needs message: the question for the user'],
      [
        { signal: 'draft_ready', draftNodes: [{ ...draft, id: 'job-40' }] },
        'draftNodes[0].id must be your own id starting with "draft-", e.g. "draft-1"',
      ],
      [
        { signal: 'draft_ready', draftNodes: Array.from({ length: 51 }, (_, i) => ({ ...draft, id: `draft-${i}` })) },
        'draftNodes has 51 nodes; at most 50 are allowed',
      ],
      [
        { signal: 'draft_ready', draftNodes: [] },
        'draftNodes is required: a non-empty array of {id:"draft-…", type, parentId, data:{label}}',
      ],
    ]
    await expectRetries(app, projectId, state, cases)
    expect(await nodes(app, projectId)).toHaveLength(6)
  })

  it('applies 50 drafts, the most it allows, in one go', async () => {
    const projectId = await planProject(app)
    const { state } = await startAdd(projectId)
    const draftNodes = Array.from({ length: 50 }, (_, i) => ({ ...draft, id: `draft-${i}`, data: { label: `Job ${i}` } }))
    const res = await workflow(app, { projectId, action: 'advance', state, response: { signal: 'draft_ready', draftNodes } })
    expect(res.status).toBe(200)
    expect(res.body.changeset).toHaveLength(50)
    expect(await nodes(app, projectId)).toHaveLength(56)
  })

  it('never applies a replayed terminal advance twice: the repeat answers 500 alreadyApplied', async () => {
    const projectId = await planProject(app)
    const { state } = await startAdd(projectId)
    const body = { projectId, action: 'advance', state, response: { signal: 'draft_ready', draftNodes: [draft] } }
    const first = await workflow(app, body)
    expect(first.status).toBe(200)
    const again = await workflow(app, body)
    expect(again.status).toBe(500)
    expect(again.body).toEqual({
      error: 'This advance was already applied by an earlier attempt',
      retry: false,
      partialApply: false,
      alreadyApplied: true,
      changeset: first.body.changeset,
      focus: 'job-3',
      _meta: { _tip: expect.any(String) },
    })
    expect((await nodes(app, projectId)).filter((n) => n.type === 'job')).toHaveLength(3)
  })

  it('answers 500 retry:true partialApply:false at the free node cap, writes nothing, and applies once nodes are freed', async () => {
    const capped = await startApp({ FREE_TIER_NODE_CAP: '7' })
    try {
      const free = await capped.user({ tier: 'free' })
      const projectId = await planProject(capped, { key: free.key, tasks: ['one more'] })
      const started = await workflow(capped, { projectId, action: 'start', flow: 'add', input: 'CSV export' }, free.key)
      const body = { projectId, action: 'advance', state: started.body.state, response: { signal: 'draft_ready', draftNodes: [draft] } }
      const refused = await workflow(capped, body, free.key)
      expect(refused.status).toBe(500)
      expect(refused.body).toEqual({
        error: 'node_cap_reached',
        message: expect.any(String),
        retry: true,
        partialApply: false,
        current: 7,
        node_cap: 7,
        delete_to_resume: 1,
        _meta: { _tip: expect.any(String) },
      })
      await capped.call('POST', '/api/v1/mutate', { key: free.key, body: { action: 'delete', projectId, nodeId: 'task-1' } })
      const retried = await workflow(capped, body, free.key)
      expect(retried.status).toBe(200)
      expect(retried.body.changeset.map((c: any) => c.nodeId)).toEqual(['job-3'])
    } finally {
      await capped.close()
    }
  })
})
