import { afterAll, describe, expect, it } from 'bun:test'
import { createApp } from '../src/app'
import { actions } from '../src/mutate/service'
import { startApp } from './helpers'

// The API's common rules: api.md Versioning 6–7, Errors, Limits; self-hosting.md (health, guide, request size)
const app = await startApp({ MAX_BODY_BYTES: '2048' })
const limited = await startApp({ RATE_LIMIT_PER_MINUTE: '3' })
const proxied = await startApp({ RATE_LIMIT_PER_MINUTE: '3', TRUST_PROXY: 'true' })
afterAll(async () => {
  await Promise.all([app.close(), limited.close(), proxied.close()])
})

const GUIDE = 'http://arbor.test/api/v1/guide'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

describe('unknown endpoints under /api/', () => {
  it.each([
    ['GET', '/api/v1/nothing-here'],
    ['GET', '/api/v2/projects'],
    ['POST', '/api/v2/mutate'],
    ['GET', '/api/nothing-here'],
    ['GET', '/api/'],
    ['GET', '/api/v1'],
    ['PUT', '/api/v1/nothing-here'],
  ])('answers %s %s with 404 JSON unknown_endpoint and a tip, never HTML', async (method, path) => {
    for (const key of [undefined, null]) {
      const res = await app.call(method, path, { key })
      expect(res.status).toBe(404)
      expect(res.headers.get('content-type')).toStartWith('application/json')
      expect(res.body).toEqual({ error: 'unknown_endpoint', message: expect.any(String), _meta: { _tip: expect.stringContaining(GUIDE) } })
    }
  })
})

describe('legacy unversioned paths', () => {
  it.each([
    ['GET', '/api/projects', 'projects'],
    ['POST', '/api/mutate', 'mutate'],
  ])('%s %s answers like /api/v1 with Deprecation: true and a Link to its successor', async (method, path, name) => {
    const body = method === 'POST' ? { action: 'renameProject', projectId: await app.project(), name: 'Legacy' } : undefined
    const res = await app.call(method, path, { body })
    expect(res.status).toBe(200)
    expect(res.headers.get('deprecation')).toBe('true')
    expect(res.headers.get('link')).toBe(`<http://arbor.test/api/v1/${name}>; rel="successor-version"`)
  })

  it.each([
    ['GET', '/api/tier-status'],
    ['GET', '/api/members?projectId=PROJECT'],
    ['POST', '/api/feedback'],
  ])('%s %s answers like /api/v1 without deprecation headers', async (method, path) => {
    const body = method === 'POST' ? { kind: 'note', summary: 'legacy path' } : undefined
    const res = await app.call(method, path.replace('PROJECT', await app.project()), { body })
    expect(res.status).toBe(200)
    expect(res.headers.get('deprecation')).toBeNull()
    expect(res.headers.get('link')).toBeNull()
  })

  it('keeps deprecation headers on errors from a deprecated path', async () => {
    const res = await app.call('GET', '/api/projects', { key: null })
    expect(res.status).toBe(401)
    expect(res.headers.get('deprecation')).toBe('true')
  })
})

describe('request bodies', () => {
  const NOT_JSON = 'Request body is not valid JSON: at line 1, column 28 (offset 27)'
  it.each([
    [
      '/api/v1/mutate',
      {
        success: false,
        errors: [`${NOT_JSON}, expected a property name in double quotes, found the end of the body`],
        _meta: { guide: GUIDE },
      },
    ],
    ['/api/v1/feedback', { success: false, errors: [`${NOT_JSON}, expected a property name in double quotes, found the end of the body`] }],
  ])('answers malformed JSON on %s with a JSON 400', async (path, expected) => {
    const res = await app.call('POST', path, { body: '{"action": "renameProject",' })
    expect(res.status).toBe(400)
    expect(res.headers.get('content-type')).toStartWith('application/json')
    expect(res.body).toEqual(expected)
  })

  it.each([['[1,2]'], ['"text"'], ['null']])('answers a JSON body that is not an object (%s) with a 400 that says so', async (body) => {
    const res = await app.call('POST', '/api/v1/mutate', { body })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({
      success: false,
      errors: ['Request body must be a JSON object (Content-Type: application/json)'],
      _meta: { guide: GUIDE },
    })
  })

  it('answers malformed JSON on PATCH /projects with a JSON 400', async () => {
    const res = await app.call('PATCH', '/api/v1/projects', { body: '{nope' })
    expect(res.status).toBe(400)
    expect(res.body.success).toBe(false)
  })

  const OVER = { error: 'payload_too_large', message: 'Request body is over the limit of 2048 bytes', _meta: { _tip: expect.any(String) } }
  it('answers a body over MAX_BODY_BYTES with a JSON 413, before authentication', async () => {
    for (const key of [undefined, null]) {
      const res = await app.call('POST', '/api/v1/feedback', { key, body: { kind: 'note', summary: 'x', details: 'd'.repeat(3000) } })
      expect(res.status).toBe(413)
      expect(res.headers.get('content-type')).toStartWith('application/json')
      expect(res.body).toEqual(OVER)
    }
  })

  it('answers a declared Content-Length over the limit with 413 without reading the body', async () => {
    const res = await app.call('POST', '/api/v1/mutate', { body: '{}', headers: { 'content-length': '1000000' } })
    expect(res.status).toBe(413)
    expect(res.body).toEqual(OVER)
  })

  it('accepts a body of exactly MAX_BODY_BYTES', async () => {
    const base = JSON.stringify({ kind: 'note', summary: 'x', context: { pad: '' } })
    const body = JSON.stringify({ kind: 'note', summary: 'x', context: { pad: 'p'.repeat(2048 - base.length) } })
    expect(body.length).toBe(2048)
    const res = await app.call('POST', '/api/v1/feedback', { body })
    expect(res.status).toBe(200)
  })
})

