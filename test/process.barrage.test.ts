import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import fc from 'fast-check'
import { type ServerProcess, startServer } from './process'
import { type RawRes, rawRequest } from './raw-http'

/**
 * Issue 28: a barrage of malformed requests, written byte for byte, at the real process: odd
 * methods, paths, queries, Host headers, content types and bodies. Not one 5xx, every answer under
 * /api and /admin JSON, no error logged, and the owner's key in the output only where the first
 * start prints it.
 */
let server: ServerProcess
beforeAll(async () => {
  server = await startServer()
}, 60_000)
afterAll(() => server.close())

const PATHS = [
  '/api/v1/mutate',
  '/api/mutate',
  '/api/v1/nodes',
  '/api/v1/workflow',
  '/api/v1/share',
  '/api/v1/webhooks',
  '/api/v1/feedback',
  '/api/v1/view-command',
  '/api/v1/view/report',
  '/api/v1/search',
  '/api/v1/tree',
  '/api/v1/iterations',
  '/api/v1/projects',
  '/api/v1/export-okf',
  '/api/v1/events',
  '/api/v1/tier-status',
  '/api/v1/public/share/abc',
  '/api/v1/nope',
  '/api/',
  '/admin/v1/users',
  '/mcp',
  '/s/abc',
]
const SUFFIX = fc.oneof(
  fc.string({ maxLength: 8 }).map((s) => encodeURIComponent(s)),
  fc.constantFrom('%', '%zz', '%00', '%c0%80', '/..', '//x', '?a=%ff', '?projectId=%00', '?projectId[]=a', '?projectId=a&projectId=b'),
  fc.constantFrom('?cursor=99999999999999999999999', '?limit=-1', '?limit=1e999', '?depth=abc', '?nodeId=goal-1&direction=sideways'),
)
const BODY = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    '{',
    'null',
    '{"action":"add"}',
    '{"action":"batch","projectId":"p","mutations":[{"action":"add","node":{"id":7,"type":"goal","data":{"label":"\\ud800"}}}]}',
    '{"action":"add","projectId":"p","node":{"type":"goal","data":{"label":"a\\udc00"}}}',
    '{"projectId":{"a":1}}',
    '{"projectId":["x"]}',
    '{"projectId":1e400}',
    '{"action":"start","flow":"add","projectId":"p","input":"\\ud800"}',
  ),
)
const REQUEST = fc.record({
  method: fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS', 'PROPFIND'),
  path: fc.constantFrom(...PATHS),
  suffix: SUFFIX,
  host: fc.constantFrom('x', 'ab', 'localhost', '127.0.0.1:1', '[::1]', 'a/b', ''),
  type: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', ''),
  body: fc.option(BODY),
  key: fc.boolean(),
})

describe('a barrage of malformed requests', () => {
  it('never answers 5xx, nor anything but JSON under /api and /admin, and logs no error or key', async () => {
    const bad: unknown[] = []
    let sent = 0
    await fc.assert(
      fc.asyncProperty(REQUEST, async (r) => {
        const headers: Record<string, string> = {}
        if (r.key) headers.authorization = `Bearer ${server.ownerKey}`
        if (r.type) headers['content-type'] = r.type
        const res: RawRes = await rawRequest(server.url, {
          method: r.method,
          target: r.path + r.suffix,
          host: r.host,
          headers,
          text: r.body ?? undefined,
        })
        sent++
        const json = String(res.headers['content-type']).startsWith('application/json')
        if (!(res.status >= 200 && res.status < 500) || ((r.path.startsWith('/api') || r.path.startsWith('/admin')) && !json))
          bad.push({ ...r, status: res.status, type: res.headers['content-type'], text: res.text.slice(0, 200) })
      }),
      { numRuns: 2000, seed: 28 },
    )
    expect({ sent, bad }).toEqual({ sent: 2000, bad: [] })
    const output = server.output()
    expect({ errorsLogged: output.split('"level":"error"').length - 1, keyPrinted: output.split(server.ownerKey).length - 1 }).toEqual({
      errorsLogged: 0,
      keyPrinted: 1,
    })
  }, 600_000)
})
