import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN } from './helpers'
import { type ServerProcess, startServer } from './process'

/**
 * The per-IP rate limit has no side door (issue 46, item 5): a request that may wait
 * (GET /events?wait, the canvas's GET /view/commands?wait) goes uncounted only when it really
 * slept in the waiter list. One answered at once, refused (401, 403) or failed (400) counts like
 * any request, so past the limit it gets 429. Each case sends from its own address
 * (TRUST_PROXY, X-Forwarded-For), so each has a fresh window of LIMIT requests.
 */
const LIMIT = 8

describe('requests that may wait but do not are counted by the rate limit', () => {
  let server: ServerProcess
  let otherKey = ''
  let stale = ''
  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT_PER_MINUTE: String(LIMIT), TRUST_PROXY: 'true' })
    const from = { 'x-forwarded-for': '10.9.9.9' }
    await server.call('POST', '/api/v1/mutate', { headers: from, body: { action: 'addProject', project: { name: 'Mine', id: 'mine' } } })
    const first = await server.call('GET', '/api/v1/view/commands?projectId=mine&wait=0', { headers: from })
    stale = first.body.revision
    // a write moves the revision: the one read above is now stale, so a poll with it answers at once
    await server.call('POST', '/api/v1/mutate', {
      headers: from,
      body: { action: 'add', projectId: 'mine', node: { type: 'task', data: { label: 'moves the revision' } } },
    })
    // the task's classification writes once more: let it land, so the held requests below sleep undisturbed
    // (each poll from an address of its own: past LIMIT polls from one, it would wait out the minute's window)
    let polls = 0
    await server.until(async () => {
      const res = await server.call('GET', '/api/v1/nodes?projectId=mine', {
        headers: { 'x-forwarded-for': `10.8.${++polls >> 8}.${polls & 255}` },
      })
      return res.body.nodes?.[0]?.data.kind
    }, 90_000)
    const other = await server.call('POST', '/admin/v1/users', {
      key: null,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...from },
      body: { name: 'other', tier: 'team' },
    })
    otherKey = other.body.apiKey
  }, 120_000) // a server start and a classification on a busy machine
  afterAll(() => server.close())

  /** LIMIT + 2 requests one after another from `ip`: their statuses. */
  async function statuses(ip: string, path: string, key?: string | null): Promise<number[]> {
    const out: number[] = []
    for (let i = 0; i < LIMIT + 2; i++) out.push((await server.call('GET', path, { key, headers: { 'x-forwarded-for': ip } })).status)
    return out
  }
  const expected = (status: number) => [...Array(LIMIT).fill(status), 429, 429]

  it('counts a canvas poll with a stale revision, answered at once', async () => {
    expect(await statuses('10.0.0.1', `/api/v1/view/commands?projectId=mine&wait=1000&revision=${stale}`)).toEqual(expected(200))
  })

  it('counts a canvas poll with a wrong key', async () => {
    expect(await statuses('10.0.0.2', '/api/v1/view/commands?projectId=mine&wait=1000', 'arb_wrong')).toEqual(expected(401))
  })

  it("counts a canvas poll on another user's project", async () => {
    expect(await statuses('10.0.0.3', '/api/v1/view/commands?projectId=mine&wait=1000', otherKey)).toEqual(expected(403))
  })

  it('counts a waiting feed read with a wrong key', async () => {
    expect(await statuses('10.0.0.4', '/api/v1/events?projectId=mine&wait=1', 'arb_wrong')).toEqual(expected(401))
  })

  it("counts a waiting feed read on another user's project", async () => {
    expect(await statuses('10.0.0.5', '/api/v1/events?projectId=mine&wait=1', otherKey)).toEqual(expected(403))
  })

  it('counts a waiting feed read with a garbage cursor', async () => {
    expect(await statuses('10.0.0.6', '/api/v1/events?projectId=mine&wait=1&after=garbage', undefined)).toEqual(expected(400))
  })

  it('still leaves uncounted the requests that slept in the waiter list', async () => {
    const head = await server.call('GET', '/api/v1/events?projectId=mine&limit=500', { headers: { 'x-forwarded-for': '10.0.0.7' } })
    const cursor = head.body.nextCursor
    const now = await server.call('GET', '/api/v1/view/commands?projectId=mine&wait=0', { headers: { 'x-forwarded-for': '10.0.0.7' } })
    // 2 counted; twice the limit of requests that wait for nothing and time out: none counted
    const held = await Promise.all(
      Array.from({ length: LIMIT * 2 }, (_, i) =>
        server.call(
          'GET',
          i % 2
            ? `/api/v1/events?projectId=mine&wait=1&after=${cursor}`
            : `/api/v1/view/commands?projectId=mine&wait=500&revision=${now.body.revision}`,
          { headers: { 'x-forwarded-for': '10.0.0.7' } },
        ),
      ),
    )
    expect(held.map((h) => h.status)).toEqual(Array(LIMIT * 2).fill(200))
    expect(await statuses('10.0.0.7', '/api/v1/nodes?projectId=mine')).toEqual([...Array(LIMIT - 2).fill(200), 429, 429, 429, 429])
  })
})