describe('rate limit per client IP', () => {
  it('answers 429 with Retry-After past RATE_LIMIT_PER_MINUTE, counting requests with and without a key', async () => {
    const ip = '10.0.0.1'
    expect((await limited.call('GET', '/api/v1/tier-status', { ip })).status).toBe(200)
    expect((await limited.call('GET', '/api/v1/tier-status', { ip, key: null })).status).toBe(401)
    expect((await limited.call('GET', '/api/v1/guide', { ip, key: null })).status).toBe(200)
    const res = await limited.call('GET', '/api/v1/tier-status', { ip })
    expect(res.status).toBe(429)
    expect(res.body).toEqual({
      error: 'rate_limited',
      message: 'More than 3 requests in 60 seconds from 10.0.0.1',
      _meta: { _tip: expect.stringContaining('retry') },
    })
    const wait = Number(res.headers.get('retry-after'))
    expect(Number.isInteger(wait) && wait >= 1 && wait <= 60).toBe(true)
    expect(res.headers.get('x-request-id')).toMatch(UUID)
  })

  it('counts per IP address, not per key, and only under /api/', async () => {
    const ip = '10.0.0.2'
    const u = await limited.user()
    for (let i = 0; i < 2; i++) await limited.call('GET', '/api/v1/tier-status', { ip })
    expect((await limited.call('GET', '/api/v1/tier-status', { ip, key: u.key })).status).toBe(200)
    expect((await limited.call('GET', '/api/v1/tier-status', { ip, key: u.key })).status).toBe(429)
    expect((await limited.call('GET', '/api/v1/tier-status', { ip: '10.0.0.3' })).status).toBe(200)
    expect((await limited.call('GET', '/healthz', { ip })).status).toBe(200)
  })

  it('ignores X-Forwarded-For unless TRUST_PROXY is set', async () => {
    const ip = '10.0.0.4'
    for (let i = 0; i < 3; i++)
      expect((await limited.call('GET', '/api/v1/guide', { ip, key: null, headers: { 'x-forwarded-for': `192.0.2.${i}` } })).status).toBe(
        200,
      )
    expect((await limited.call('GET', '/api/v1/guide', { ip, key: null, headers: { 'x-forwarded-for': '192.0.2.99' } })).status).toBe(429)
  })

  it('takes the client from the first X-Forwarded-For address with TRUST_PROXY', async () => {
    const proxy = '10.9.9.9'
    const from = (client: string) =>
      proxied.call('GET', '/api/v1/guide', { ip: proxy, key: null, headers: { 'x-forwarded-for': `${client}, ${proxy}` } })
    for (let i = 0; i < 3; i++) expect((await from('198.51.100.1')).status).toBe(200)
    const over = await from('198.51.100.1')
    expect(over.status).toBe(429)
    expect(over.body.message).toBe('More than 3 requests in 60 seconds from 198.51.100.1')
    // another client behind the same proxy is counted on its own
    expect((await from('198.51.100.2')).status).toBe(200)
  })
})

