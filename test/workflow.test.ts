import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADVANCE_REQUIRES } from '../src/workflow/service'
import { startApp, type TestApp } from './helpers'
import { planProject, workflow } from './workflow-fixtures'

let app: TestApp
beforeAll(async () => {
  app = await startApp()
})
afterAll(() => app.close())

const GUIDE = 'http://arbor.test/api/v1/guide'

describe('GET /workflow', () => {
  it('answers the catalog without authentication: protocol, three flows with input, response schema, advisory and notes', async () => {
    const res = await app.call('GET', '/api/v1/workflow', { key: null })
    expect(res.status).toBe(200)
    expect(Object.keys(res.body)).toEqual(['protocol', 'flows', 'notes', '_meta'])
    expect(res.body.flows.map((f: any) => f.name)).toEqual(['add', 'task-curate', 'phase-assign'])
    for (const flow of res.body.flows) {
      expect(Object.keys(flow)).toEqual(expect.arrayContaining(['name', 'description', 'input', 'response', 'advisory', 'notes', 'steps']))
      expect(flow.response.oneOf.length).toBeGreaterThan(0)
    }
    const curate = res.body.flows[1]
    expect(curate.advisory).toBe(
      'Promotions and discards are proposals: show them to the user first and submit only the choices they confirm; set the rest to skip.',
    )
    expect(res.body.flows[0].steps.map((s: any) => [s.name, s.signals])).toEqual([
      ['classify', ['classified', 'needs_clarification', 'draft_ready']],
      ['confirm', ['classified', 'confirmed', 'draft_ready', 'needs_clarification']],
      ['draft', ['draft_ready', 'needs_clarification', 'classified']],
    ])
    expect(res.body.protocol.limits).toEqual({
      inputChars: 4000,
      nextInputChars: 4000,
      messageChars: 4000,
      responseChars: 500000,
      historyTurns: 100,
      draftNodes: 50,
      actions: 200,
      nodesPerAction: 10,
      phases: 100,
      assignments: 1000,
    })
    expect(res.body._meta.guide).toBe(GUIDE)
  })

  it('answers on the unversioned legacy path too, without Deprecation headers', async () => {
    const v1 = await app.call('GET', '/api/v1/workflow', { key: null })
    const legacy = await app.call('GET', '/api/workflow', { key: null })
    expect(legacy.status).toBe(200)
    expect(legacy.body).toEqual(v1.body)
    expect([legacy.headers.get('deprecation'), legacy.headers.get('link')]).toEqual([null, null])
    const projectId = await planProject(app)
    const post = await app.call('POST', '/api/workflow', { body: { projectId, action: 'start', flow: 'add', input: 'x' } })
    expect(post.status).toBe(200)
    expect(post.headers.get('deprecation')).toBe(null)
    const next = await app.call('POST', '/api/workflow', {
      body: { projectId, action: 'advance', state: post.body.state, response: { signal: 'needs_clarification', message: 'What?' } },
    })
    expect(next.status).toBe(200)
  })
})

