import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN } from './helpers'
import { type ServerProcess, startServer } from './process'

/**
 * docs/validation.md seen from outside, through the real server process: for a route of every
 * module, a request with something wrong in its input is answered
 * (a) 403 (the admin API: 401; PATCH /projects: 404) when the key may not write there, whatever is wrong;
 * (b) 400 with the body and message of api.md's Errors (docs/reference/errors.md) when it may;
 * (c) 400 in JSON when the body is no JSON at all: never a 500, never HTML.
 * Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.
 */
let server: ServerProcess
/** another user's key (team plan): no access to P */
let stranger: string
/** the owner's own key with the read role: may read P, may not write anything */
let readKey: string
const P = 'alpha'
const THEIRS = 'bobs-plans'

beforeAll(async () => {
  server = await startServer()
  const made = await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { id: P, name: 'Alpha' } } })
  expect(made.status).toBe(200)
  const seeded = await server.call('POST', '/api/v1/mutate', {
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
  expect(seeded.status).toBe(200)
  const bob = await server.call('POST', '/admin/v1/users', { key: ADMIN_TOKEN, body: { name: 'bob', tier: 'team' } })
  stranger = bob.body.apiKey
  await server.call('POST', '/api/v1/mutate', { key: stranger, body: { action: 'addProject', project: { id: THEIRS, name: 'Bob' } } })
  readKey = (await server.call('POST', '/api/v1/keys', { body: { label: 'reader', scope: { role: 'read' } } })).body.apiKey
}, 60_000)
afterAll(() => server?.close())

const DENIED = { error: 'project_access_denied', message: 'API key does not have access to this project' }
const NOT_YOURS = { error: 'Not your project' }
const KEY_SCOPE = { error: 'key_scope' }
const list = (...errors: string[]) => ({ success: false, errors })

interface Case {
  /** module: what is wrong */
  row: string
  method: string
  path: string
  body?: unknown
  /** the 400 a key that may write there hears (matched: _meta.guide and _tip may ride along) */
  refused: Record<string, unknown>
  /** the stranger's answer, before anything of the input is looked at */
  stranger: { status: number; body: Record<string, unknown> }
  /** a write: the owner's read-only key hears 403 key_scope before anything of the input is looked at */
  write: boolean
}

const mutate = (row: string, body: Record<string, unknown>, refused: Record<string, unknown>): Case => ({
  row: `mutate ${row}`,
  method: 'POST',
  path: '/api/v1/mutate',
  body: { projectId: P, ...body },
  refused,
  stranger: { status: 403, body: DENIED },
  write: true,
})
const read = (row: string, path: string, refused: Record<string, unknown>, denied = DENIED): Case => ({
  row,
  method: 'GET',
  path,
  refused,
  stranger: { status: 403, body: denied },
  write: false,
})

