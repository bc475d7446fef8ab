import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN } from './helpers'
import { type ServerProcess, startServer } from './process'

/**
 * The answers a new user met that misled (issue 47), through the real process: a mutate refused
 * for its projectId says why in `_meta._tip` (the contract's status and body unchanged, the same
 * words for an unknown project and another user's); a misspelt action names the closest; a body
 * not sent as JSON says so; an empty property name is named; DELETE /share, DELETE /webhooks and
 * GET /webhooks/deliveries treat projectId as required like their siblings; /favicon.ico answers.
 */
const GUIDE_RE = /\/api\/v1\/guide$/
let server: ServerProcess
let stranger: string
const P = 'alpha'
const THEIRS = 'bobs-plans'

beforeAll(async () => {
  server = await startServer()
  await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { id: P, name: 'Alpha' } } })
  const bob = await server.call('POST', '/admin/v1/users', { key: ADMIN_TOKEN, body: { name: 'bob', tier: 'team' } })
  stranger = bob.body.apiKey
  await server.call('POST', '/api/v1/mutate', { key: stranger, body: { action: 'addProject', project: { id: THEIRS, name: 'Bob' } } })
}, 60_000)
afterAll(() => server?.close())

const addGoal = (projectId?: string) => ({
  action: 'add',
  ...(projectId === undefined ? {} : { projectId }),
  node: { type: 'goal', data: { label: 'G' } },
})

describe('a mutate refused for its projectId', () => {
  it('keeps the 403 body and says whether projectId was missing or names no project the key can see', async () => {
    const missing = await server.call('POST', '/api/v1/mutate', { body: addGoal() })
    expect({ status: missing.status, body: missing.body }).toEqual({
      status: 403,
      body: {
        error: 'project_access_denied',
        message: 'API key does not have access to this project',
        _meta: {
          _tip: 'projectId is missing: send the id of one of your projects in the body; GET /api/v1/projects lists them.',
          guide: expect.stringMatching(GUIDE_RE),
        },
      },
    })
    const typo = await server.call('POST', '/api/v1/mutate', { body: addGoal('alhpa') })
    const theirs = await server.call('POST', '/api/v1/mutate', { body: addGoal(THEIRS), headers: { 'idempotency-key': 'k-theirs' } })
    for (const [res, id] of [
      [typo, 'alhpa'],
      [theirs, THEIRS],
    ] as const)
      expect({ status: res.status, body: res.body }).toEqual({
        status: 403,
        body: {
          error: 'project_access_denied',
          message: 'API key does not have access to this project',
          _meta: {
            _tip: `projectId "${id}" names no project this key can see (a typo, or a project it is not a member of); GET /api/v1/projects lists the ids this key can use.`,
            guide: expect.stringMatching(GUIDE_RE),
          },
        },
      })
  })

  it('names the closest action to a misspelt one, and only when one is close', async () => {
    const ad = await server.call('POST', '/api/v1/mutate', { body: { action: 'ad', projectId: P } })
    expect(ad.status).toBe(400)
    expect(ad.body._meta._tip).toStartWith('Did you mean `add`? Send {action, projectId, ...}')
    const iteration = await server.call('POST', '/api/v1/mutate', { body: { action: 'addIterration', projectId: P } })
    expect(iteration.body._meta._tip).toStartWith('Did you mean `addIteration`? ')
    const far = await server.call('POST', '/api/v1/mutate', { body: { action: 'frobnicate', projectId: P } })
    expect(far.body._meta._tip).toStartWith('Send {action, projectId, ...}')
  })

  it('says a body sent as a form or as text was not read as JSON', async () => {
    const body = JSON.stringify(addGoal(P))
    for (const type of ['application/x-www-form-urlencoded', 'text/plain']) {
      const res = await fetch(`${server.url}/api/v1/mutate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.ownerKey}`, 'content-type': type },
        body,
      })
      expect({ status: res.status, errors: ((await res.json()) as { errors: string[] }).errors }).toEqual({
        status: 400,
        errors: [`The body was not read as JSON: it came with Content-Type ${type}; send it with Content-Type: application/json`],
      })
    }
  })

  it('names a property with an empty name instead of calling the body not an object', async () => {
    const res = await server.call('POST', '/api/v1/keys', { body: { '': [] } })
    expect({ status: res.status, body: res.body }).toEqual({
      status: 400,
      body: { success: false, errors: ['The body has a property with an empty name (""): remove it'] },
    })
  })
})