describe('request ids', () => {
  it.each([
    ['GET', '/healthz', undefined],
    ['GET', '/api/v1/projects', undefined],
    ['GET', '/api/v1/projects', null],
    ['GET', '/api/v2/anything', undefined],
    ['POST', '/api/v1/mutate', undefined],
  ])('are on every response: %s %s', async (method, path, key) => {
    const res = await app.call(method, path, { key, body: method === 'POST' ? {} : undefined })
    expect(res.headers.get('x-request-id')).toMatch(UUID)
  })

  it('differ per request and echo the caller’s own X-Request-Id', async () => {
    const a = await app.call('GET', '/healthz')
    const b = await app.call('GET', '/healthz')
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'))
    const mine = await app.call('GET', '/api/v1/tier-status', { headers: { 'x-request-id': 'trace-123' } })
    expect(mine.headers.get('x-request-id')).toBe('trace-123')
  })

  it('replace an X-Request-Id that is not a plain token of at most 128 characters', async () => {
    for (const sent of ['two words', '<script>', 'a'.repeat(129), 'arb"x'])
      expect((await app.call('GET', '/healthz', { headers: { 'x-request-id': sent } })).headers.get('x-request-id')).toMatch(UUID)
    const longest = 'a'.repeat(128)
    expect((await app.call('GET', '/healthz', { headers: { 'x-request-id': longest } })).headers.get('x-request-id')).toBe(longest)
  })
})

describe('health', () => {
  it('answers /healthz and /readyz without authentication', async () => {
    expect(await app.call('GET', '/healthz', { key: null })).toMatchObject({ status: 200, body: { status: 'ok' } })
    expect(await app.call('GET', '/readyz', { key: null })).toMatchObject({ status: 200, body: { status: 'ready' } })
  })

  it('answers /readyz with 503 once the database is gone, while /healthz stays up', async () => {
    const doomed = await startApp()
    await doomed.close()
    expect(await doomed.call('GET', '/readyz', { key: null })).toMatchObject({
      status: 503,
      body: { status: 'unavailable', message: 'database unreachable' },
    })
    expect((await doomed.call('GET', '/healthz', { key: null })).status).toBe(200)
  })
})

describe('GET /api/v1/guide', () => {
  it('answers without authentication and lists every /api/v1 route of the app', async () => {
    const res = await app.call('GET', '/api/v1/guide', { key: null })
    expect(res.status).toBe(200)
    const routes = createApp(app.deps)
      .app.routes.filter((r) => r.path.startsWith('/api/v1/') && !['HEAD', 'OPTIONS'].includes(r.method))
      .map((r) => `${r.method} ${r.path}`)
      .sort()
    const listed = res.body.endpoints.map((e: any) => `${e.method} ${e.path}`).sort()
    expect(listed).toEqual(routes)
    expect(listed).toContain('POST /api/v1/mutate')
    for (const e of res.body.endpoints) expect(e.summary).not.toBe('')
  })

  it('documents every action POST /mutate accepts', async () => {
    const res = await app.call('GET', '/api/v1/guide', { key: null })
    expect(Object.keys(res.body.actions).sort()).toEqual(Object.keys(actions).sort())
  })

  it('is the URL that _meta.guide points at', async () => {
    const res = await app.call('GET', '/api/v1/guide', { key: null })
    expect(res.body.guide).toBe(GUIDE)
    expect(res.body.openapi).toBe('http://arbor.test/openapi.json')
  })
})

describe('_meta.guide from mutate', () => {
  it('is on a 400', async () => {
    const res = await app.call('POST', '/api/v1/mutate', { body: { action: 'noSuchAction' } })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({
      success: false,
      errors: [expect.stringMatching(/^action must be one of: /)],
      _meta: { _tip: expect.any(String), guide: GUIDE },
    })
    const missing = await app.call('POST', '/api/v1/mutate', { body: {} })
    expect(missing.body).toEqual({ success: false, errors: ['action is required'], _meta: { guide: GUIDE } })
  })

  it('is on a 401', async () => {
    const res = await app.call('POST', '/api/v1/mutate', { key: null, body: { action: 'addProject' } })
    expect(res.body).toEqual({ error: 'unauthorized', message: 'Missing or invalid API key', _meta: { guide: GUIDE } })
  })

  it('is on a 403', async () => {
    const u = await app.user({ tier: 'strategist' })
    const res = await app.call('POST', '/api/v1/mutate', { key: u.key, body: { action: 'addProject', project: { name: 'x' } } })
    expect(res.status).toBe(403)
    expect(res.body._meta).toEqual({ guide: GUIDE })
  })
})