const CASES: Case[] = [
  mutate('add: no label', { action: 'add', node: { type: 'goal', data: {} } }, list('label is required: a non-empty string')),
  // api.md's own example of an enumerated value
  mutate(
    'update: a bad enum',
    { action: 'update', nodeId: 'approach-1', data: { kano: 'sideways' } },
    list('kano must be one of: must-have, incremental, performance, delighter'),
  ),
  mutate('update: an unknown node', { action: 'update', nodeId: 'goal-99', data: { label: 'x' } }, list('Node with id goal-99 not found')),
  mutate(
    'batch: a broken entry',
    {
      action: 'batch',
      mutations: [
        { action: 'add', node: { type: 'goal', data: { label: 'ok' } } },
        { action: 'add', node: { type: 'goal', data: {} } },
      ],
    },
    list('mutations[1]: label is required: a non-empty string'),
  ),
  mutate(
    'revert: both selections',
    { action: 'revert', changeIds: ['1'], filter: { agent: 'a' } },
    list('Send changeIds or filter, not both'),
  ),
  mutate('claim: count over 20', { action: 'claim', agent: 'a/1', count: 50 }, list('count must be an integer from 1 to 20')),
  mutate(
    'addIteration: a name that is no string',
    { action: 'addIteration', iteration: { name: 7 } },
    list('iteration.name is required: a non-empty string'),
  ),
  mutate(
    'propose: no mutations',
    { action: 'propose', title: 'T', mutations: [] },
    list('mutations is required: a non-empty array of add, update, delete or addIteration entries (as a batch)'),
  ),
  {
    row: 'view-command: an unknown type',
    method: 'POST',
    path: '/api/v1/view-command',
    body: { projectId: P, command: { type: 'spin' } },
    refused: { error: 'Invalid command', validTypes: expect.arrayContaining(['setViewMode', 'focusGoals']) },
    stranger: { status: 403, body: DENIED },
    write: true,
  },
  {
    row: 'view-command: setViewMode without a mode',
    method: 'POST',
    path: '/api/v1/view-command',
    body: { projectId: P, command: { type: 'setViewMode', mode: 'globe' } },
    refused: { error: 'Invalid command', message: 'setViewMode needs mode: tree or matrix' },
    stranger: { status: 403, body: DENIED },
    write: true,
  },
  {
    row: 'workflow: an unknown action',
    method: 'POST',
    path: '/api/v1/workflow',
    body: { projectId: P, action: 'finish' },
    refused: { error: 'action must be start or advance' },
    stranger: { status: 403, body: DENIED },
    write: true,
  },
  {
    row: 'workflow: advance without state',
    method: 'POST',
    path: '/api/v1/workflow',
    body: { projectId: P, action: 'advance' },
    refused: { error: expect.stringMatching(/^advance requires state and a structured response/) },
    stranger: { status: 403, body: DENIED },
    write: true,
  },
  read('history: limit 0', `/api/v1/history?projectId=${P}&limit=0`, list('limit must be an integer from 1 to 200')),
  read('ready: limit 0', `/api/v1/ready?projectId=${P}&limit=0`, list('limit must be an integer from 1 to 100')),
  read('events: wait not a number', `/api/v1/events?projectId=${P}&wait=x`, list('wait must be an integer from 0 to 60 (seconds)')),
  read('iterations: an unknown status', `/api/v1/iterations?projectId=${P}&status=open`, list('status must be one of: active, done')),
  read(
    'proposals: an unknown status',
    `/api/v1/proposals?projectId=${P}&status=zzz`,
    list('status must be one of open, applied, rejected, withdrawn'),
  ),
  read('tree: an unknown direction', `/api/v1/tree?projectId=${P}&nodeId=goal-1&direction=sideways`, {
    error: 'direction must be one of: up, down, lateral, context',
  }),
  read('search: limit over 20', `/api/v1/search?projectId=${P}&q=x&limit=21`, list('limit must be an integer from 1 to 20')),
  read('nodes: an unknown type', `/api/v1/nodes?projectId=${P}&type=epic`, list('type must be one of: goal, need, approach, job, task')),
  read('nodes: an unknown name', `/api/v1/nodes?projectId=${P}&tpye=goal`, list("tpye: Property 'tpye' should not be provided")),
  {
    row: 'webhooks: delete by webhookId',
    method: 'DELETE',
    path: `/api/v1/webhooks?projectId=${P}&webhookId=w`,
    refused: { error: 'id is required' },
    stranger: { status: 403, body: NOT_YOURS },
    write: true,
  },
  {
    row: 'webhooks: an http url',
    method: 'POST',
    path: '/api/v1/webhooks',
    body: { projectId: P, url: 'http://example.com/hook' },
    refused: { error: 'url must use https' },
    stranger: { status: 403, body: NOT_YOURS },
    write: true,
  },
  {
    row: 'share: settings that are no object',
    method: 'POST',
    path: '/api/v1/share',
    body: { projectId: P, settings: 'all' },
    refused: { error: 'settings must be an object: {includedGoalIds?}' },
    stranger: { status: 403, body: NOT_YOURS },
    write: true,
  },
  {
    row: 'projects: archived not a boolean',
    method: 'PATCH',
    path: '/api/v1/projects',
    body: { projectId: P, archived: 'yes' },
    refused: list('archived must be a boolean (true or false)'),
    stranger: { status: 404, body: { error: `Project ${P} not found (you can only archive projects you own)` } },
    write: true,
  },
  {
    row: 'presence: an empty nodeId',
    method: 'POST',
    path: '/api/v1/presence',
    body: { projectId: P, nodeId: '' },
    refused: list('nodeId must be the id of a node of this project'),
    stranger: { status: 403, body: DENIED },
    write: false,
  },
  {
    row: 'presence: a field without its nodeId (a rule between two parts, in the schema)',
    method: 'POST',
    path: '/api/v1/presence',
    body: { projectId: P, field: 'label' },
    refused: list('field needs nodeId: the field of which node you are editing'),
    stranger: { status: 403, body: DENIED },
    write: true, // an edit intent needs role propose
  },
  {
    row: 'webhooks: a PATCH that changes nothing (a rule on the whole body, in the schema)',
    method: 'PATCH',
    path: '/api/v1/webhooks',
    body: { projectId: P, id: 'wh_none' },
    refused: { error: 'Nothing to update: send at least one of url, events, rotateSecret' },
    stranger: { status: 403, body: NOT_YOURS },
    write: true,
  },
]

/** A JSON answer: the content type says so and the body parsed (readRes keeps a body that does not parse as text). */
const isJson = (res: { headers: Headers; body: unknown }) =>
  (res.headers.get('content-type') ?? '').startsWith('application/json') && typeof res.body === 'object' && res.body !== null