describe('POST /workflow refusals', () => {
  it('answers 401 with _meta.guide without a key', async () => {
    const res = await app.call('POST', '/api/v1/workflow', { key: null, body: { projectId: 'x', action: 'start' } })
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ error: 'unauthorized', message: 'Missing or invalid API key', _meta: { guide: GUIDE } })
  })

  it("answers 400 'action must be start or advance' for a missing or other action, with _meta.guide", async () => {
    const projectId = await planProject(app)
    for (const body of [{ projectId }, { projectId, action: 'begin' }, { projectId, action: 7 }]) {
      const res = await workflow(app, body)
      expect(res.status).toBe(400)
      expect(res.body).toEqual({ error: 'action must be start or advance', _meta: { _tip: expect.any(String), guide: GUIDE } })
    }
  })

  it('answers 400 for an unknown flow, a missing or oversized add input', async () => {
    const projectId = await planProject(app)
    const cases: [Record<string, unknown>, string][] = [
      [{ flow: 'plan-all' }, 'flow must be one of: add, task-curate, phase-assign'],
      [{ flow: 'add' }, 'input is required for add: a short description of the idea, as a string'],
      [{ flow: 'add', input: 'x'.repeat(4001) }, 'input is 4001 characters; at most 4000 are allowed'],
    ]
    for (const [extra, error] of cases) {
      const res = await workflow(app, { projectId, action: 'start', ...extra })
      expect({ status: res.status, error: res.body.error, guide: res.body._meta?.guide }).toEqual({ status: 400, error, guide: GUIDE })
    }
  })

  it("answers 400 'advance requires state and a structured response' without state, or with a response that is not an object with a string signal", async () => {
    const projectId = await planProject(app)
    const { body: started } = await workflow(app, { projectId, action: 'start', flow: 'add', input: 'CSV export' })
    const noState = await workflow(app, { projectId, action: 'advance', response: { signal: 'confirmed' } })
    expect(noState.status).toBe(400)
    expect(noState.body).toEqual({ error: ADVANCE_REQUIRES, _meta: { guide: GUIDE } })
    for (const response of [undefined, 'draft_ready', ['x'], { message: 'no signal' }, { signal: 3 }]) {
      const res = await workflow(app, { projectId, action: 'advance', state: started.state, response })
      expect(res.status).toBe(400)
      expect(res.body).toEqual({
        error: ADVANCE_REQUIRES,
        retry: true,
        state: started.state,
        _meta: { _tip: expect.any(String), guide: GUIDE },
      })
    }
  })

  it('answers 400 with retry:true to an oversized response, message or nextInput', async () => {
    const projectId = await planProject(app)
    const { body: started } = await workflow(app, { projectId, action: 'start', flow: 'add', input: 'CSV export' })
    const cases: [Record<string, unknown>, string][] = [
      [{ response: { signal: 'needs_clarification', message: 'x'.repeat(4001) } }, 'message is 4001 characters; at most 4000 are allowed'],
      [
        { response: { signal: 'needs_clarification', message: 'Q?' }, nextInput: 'y'.repeat(4001) },
        'nextInput is 4001 characters; at most 4000 are allowed',
      ],
      [
        { response: { signal: 'draft_ready', padding: 'z'.repeat(500_001) } },
        'response is 500038 characters of JSON; at most 500000 are allowed',
      ],
    ]
    for (const [extra, error] of cases) {
      const res = await workflow(app, { projectId, action: 'advance', state: started.state, ...extra })
      expect({ status: res.status, error: res.body.error, retry: res.body.retry }).toEqual({ status: 400, error, retry: true })
    }
  })

  it('answers 400 with _meta.guide to a body over the server-wide size limit on /workflow (not 413)', async () => {
    const small = await startApp({ MAX_BODY_BYTES: '2048' })
    try {
      const res = await small.call('POST', '/api/v1/workflow', { body: { projectId: 'p', action: 'start', input: 'x'.repeat(4000) } })
      expect(res.status).toBe(400)
      expect(res.body).toEqual({
        error: 'Request body is over the limit of 2048 bytes',
        _meta: { _tip: expect.any(String), guide: GUIDE },
      })
    } finally {
      await small.close()
    }
  })

  it('refuses a strategist key with 403 and _meta.guide, while GET /workflow stays open to it', async () => {
    const strategist = await app.user({ tier: 'strategist' })
    const projectId = await planProject(app)
    for (const body of [{ projectId, action: 'start', flow: 'add', input: 'x' }, { projectId, action: 'nonsense' }, {}]) {
      const res = await workflow(app, body, strategist.key)
      expect(res.status).toBe(403)
      expect(res.body).toEqual({
        error: 'REST API access requires Builder or Team tier',
        message: 'REST API access requires Builder or Team tier',
        _meta: { guide: GUIDE },
      })
    }
    const contributor = await app.user({ contributor: true })
    expect((await workflow(app, { projectId, action: 'start', flow: 'add', input: 'x' }, contributor.key)).status).toBe(403)
    expect((await app.call('GET', '/api/v1/workflow', { key: strategist.key })).status).toBe(200)
  })

  it('lets a strategist member of a team-owned project run a flow', async () => {
    const strategist = await app.user({ tier: 'strategist' })
    const projectId = await planProject(app)
    const added = await app.call('POST', '/api/v1/members', { body: { projectId, userId: strategist.id } })
    expect(added.status).toBe(201)
    const res = await workflow(app, { projectId, action: 'start', flow: 'phase-assign' }, strategist.key)
    expect(res.status).toBe(200)
    expect(res.body._meta.step).toBe('assign')
  })

  it('answers 403 project_access_denied with _meta.guide on a project the key cannot reach', async () => {
    const other = await app.user({ tier: 'team' })
    const projectId = await planProject(app)
    const res = await workflow(app, { projectId, action: 'start', flow: 'add', input: 'x' }, other.key)
    expect(res.status).toBe(403)
    expect(res.body).toEqual({
      error: 'project_access_denied',
      message: 'API key does not have access to this project',
      _meta: { guide: GUIDE },
    })
  })
})

describe('documentation', () => {
  it('describes the workflow and the outline rendering in the guide and the OpenAPI document', async () => {
    const guide = (await app.call('GET', '/api/v1/guide', { key: null })).body
    expect(guide.endpoints).toContainEqual(expect.objectContaining({ method: 'GET', path: '/api/v1/workflow' }))
    expect(guide.endpoints).toContainEqual(expect.objectContaining({ method: 'POST', path: '/api/v1/workflow' }))
    expect(guide.workflow.limits.drafts).toBe(50)
    expect(guide.treeOutline.request).toBe(
      'GET /api/v1/tree?projectId&format=outline&budget=<characters 200-200000, default 12000>[&nodeId=<id>]',
    )
    const doc = (await app.call('GET', '/openapi.json', { key: null })).body
    expect(Object.keys(doc.paths['/api/v1/workflow']).sort()).toEqual(['get', 'post'])
    expect(doc.paths['/api/v1/workflow'].get.security).toEqual([])
    const params = doc.paths['/api/v1/tree'].get.parameters.map((p: any) => p.name)
    expect(params).toEqual(expect.arrayContaining(['format', 'budget']))
  })
})