describe('routes that take projectId', () => {
  it('DELETE /share, DELETE /webhooks and GET /webhooks/deliveries require projectId like GET /share and GET /webhooks', async () => {
    const required = { status: 400, body: { success: false, errors: ['projectId is required'] } }
    for (const [method, path] of [
      ['GET', '/api/v1/share'],
      ['DELETE', '/api/v1/share?token=t'],
      ['GET', '/api/v1/webhooks'],
      ['DELETE', '/api/v1/webhooks?id=w'],
      ['GET', '/api/v1/webhooks/deliveries?id=w'],
    ]) {
      const res = await server.call(method!, path!)
      expect({ path, status: res.status, body: res.body }).toEqual({ path, ...required })
    }
    const doc = (await server.call('GET', '/openapi.json')).body
    for (const [method, path] of [
      ['delete', '/api/v1/share'],
      ['delete', '/api/v1/webhooks'],
      ['get', '/api/v1/webhooks/deliveries'],
    ])
      expect(doc.paths[path!][method!].parameters.find((p: { name: string }) => p.name === 'projectId').required).toBe(true)
  })

  it('answers an unknown project and another user’s as api.md says, the same on each route of a family', async () => {
    const denied = { error: 'project_access_denied', message: 'API key does not have access to this project' }
    for (const path of ['/api/v1/events', '/api/v1/view-state', '/api/v1/changelog', '/api/v1/members']) {
      const unknown = await server.call('GET', `${path}?projectId=nope`)
      const theirs = await server.call('GET', `${path}?projectId=${THEIRS}`)
      expect({ path, unknown: [unknown.status, unknown.body], theirs: [theirs.status, theirs.body] }).toEqual({
        path,
        unknown: [403, denied],
        theirs: [403, denied],
      })
    }
    // the guided reads add _meta.guide; an unknown project and another's still read alike
    for (const path of [
      '/api/v1/nodes?',
      '/api/v1/iterations?',
      '/api/v1/outline?',
      '/api/v1/search?q=x&',
      '/api/v1/tree?direction=down&nodeId=x&',
    ]) {
      const unknown = await server.call('GET', `${path}projectId=nope`)
      const theirs = await server.call('GET', `${path}projectId=${THEIRS}`)
      expect({ path, unknown: [unknown.status, unknown.body], theirs: [theirs.status, theirs.body] }).toEqual({
        path,
        unknown: [403, { ...denied, _meta: { guide: expect.stringMatching(GUIDE_RE) } }],
        theirs: [403, { ...denied, _meta: { guide: expect.stringMatching(GUIDE_RE) } }],
      })
    }
    // share and webhooks: 403 'Not your project' for another's, 404 for an unknown project (api.md)
    for (const [method, path] of [
      ['GET', '/api/v1/share?'],
      ['DELETE', '/api/v1/share?token=t&'],
      ['GET', '/api/v1/webhooks?'],
      ['DELETE', '/api/v1/webhooks?id=w&'],
      ['GET', '/api/v1/webhooks/deliveries?id=w&'],
    ]) {
      const unknown = await server.call(method!, `${path}projectId=nope`)
      const theirs = await server.call(method!, `${path}projectId=${THEIRS}`)
      expect({ path, unknown: unknown.status, theirs: [theirs.status, theirs.body] }).toEqual({
        path,
        unknown: 404,
        theirs: [403, { error: 'Not your project' }],
      })
    }
  })
})

describe('concurrent updates of one node', () => {
  it('each land: an update of one field never writes back the others as they were before a concurrent one', async () => {
    const seed = await server.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: P,
        mutations: [
          { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
          { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
          { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
        ],
      },
    })
    const id = seed.body.results.at(-1).nodeId
    for (const round of [1, 2, 3]) {
      const fields: Record<string, unknown> = {
        label: `A${round}`,
        description: `d${round}`,
        notes: `n${round}`,
        measure: `m${round}`,
        size: ['skateboard', 'vespa', 'car'][round - 1],
        kano: ['must-have', 'incremental', 'delighter'][round - 1],
        approachStatus: ['development', 'validation', 'resolved'][round - 1],
      }
      const answers = await Promise.all(
        Object.entries(fields).map(([k, v]) =>
          server.call('POST', '/api/v1/mutate', { body: { action: 'update', projectId: P, nodeId: id, data: { [k]: v } } }),
        ),
      )
      expect(answers.map((a) => a.status)).toEqual(Object.keys(fields).map(() => 200))
      const { body } = await server.call('GET', `/api/v1/nodes?projectId=${P}`)
      expect(body.nodes.find((n: { id: string }) => n.id === id).data).toEqual(fields)
    }
  })
})

describe('/favicon.ico', () => {
  it('answers the icon, not a 404', async () => {
    const res = await fetch(`${server.url}/favicon.ico`)
    expect({ status: res.status, type: res.headers.get('content-type') }).toEqual({ status: 200, type: 'image/svg+xml' })
    expect(await res.text()).toStartWith('<svg xmlns="http://www.w3.org/2000/svg"')
  })
})
