import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type ServerProcess, startServer } from './process'
import { rawRequest } from './raw-http'

// The fast lane through the real server process (src/http/fast-lane.ts): a repeated read is
// answered before routing with its request line logged like any other, and a request it must
// not take (a Host that is no host name, headers over the limit) still gets the full path's answer.
const projectId = 'fast-plan'
let server: ServerProcess
const owner = () => ({ authorization: `Bearer ${server.ownerKey}` })

beforeAll(async () => {
  server = await startServer()
  expect(
    (await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Fast plan', id: projectId } } })).status,
  ).toBe(200)
  const batch = await server.call('POST', '/api/v1/mutate', {
    body: { action: 'add', projectId, node: { type: 'task', data: { label: 'Answer before routing' } } },
  })
  expect(batch.status).toBe(200)
  // the classifier loop writes the task's kind a moment later: a change of the project, after
  // which the answer read first would rightly differ from the next one
  await server.until(
    async () => ((await server.call('GET', nodes)).body.nodes?.[0]?.data?.kind ? true : undefined),
    30_000,
    'the task classified',
  )
}, 60_000)
afterAll(() => server.close())

const nodes = `/api/v1/nodes?projectId=${projectId}`

describe('the fast lane, through the real process', () => {
  it('logs each answer it gives, with its request id, path and status', async () => {
    const first = await server.call('GET', nodes, { headers: { 'x-request-id': 'fast-read-1' } })
    const ids = ['fast-read-2', 'fast-read-3', 'fast-health-1']
    const second = await server.call('GET', nodes, { headers: { 'x-request-id': ids[0]! } })
    const third = await server.call('GET', nodes, { headers: { 'x-request-id': ids[1]! } })
    const health = await server.call('GET', '/healthz', { headers: { 'x-request-id': ids[2]! } })
    expect([second, third, health].map((r) => [r.status, r.headers.get('x-request-id')])).toEqual([
      [200, ids[0]],
      [200, ids[1]],
      [200, ids[2]],
    ])
    expect(second.body).toEqual(first.body)
    expect(third.headers.get('cache-control')).toBe('no-store')
    const lines = await server.until(
      async () => {
        const found = server
          .output()
          .split('\n')
          .filter((l) => ids.some((id) => l.includes(`"${id}"`)))
          .map((l) => JSON.parse(l))
        return found.length === 3 ? found : undefined
      },
      10_000,
      'three request lines',
    )
    expect(lines.map((l) => ({ requestId: l.requestId, method: l.method, path: l.path, status: l.status }))).toEqual([
      { requestId: ids[0], method: 'GET', path: '/api/v1/nodes', status: 200 },
      { requestId: ids[1], method: 'GET', path: '/api/v1/nodes', status: 200 },
      { requestId: ids[2], method: 'GET', path: '/healthz', status: 200 },
    ])
  })

  it('leaves to the full path a read it must refuse: a Host that is no host name, headers over 32 KiB', async () => {
    await server.call('GET', nodes)
    await server.call('GET', nodes) // in the fast lane's index now
    for (const host of ['a/b', 'a?b', '']) {
      const res = await rawRequest(server.url, { target: nodes, host, headers: owner() })
      expect({ host, status: res.status, body: res.body }).toEqual({
        host,
        status: 400,
        body: { success: false, errors: ['The Host header is not a valid host name'] },
      })
    }
    const big = await rawRequest(server.url, { target: nodes, host: 'x', headers: { ...owner(), 'x-padding': 'b'.repeat(40_000) } })
    expect({ status: big.status, error: big.body?.error }).toEqual({ status: 431, error: 'headers_too_large' })
    const short = await rawRequest(server.url, { target: nodes, host: 'x', headers: owner() })
    expect({ status: short.status, label: short.body.nodes[0].data.label }).toEqual({ status: 200, label: 'Answer before routing' })
  })
})
