import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN } from './helpers'
import { type ServerProcess, startServer } from './process'
import { rawRequest } from './raw-http'

// Issue 28, defect 1: Bun builds request.url from the Host header and Elysia routes on it from a
// fixed offset, so with a Host of 1-3 characters `/zz/api/…` was routed as `/api/…` while the
// wrapper's checks (rate limit, admin lock-out, MCP client ip, log redaction, Cache-Control) saw
// `/zz/api/…`. Each symptom the probe measured, through the real process with a short Host.
const RATE_LIMIT = 40
const projectId = 'host-plan'
let server: ServerProcess
let shareToken: string
const raw = (target: string, opts: { host?: string; method?: string; headers?: Record<string, string>; body?: unknown } = {}) =>
  rawRequest(server.url, { target, host: opts.host ?? 'x', method: opts.method, headers: opts.headers, body: opts.body })
const owner = () => ({ authorization: `Bearer ${server.ownerKey}` })

beforeAll(async () => {
  server = await startServer({ RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) })
  const made = await server.call('POST', '/api/v1/mutate', {
    body: { action: 'addProject', project: { name: 'Host plan', id: projectId } },
  })
  expect(made.status).toBe(200)
  const share = await server.call('POST', '/api/v1/share', { body: { projectId } })
  expect(share.status).toBe(201)
  shareToken = share.body.token
}, 60_000)
afterAll(() => server.close())

const unknown = (path: string, method = 'GET') => ({
  error: 'unknown_endpoint',
  message: `No endpoint ${method} ${path}`,
  _meta: { _tip: expect.stringMatching(/^See http:\/\/\S+\/api\/v1\/guide for every endpoint, or \/openapi.json.$/) },
})

describe('a short Host header', () => {
  it('routes the path the checks see, with Cache-Control: no-store under /api', async () => {
    const res = await raw('/api/v1/projects', { headers: owner() })
    expect({ status: res.status, cacheControl: res.headers['cache-control'], body: res.body }).toEqual({
      status: 200,
      cacheControl: 'no-store',
      body: { projects: [{ id: projectId, name: 'Host plan', archived: false, role: 'owner' }] },
    })
    const shifted = await raw('/zz/api/v1/projects', { headers: owner() })
    expect({ status: shifted.status, type: shifted.headers['content-type'], body: shifted.body }).toEqual({
      status: 404,
      type: 'application/json; charset=utf-8',
      body: unknown('/zz/api/v1/projects'),
    })
  })

  it('refuses a Host that is no host name with a JSON 400', async () => {
    for (const host of ['a/b', '', 'a?b', 'x\\y']) {
      const res = await raw('/api/v1/projects', { host, headers: owner() })
      expect({ host, status: res.status, type: res.headers['content-type'], body: res.body }).toEqual({
        host,
        status: 400,
        type: 'application/json; charset=utf-8',
        body: { success: false, errors: ['The Host header is not a valid host name'] },
      })
    }
  })

  it('never writes a share token to the log', async () => {
    const shifted = await raw(`/zz/api/v1/public/share/${shareToken}`)
    expect(shifted.status).toBe(404)
    const direct = await raw(`/api/v1/public/share/${shareToken}`)
    expect(direct.status).toBe(200)
    await server.until(
      async () =>
        server.output().includes('"path":"/zz/api/v1/public/share/[redacted]"') &&
        server.output().includes('"path":"/api/v1/public/share/[redacted]"'),
      10_000,
      'both request lines logged',
    )
    expect(server.output().includes(shareToken)).toBe(false)
  })
})

describe('over-long requests', () => {
  it('answers a path over 16 KiB with a JSON 414 and headers over 32 KiB with a JSON 431', async () => {
    const long = await raw(`/api/v1/projects?q=${'a'.repeat(20_000)}`, { headers: owner() })
    expect({ status: long.status, type: long.headers['content-type'], body: long.body }).toEqual({
      status: 414,
      type: 'application/json; charset=utf-8',
      body: {
        error: 'uri_too_long',
        message: 'The path and query are 20019 bytes; at most 16384 are allowed',
        _meta: { _tip: 'Send long values in a POST body instead of the URL.' },
      },
    })
    const big = await raw('/api/v1/projects', { headers: { ...owner(), 'x-padding': 'b'.repeat(40_000) } })
    expect({ status: big.status, type: big.headers['content-type'], error: big.body?.error }).toEqual({
      status: 431,
      type: 'application/json; charset=utf-8',
      error: 'headers_too_large',
    })
  })
})

