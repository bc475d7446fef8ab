import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { loadConfig } from '../src/config'
import { loggablePath, MAX_JSON_DEPTH } from '../src/http/input-guard'
import { ADMIN_TOKEN, startApp, type TestApp } from './helpers'

/** Issue 10: malformed input found by probing the running server; each once answered 500. */
let app: TestApp
let p: string
const GUIDE = 'http://arbor.test/api/v1/guide'
beforeAll(async () => {
  app = await startApp()
  p = await app.project()
})
afterAll(() => app.close())

const mutate = (body: unknown, headers?: Record<string, string>) => app.call('POST', '/api/v1/mutate', { body, headers })
const ACTIONS =
  'add, update, delete, restore, batch, classify, addIteration, updateIteration, deleteIteration, reorderIterations, addProject, renameProject'

describe('client-supplied names never reach Object.prototype', () => {
  for (const action of ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf'])
    it(`refuses action ${action} with 400, with or without an Idempotency-Key`, async () => {
      for (const headers of [undefined, { 'idempotency-key': `k-${action}` }]) {
        const res = await mutate({ action, projectId: p }, headers)
        expect({ status: res.status, body: res.body }).toEqual({
          status: 400,
          body: {
            success: false,
            errors: [`action must be one of: ${ACTIONS}`],
            _meta: {
              _tip: 'Send {action, projectId, ...}; the guide lists the body of every action. Agents also have claim, renewClaim, releaseClaim.',
              guide: GUIDE,
            },
          },
        })
      }
    })

  for (const field of ['constructor', '__proto__', 'toString'])
    it(`refuses a node field named ${field} with 400`, async () => {
      const res = await mutate({
        action: 'add',
        projectId: p,
        node: { type: 'task', data: JSON.parse(`{"label":"x","${field}":"y"}`) },
      })
      expect(res.status).toBe(400)
      expect(res.body.errors[0]).toStartWith(`Unknown field ${field}`)
    })
})

describe('NUL characters answer 400 naming the field', () => {
  it('in a label', async () => {
    const res = await mutate({ action: 'add', projectId: p, node: { type: 'task', data: { label: 'a\u0000b' } } })
    expect({ status: res.status, body: res.body }).toEqual({
      status: 400,
      body: { success: false, errors: ['node.data.label must not contain NUL characters (\\u0000)'], _meta: { guide: GUIDE } },
    })
  })

  it('in a batch entry id, a project name, feedback and an idempotency key', async () => {
    const cases: [unknown, string][] = [
      [
        { action: 'batch', projectId: p, mutations: [{ action: 'add', node: { id: 'draft-\u0000', type: 'goal', data: { label: 'g' } } }] },
        'mutations[0].node.id',
      ],
      [{ action: 'addProject', project: { name: 'x\u0000' } }, 'project.name'],
      [{ action: 'add', projectId: p, node: { type: 'task', data: { label: 'x' } }, idempotencyKey: 'k\u0000' }, 'idempotencyKey'],
    ]
    for (const [body, field] of cases) {
      const res = await mutate(body)
      expect(res.status).toBe(400)
      expect(res.body.errors).toEqual([`${field} must not contain NUL characters (\\u0000)`])
    }
    const fb = await app.call('POST', '/api/v1/feedback', { body: { kind: 'bug', summary: 'a\u0000' } })
    expect(fb.status).toBe(400)
  })

  it('in a query parameter and a path', async () => {
    const q = await app.call('GET', `/api/v1/nodes?projectId=${p}%00`)
    expect({ status: q.status, errors: q.body.errors }).toEqual({
      status: 400,
      errors: ['Query parameter projectId must not contain NUL characters (\\u0000)'],
    })
    const path = await app.call('GET', '/admin/v1/users/a%00b', { key: ADMIN_TOKEN })
    expect(path.status).toBe(400)
  })
})

describe('deep nesting', () => {
  it(`refuses a body nested deeper than ${MAX_JSON_DEPTH} levels with 400, even 50,000 deep`, async () => {
    for (const depth of [MAX_JSON_DEPTH + 1, 50_000]) {
      const body = `{"action":"add","projectId":"${p}","node":${'['.repeat(depth)}${']'.repeat(depth)}}`
      for (const path of ['/api/v1/mutate', '/api/v1/feedback', '/admin/v1/users']) {
        const res = await app.call('POST', path, { body, key: path.startsWith('/admin') ? ADMIN_TOKEN : undefined })
        expect(res.status).toBe(400)
        expect(res.body.errors[0]).toStartWith(`Request body is nested deeper than ${MAX_JSON_DEPTH} levels`)
      }
    }
  })

  it('accepts a body at the limit', async () => {
    const res = await app.call('POST', '/api/v1/feedback', {
      body: {
        kind: 'note',
        summary: 'deep',
        context: JSON.parse(`${'{"a":'.repeat(MAX_JSON_DEPTH - 2)}1${'}'.repeat(MAX_JSON_DEPTH - 2)}`),
      },
    })
    expect(res.status).not.toBe(500)
  })
})

describe('ranges', () => {
  it('refuses an event cursor past bigint with 400', async () => {
    for (const after of ['99999999999999999999_1', '1_99999999999999999999']) {
      const res = await app.call('GET', `/api/v1/events?projectId=${p}&after=${after}`)
      expect(res.status).toBe(400)
      expect(res.body.errors).toEqual(['after must be a nextCursor returned by this endpoint'])
    }
  })

  it('keeps explicit ids and the id parser in agreement, so an export loads back', async () => {
    const src = await app.project()
    const add = await mutate({
      action: 'batch',
      projectId: src,
      mutations: [{ action: 'add', node: { id: 'goal-999999999', type: 'goal', data: { label: 'big' } } }],
    })
    expect(add.status).toBe(200)
    const next = await mutate({ action: 'add', projectId: src, node: { type: 'goal', data: { label: 'after' } } })
    expect(next.body.node.id).toBe('goal-1000000000')
    const nodes = (await app.call('GET', `/api/v1/nodes?projectId=${src}`)).body.nodes
    const dst = await app.project()
    const again = await mutate({
      action: 'batch',
      projectId: dst,
      mutations: nodes.map((n: any) => ({ action: 'add', node: { id: n.id, type: n.type, parentId: n.parentId, data: n.data } })),
    })
    expect(again.status).toBe(200)
    const tooBig = await mutate({
      action: 'batch',
      projectId: dst,
      mutations: [{ action: 'add', node: { id: 'goal-99999999999', type: 'goal', data: { label: 'x' } } }],
    })
    expect(tooBig.status).toBe(400)
  })

  it('asks classify for its projectId with 400', async () => {
    const res = await mutate({ action: 'classify', nodeId: 'task-1' })
    expect(res.status).toBe(400)
    expect(res.body.errors).toEqual(['projectId is required: node ids are unique within a project, not across projects'])
  })

  it('caps gitTags and parses completedAt as RFC 3339', async () => {
    const many = await mutate({ action: 'addIteration', projectId: p, iteration: { name: 'Tags', gitTags: Array(51).fill('v1') } })
    expect(many.body.errors).toEqual(['gitTags must have at most 50 entries'])
    const long = await mutate({ action: 'addIteration', projectId: p, iteration: { name: 'Tags', gitTags: ['x'.repeat(201)] } })
    expect(long.body.errors).toEqual(['gitTags entries must be 1 to 200 characters'])
    for (const completedAt of ['2026', 'May 1 2026', '2026-02-30T00:00:00Z', '2026-05-01T12:00:00']) {
      const res = await mutate({ action: 'add', projectId: p, node: { type: 'task', data: { label: 't', completedAt } } })
      expect({ completedAt, status: res.status }).toEqual({ completedAt, status: 400 })
    }
    const ok = await mutate({
      action: 'add',
      projectId: p,
      node: { type: 'task', data: { label: 't', status: 'done', completedAt: '2026-05-01T12:00:00+02:00' } },
    })
    expect({ status: ok.status, errors: ok.body.errors }).toEqual({ status: 200, errors: undefined })
  })
})

describe('headers and logs', () => {
  it('marks API JSON and the public share JSON no-store and nosniff', async () => {
    const minted = await app.call('POST', '/api/v1/share', { body: { projectId: p } })
    for (const path of [`/api/v1/nodes?projectId=${p}`, `/api/v1/public/share/${minted.body.token}`, '/api/v1/nope']) {
      const res = await app.call('GET', path)
      expect({ path, cache: res.headers.get('cache-control'), sniff: res.headers.get('x-content-type-options') }).toEqual({
        path,
        cache: 'no-store',
        sniff: 'nosniff',
      })
    }
  })

  it('redacts share tokens from logged paths and caps their length', () => {
    expect(loggablePath('/s/abcdef123')).toBe('/s/[redacted]')
    expect(loggablePath('/api/v1/public/share/abcdef123')).toBe('/api/v1/public/share/[redacted]')
    expect(loggablePath('/api/public/share/abc')).toBe('/api/public/share/[redacted]')
    expect(loggablePath(`/api/v1/${'x'.repeat(500)}`)).toHaveLength(201)
  })
})

describe('the admin API', () => {
  it('answers 429 to an IP after 10 failed authentications in a minute, even with the right token', async () => {
    const ip = '203.0.113.7'
    for (let i = 0; i < 10; i++) expect((await app.call('GET', '/admin/v1/users', { key: 'wrong', ip })).status).toBe(401)
    const blocked = await app.call('GET', '/admin/v1/users', { key: ADMIN_TOKEN, ip })
    expect({ status: blocked.status, error: blocked.body.error }).toEqual({ status: 429, error: 'rate_limited' })
    expect((await app.call('GET', '/admin/v1/users', { key: ADMIN_TOKEN })).status).toBe(200)
  })

  it('refuses an ADMIN_TOKEN shorter than 24 characters, without printing it', () => {
    expect(() => loadConfig({ ADMIN_TOKEN: 'short-secret' })).toThrow(
      'ADMIN_TOKEN is too short (12 characters): expected at least 24, e.g. the output of openssl rand -hex 24',
    )
  })

  it('holds REPLAY_SECRET to the rules of ADMIN_TOKEN: 30 spaces, a tab or a short one is refused (issue 50, 7)', () => {
    for (const name of ['ADMIN_TOKEN', 'REPLAY_SECRET']) {
      for (const value of [' '.repeat(30), `${'a'.repeat(24)}\t`, `${'a'.repeat(12)} ${'b'.repeat(12)}`, '\u00a0'.repeat(30)])
        expect(() => loadConfig({ [name]: value })).toThrow(
          `${name} holds spaces or control characters: expected at least 24 visible characters, e.g. the output of openssl rand -hex 24`,
        )
      expect(() => loadConfig({ [name]: 'short-secret' })).toThrow(`${name} is too short (12 characters): expected at least 24`)
      expect(loadConfig({ [name]: 'r3play-r3play-r3play-r3play' })).toBeDefined()
    }
  })
})

describe('issue 50, 4: what the database cannot hold answers 400 naming the field', () => {
  it('a history filter of year 0000 (since, until), read or reverted', async () => {
    for (const field of ['since', 'until']) {
      const res = await app.call('GET', `/api/v1/history?projectId=${p}&${field}=0000-01-01`)
      expect(res.status).toBe(400)
      expect(JSON.stringify(res.body)).toContain(`${field} must be an ISO 8601 date-time`)
      const revert = await mutate({ action: 'revert', projectId: p, filter: { [field]: '0000-01-01' } })
      expect(revert.status).toBe(400)
      expect(JSON.stringify(revert.body)).toContain(`${field} must be an ISO 8601 date-time`)
    }
    // the first year PostgreSQL has still reads
    expect((await app.call('GET', `/api/v1/history?projectId=${p}&since=0001-01-01`)).status).toBe(200)
  })

  it('an imported frontmatter value with an escaped NUL or lone surrogate, in any field', async () => {
    const q = await app.project()
    expect(
      (await mutate({ action: 'add', projectId: q, node: { type: 'task', data: { label: 'Fix it', iteration: 'Later' } } })).status,
    ).toBe(200)
    const exported = (await app.call('GET', `/api/v1/export-okf?projectId=${q}`)).body.files as Record<string, string>
    const path = Object.keys(exported).find((f) => f.startsWith('tasks/'))!
    // the same bundle with one line of the task's frontmatter replaced
    const file = (edit: (text: string) => string) => ({ ...exported, [path]: edit(exported[path]!) })
    const cases: [(text: string) => string, string][] = [
      [(t) => t.replace(/^title: .*$/m, 'title: "a\\0b"'), `${path}: title must not contain NUL characters`],
      [(t) => t.replace(/^title: .*$/m, 'title: "a\\uD800b"'), `${path}: title must be well-formed Unicode`],
      [(t) => t.replace(/^title: .*$/m, 'title: "ok"\nnotes: "S\\0"'), `${path}: notes must not contain NUL characters`],
      [(t) => t.replace(/^title: .*$/m, 'title: "ok"\n"\\uDC00": x'), `A key in body must be well-formed Unicode`],
    ]
    for (const [edit, message] of cases) {
      const res = await app.call('POST', '/api/v1/import-okf', { body: { files: file(edit) } })
      expect({ message, status: res.status }).toEqual({ message, status: 400 })
      expect(res.body.errors).toEqual([expect.stringContaining(message)])
    }
    // the bundle as exported still imports
    expect((await app.call('POST', '/api/v1/import-okf', { body: { files: exported } })).status).toBe(200)
  })
})