describe('403 before 400, then api.md’s 400', () => {
  it('answers a key that may not write there 403, whatever is wrong with the input', async () => {
    const seen: unknown[] = []
    for (const c of CASES) {
      const res = await server.call(c.method, c.path, { key: stranger, body: c.body })
      seen.push({ row: c.row, status: res.status, body: res.body, json: isJson(res) })
    }
    expect(seen).toEqual(CASES.map((c) => ({ row: c.row, ...c.stranger, body: expect.objectContaining(c.stranger.body), json: true })))
  })

  it('answers the owner’s read-only key 403 key_scope on a write, and reads with it as with any key', async () => {
    const seen: unknown[] = []
    for (const c of CASES) {
      const res = await server.call(c.method, c.path, { key: readKey, body: c.body })
      seen.push({ row: c.row, status: res.status, body: res.body })
    }
    expect(seen).toEqual(
      CASES.map((c) =>
        c.write
          ? { row: c.row, status: 403, body: expect.objectContaining(KEY_SCOPE) }
          : { row: c.row, status: 400, body: expect.objectContaining(c.refused) },
      ),
    )
  })

  it('answers a key that may write there 400 with the contract’s body and message', async () => {
    const seen: unknown[] = []
    for (const c of CASES) {
      const res = await server.call(c.method, c.path, { body: c.body })
      seen.push({ row: c.row, status: res.status, body: res.body, json: isJson(res) })
    }
    expect(seen).toEqual(CASES.map((c) => ({ row: c.row, status: 400, body: expect.objectContaining(c.refused), json: true })))
    // nothing above was written: the plan still holds the three nodes of the seed
    const nodes = await server.call('GET', `/api/v1/nodes?projectId=${P}`)
    expect(nodes.body.nodes.map((n: { id: string }) => n.id)).toEqual(['goal-1', 'need-1', 'approach-1'])
  })

  it('answers the admin API 401 without the admin token, then 400 for its body', async () => {
    const body = { name: 5 }
    const withKey = await server.call('POST', '/admin/v1/users', { body })
    expect([withKey.status, isJson(withKey)]).toEqual([401, true])
    const withToken = await server.call('POST', '/admin/v1/users', { key: ADMIN_TOKEN, body })
    expect([withToken.status, withToken.body.success, withToken.body.errors?.[0]]).toEqual([400, false, expect.stringMatching(/^name: /)])
  })

  it('answers POST /feedback 401 Unauthorized without a key, then its own error code', async () => {
    const body = { kind: 'rant', summary: 'x' }
    const without = await server.call('POST', '/api/v1/feedback', { key: null, body })
    expect([without.status, without.body.error]).toEqual([401, 'Unauthorized'])
    const res = await server.call('POST', '/api/v1/feedback', { body })
    expect([res.status, res.body]).toEqual([
      400,
      { error: 'invalid_kind', message: 'kind must be one of: feature_request, friction, bug, note' },
    ])
  })
})

describe('a body that is no JSON', () => {
  const BODY_ROUTES = [
    ...new Set([
      ...CASES.filter((c) => c.body !== undefined).map((c) => `${c.method} ${c.path}`),
      'POST /api/v1/feedback',
      'POST /api/v1/keys',
    ]),
  ]

  it('is a 400 in JSON on every route that reads one, whoever sends it: never a 500, never HTML', async () => {
    const seen: unknown[] = []
    for (const route of BODY_ROUTES) {
      const [method, path] = route.split(' ') as [string, string]
      for (const [who, key] of [
        ['owner', undefined],
        ['stranger', stranger],
      ] as const)
        for (const raw of ['{"projectId": "alpha", ', '{projectId: "alpha"}']) {
          const res = await server.call(method, path, { key, body: raw })
          seen.push({ route, who, raw, status: res.status, json: isJson(res), error: res.body?.errors?.[0] })
        }
    }
    expect(seen).toEqual(
      BODY_ROUTES.flatMap((route) =>
        ['owner', 'stranger'].flatMap((who) =>
          ['{"projectId": "alpha", ', '{projectId: "alpha"}'].map((raw) => ({
            route,
            who,
            raw,
            status: 400,
            json: true,
            error: expect.stringMatching(/^Request body is not valid JSON: at line 1, column \d+/),
          })),
        ),
      ),
    )
  })

  it('is refused the same way on the admin API', async () => {
    const res = await server.call('POST', '/admin/v1/users', { key: ADMIN_TOKEN, body: '{"name": ' })
    expect([res.status, isJson(res), res.body.errors?.[0]]).toEqual([400, true, expect.stringMatching(/^Request body is not valid JSON: /)])
  })
})