describe.skipIf(!process.env.TEST_DATABASE_URL)('a 500 the code did not expect', () => {
  it('is logged at error level with its stack and the request id, and answers JSON without the cause', async () => {
    const { default: postgres } = await import('postgres')
    const sql = postgres(server.env.DATABASE_URL!, { max: 1, onnotice: () => {} })
    await sql.unsafe('alter table feedback rename to feedback_gone') // a database the code cannot expect
    try {
      const res = await server.call('POST', '/api/v1/feedback', {
        body: { kind: 'note', summary: 'hello' },
        headers: { 'x-request-id': 'probe-500' },
      })
      expect({ status: res.status, body: res.body, id: res.headers.get('x-request-id') }).toEqual({
        status: 500,
        body: { error: 'internal_error', message: 'Something went wrong on our side; the request may be retried' },
        id: 'probe-500',
      })
      const line = await server.until(
        async () =>
          server
            .output()
            .split('\n')
            .find((l) => l.includes('"level":"error"') && l.includes('"requestId":"probe-500"')),
        10_000,
        'the error line',
      )
      const logged = JSON.parse(line)
      expect({ ...logged, time: typeof logged.time, error: typeof logged.error }).toEqual({
        time: 'string',
        level: 'error',
        msg: 'unhandled error',
        requestId: 'probe-500',
        method: 'POST',
        path: '/api/v1/feedback',
        status: 500,
        error: 'string',
      })
      expect(logged.error).toMatch(/feedback.*does not exist[\s\S]*\n\s+at /)
      // the key appears once: the first start prints it for the owner
      expect(server.output().split(server.ownerKey).length).toBe(2)
    } finally {
      await sql.unsafe('alter table feedback_gone rename to feedback')
      await sql.end()
    }
  })
})

// these exhaust the address's rate limit and admin lock-out, so they run last
describe('limits that a short Host no longer gets past', () => {
  it('counts a short-Host request against the rate limit', async () => {
    let status = 0
    for (let i = 0; i <= RATE_LIMIT && status !== 429; i++) status = (await server.call('GET', '/api/v1/guide', { key: null })).status
    expect(status).toBe(429)
    const statuses = new Set<number>()
    for (let i = 0; i < 30; i++) statuses.add((await raw('/zz/api/v1/projects', { headers: owner() })).status)
    statuses.add((await raw('/api/v1/projects', { headers: owner() })).status)
    // 404: `/zz/api/…` is no endpoint; 429: `/api/…` is limited
    expect([...statuses].sort()).toEqual([404, 429])
  })

  it('answers /mcp with the caller’s own address, whatever x-arbor-mcp-client-ip it sends', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
    }
    const headers = { ...owner(), accept: 'application/json, text/event-stream', 'x-arbor-mcp-client-ip': '203.0.113.9' }
    const shifted = await raw('/zz/mcp', { method: 'POST', headers, body: init })
    expect({ status: shifted.status, body: shifted.body }).toEqual({ status: 404, body: unknown('/zz/mcp', 'POST') })
    for (const target of ['/mcp', '/mcp/']) {
      const direct = await raw(target, { method: 'POST', headers, body: init })
      expect({ target, status: direct.status, error: direct.body?.error }).toEqual({ target, status: 429, error: 'rate_limited' })
    }
  })

  it('keeps the admin lock-out for a short Host', async () => {
    const wrong = { authorization: 'Bearer wrong-token' }
    const statuses: number[] = []
    for (let i = 0; i < 11; i++) statuses.push((await server.call('GET', '/admin/v1/users', { key: null, headers: wrong })).status)
    expect(statuses).toEqual([...Array(10).fill(401), 429])
    const right = { authorization: `Bearer ${ADMIN_TOKEN}` }
    const shifted = await raw('/zz/admin/v1/users', { headers: right })
    expect({ status: shifted.status, body: shifted.body }).toEqual({ status: 404, body: unknown('/zz/admin/v1/users') })
    expect((await raw('/admin/v1/users', { headers: right })).status).toBe(429)
  })
})
