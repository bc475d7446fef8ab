import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startApp, type TestApp } from './helpers'
import { planProject, workflow } from './workflow-fixtures'

/** Issue 28, defects 4 and 5: wrongly typed ids and lone surrogates, once a 500, are 400s naming the field. */
let app: TestApp
let p: string
const GUIDE = 'http://arbor.test/api/v1/guide'
beforeAll(async () => {
  app = await startApp()
  p = await planProject(app)
})
afterAll(() => app.close())

const mutate = (body: unknown) => app.call('POST', '/api/v1/mutate', { body })
const LONE = 'must be well-formed Unicode: a lone surrogate (\\ud800 to \\udfff without its pair) is not a character'

describe('a batch entry whose node.id is not a string', () => {
  for (const id of [7, 1.5, true, false, null, {}, [], ['draft-a'], { id: 'draft-a' }])
    it(`answers 400 naming the entry, for ${JSON.stringify(id)}`, async () => {
      const res = await mutate({
        action: 'batch',
        projectId: p,
        mutations: [
          { action: 'add', node: { type: 'goal', data: { label: 'fine' } } },
          { action: 'add', node: { id, type: 'goal', data: { label: 'x' } } },
        ],
      })
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: {
          success: false,
          errors: ['mutations[1]: node.id must be a string: a draft- id, or a <type>-<n> id'],
          _meta: { guide: GUIDE },
        },
      })
    })
})

describe('a lone surrogate answers 400 naming the field, wherever a string enters', () => {
  const cases: [string, string, unknown, string][] = [
    ['POST', '/api/v1/mutate', { action: 'add', projectId: '$p', node: { type: 'goal', data: { label: 'a\ud800' } } }, 'node.data.label'],
    [
      'POST',
      '/api/v1/mutate',
      { action: 'batch', projectId: '$p', mutations: [{ action: 'add', node: { type: 'goal', data: { label: 'a\udfff b' } } }] },
      'mutations[0].node.data.label',
    ],
    [
      'POST',
      '/api/v1/mutate',
      { action: 'batch', projectId: '$p', mutations: [{ action: 'update', nodeId: 'goal-1', data: { description: '\udc00' } }] },
      'mutations[0].data.description',
    ],
    ['POST', '/api/v1/mutate', { action: 'update', projectId: '$p', nodeId: 'goal-1', data: { notes: 'x\ud83d' } }, 'data.notes'],
    [
      'POST',
      '/api/v1/mutate',
      { action: 'batch', projectId: '$p', mutations: [{ action: 'addIteration', iteration: { name: 'Sprint \ud800' } }] },
      'mutations[0].iteration.name',
    ],
    ['POST', '/api/v1/mutate', { action: 'addProject', project: { name: 'P\udbff', id: 'lone-p' } }, 'project.name'],
    ['POST', '/api/v1/mutate', { action: 'renameProject', projectId: '$p', name: '\ud800' }, 'name'],
    ['POST', '/api/v1/feedback', { message: 'hi \ud800' }, 'message'],
    ['POST', '/api/v1/webhooks', { projectId: '$p', url: 'https://example.com/\ud800' }, 'url'],
    ['POST', '/api/v1/share', { projectId: '$p', settings: { includedGoalIds: ['goal-1\udc00'] } }, 'settings.includedGoalIds[0]'],
    ['POST', '/api/v1/view-command', { projectId: '$p', command: { type: 'selectNode', nodeId: 'goal-1\ud800' } }, 'command.nodeId'],
  ]
  for (const [method, path, raw, field] of cases)
    it(`${path} ${field}`, async () => {
      const body = JSON.parse(JSON.stringify(raw).replaceAll('"$p"', JSON.stringify(p)))
      const res = await app.call(method, path, { body })
      expect({ status: res.status, errors: res.body.errors }).toEqual({ status: 400, errors: [`${field} ${LONE}`] })
    })

  it('accepts a well-formed pair (an emoji) and stores it unchanged', async () => {
    const res = await mutate({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Ship it \ud83d\ude80' } } })
    expect({ status: res.status, label: res.body.node?.data.label }).toEqual({ status: 200, label: 'Ship it 🚀' })
  })

  it('is a bad response of a workflow run: 400 {error, retry:true, state} with the same state', async () => {
    const started = await workflow(app, { projectId: p, action: 'start', flow: 'add', input: 'Export the weekly summary' })
    expect(started.status).toBe(200)
    const draft = { id: 'draft-1', type: 'job', parentId: 'approach-1', data: { label: 'Export \udc00 as CSV' } }
    const res = await workflow(app, {
      projectId: p,
      action: 'advance',
      state: started.body.state,
      response: { signal: 'draft_ready', message: 'Small enough.', draftNodes: [draft] },
    })
    expect({ status: res.status, body: res.body }).toEqual({
      status: 400,
      body: {
        error: `response.draftNodes[0].data.label ${LONE}`,
        retry: true,
        state: started.body.state,
        _meta: {
          _tip: 'Nothing was written. Give the error to your model and advance again with this same state and a corrected response.',
          guide: GUIDE,
        },
      },
    })
    const start = await workflow(app, { projectId: p, action: 'start', flow: 'add', input: 'Export \ud800' })
    expect({ status: start.status, body: start.body }).toEqual({ status: 400, body: { error: `input ${LONE}`, _meta: { guide: GUIDE } } })
  })
})
