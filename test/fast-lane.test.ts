import { afterAll, describe, expect, it } from 'bun:test'
import { startApp, type TestApp } from './helpers'

// The fast lane (src/http/fast-lane.ts, src/reads/fast-reads.ts): a GET whose answer is known is
// answered before routing, with exactly what the full path would send, and only after the same
// checks of the caller; anything else goes the full way.
const app = await startApp()
const limited = await startApp({ RATE_LIMIT_PER_MINUTE: '6' })
afterAll(async () => {
  await app.close()
  await limited.close()
})

const mutate = async (body: Record<string, unknown>, key?: string) => {
  const res = await app.call('POST', '/api/v1/mutate', { body, key })
  if (res.status !== 200) throw new Error(`${body.action}: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}

async function seed(on: TestApp = app): Promise<string> {
  const p = await on.project()
  const res = await on.call('POST', '/api/v1/mutate', {
    body: {
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'addIteration', iteration: { name: 'S1' } },
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Grow revenue' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Churn is high' } } },
        { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Exit survey' } } },
        { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'Write the survey', iteration: 'S1' } } },
      ],
    },
  })
  expect(res.status).toBe(200)
  return p
}

/** Status, headers (the request id aside) and body text of one GET. */
async function read(path: string, key: string | null = app.ownerKey, on: TestApp = app, headers: Record<string, string> = {}) {
  const res = await on.handle(
    new Request(`http://arbor.test${path}`, { headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers } }),
    '10.0.0.1',
  )
  const all = Object.fromEntries([...res.headers].filter(([name]) => name !== 'x-request-id'))
  return { status: res.status, headers: all, body: await res.text(), requestId: res.headers.get('x-request-id') }
}

const fastCount = (on: TestApp = app) => on.deps.reads.stats.fast

describe('the fast lane', () => {
  it('answers a repeated project read with the status, headers and bytes of the full path', async () => {
    const p = await seed()
    for (const path of [
      `/api/v1/nodes?projectId=${p}`,
      `/api/v1/nodes?projectId=${p}&type=job`,
      `/api/v1/tree?projectId=${p}&nodeId=goal-1&direction=down`,
      `/api/v1/tree?projectId=${p}&nodeId=job-1&direction=context`,
      `/api/v1/tree?projectId=${p}&format=outline`,
      `/api/v1/outline?projectId=${p}`,
      `/api/v1/iterations?projectId=${p}`,
      `/api/v1/outline?projectId=${p}&nodeId=${encodeURIComponent('goal-1')}&budget=%32000`, // percent-encoding kept as sent
    ]) {
      const full = await read(path)
      const before = fastCount()
      const fast = await read(path)
      expect({ path, fastAnswers: fastCount() - before, ...fast, requestId: undefined }).toEqual({
        path,
        fastAnswers: 1,
        ...full,
        requestId: undefined,
      })
      expect(fast.status).toBe(200)
    }
  })

  it('never answers a query the full path refused (a NUL sent as %00), however often it is sent', async () => {
    const p = await seed()
    await read(`/api/v1/nodes?projectId=${p}`)
    for (let i = 0; i < 2; i++) {
      const res = await read(`/api/v1/nodes?projectId=${p}&type=job%00`)
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
        status: 400,
        body: {
          success: false,
          errors: ['Query parameter type must not contain NUL characters (\\u0000)'],
          _meta: { guide: 'http://arbor.test/api/v1/guide' },
        },
      })
    }
  })

  it('never answers a search that is not kept (its nodes are still being embedded)', async () => {
    const p = await seed()
    const path = `/api/v1/search?projectId=${p}&q=survey&mode=keyword`
    const first = await read(path)
    const before = fastCount()
    const again = await read(path)
    expect({ pending: JSON.parse(again.body)._meta.search.pendingNodes, fastAnswers: fastCount() - before, body: again.body }).toEqual({
      pending: 4,
      fastAnswers: 0,
      body: first.body,
    })
  })

  it('answers GET /healthz and GET /projects as the routes do, and echoes a sent request id', async () => {
    await seed()
    for (const path of ['/healthz', '/api/v1/projects', '/api/v1/projects?includeArchived=true']) {
      const fast = await read(path, app.ownerKey, app, { 'x-request-id': 'probe-fast-1' })
      // a HEAD is not taken by the fast lane: the router answers it from the same route
      const routed = await app.handle(
        new Request(`http://arbor.test${path}`, { method: 'HEAD', headers: { authorization: `Bearer ${app.ownerKey}` } }),
      )
      expect({ path, status: fast.status, id: fast.requestId, type: fast.headers['content-type'] }).toEqual({
        path,
        status: 200,
        id: 'probe-fast-1',
        type: routed.headers.get('content-type')!,
      })
    }
    expect(JSON.parse((await read('/healthz')).body)).toEqual({ status: 'ok' })
    const projects = JSON.parse((await read('/api/v1/projects')).body)
    expect(projects).toEqual((await app.call('GET', '/api/projects')).body) // the legacy twin goes the full way
  })

  it('shows a write in the very next read', async () => {
    const p = await seed()
    const path = `/api/v1/tree?projectId=${p}&nodeId=approach-1&direction=down`
    await read(path)
    await read(path) // now in the fast lane's index
    await mutate({ action: 'update', projectId: p, nodeId: 'job-1', data: { label: 'Send the survey' } })
    const after = JSON.parse((await read(path)).body)
    expect(after.nodes.map((n: { data: { label: string } }) => n.data.label)).toEqual(['Exit survey', 'Send the survey'])
  })

  it('checks the caller on every read: a revoked key gets 401, a stranger and a removed member 403', async () => {
    const p = await seed()
    const path = `/api/v1/nodes?projectId=${p}`
    const member = await app.user({ tier: 'team' })
    expect((await app.call('POST', '/api/v1/members', { body: { projectId: p, userId: member.id } })).status).toBe(201)
    expect((await read(path, member.key)).status).toBe(200)
    expect((await read(path, member.key)).status).toBe(200) // the fast lane's
    const full = await read(path)
    expect((await app.call('DELETE', `/api/v1/members?projectId=${p}&userId=${member.id}`)).status).toBe(200)
    const removed = await read(path, member.key)
    expect({ status: removed.status, error: JSON.parse(removed.body).error }).toEqual({ status: 403, error: 'project_access_denied' })
    const stranger = await app.user({ tier: 'team' })
    expect((await read(path, stranger.key)).status).toBe(403)
    expect((await read(path, null)).status).toBe(401)
    expect((await read(path, 'arb_not_a_key')).status).toBe(401)
    expect((await read(path)).body).toBe(full.body) // the owner still reads it
  })

  it('never answers a share view: its link decides, not the caller, and a revoked link stops at once', async () => {
    const p = await seed()
    const share = await app.call('POST', '/api/v1/share', { body: { projectId: p } })
    const path = `/api/v1/public/share/${share.body.token}`
    expect((await read(path)).status).toBe(200)
    const before = fastCount()
    expect((await read(path)).status).toBe(200) // sent with the owner's key: still the full path
    expect((await app.call('DELETE', `/api/v1/share?projectId=${p}&token=${share.body.token}`)).body.revoked).toBe(share.body.token)
    expect({ status: (await read(path)).status, fastAnswers: fastCount() - before }).toEqual({ status: 404, fastAnswers: 0 })
  })

  it('counts its answers in the rate limit', async () => {
    const p = await seed(limited)
    limited.deps.reads.stats.fast = 0
    const statuses: number[] = []
    for (let i = 0; i < 8; i++) statuses.push((await read(`/api/v1/nodes?projectId=${p}`, limited.ownerKey, limited, {})).status)
    // 6 a minute from 10.0.0.1: the first read goes the full way, the next five the fast lane
    expect({ statuses, fast: fastCount(limited) }).toEqual({ statuses: [200, 200, 200, 200, 200, 200, 429, 429], fast: 5 })
  })

  it('asks for the client address only when the rate limit or the log line uses it', async () => {
    // main.ts hands the handler a function: asking Bun for the socket's address is a system call
    let asked = 0
    const socketIp = () => {
      asked++
      return '10.0.0.9'
    }
    const askedFor = async (on: TestApp, path: string, key: string | null) => {
      asked = 0
      const before = fastCount(on)
      const res = await on.handle(
        new Request(`http://arbor.test${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} }),
        socketIp,
      )
      expect(res.status).toBe(200)
      return { asked, fast: path === '/healthz' || fastCount(on) - before === 1 }
    }
    const p = await seed()
    const nodes = `/api/v1/nodes?projectId=${p}`
    await read(nodes)
    // no rate limit, no request log (the test apps' default): never asked
    expect(await askedFor(app, '/healthz', null)).toEqual({ asked: 0, fast: true })
    expect(await askedFor(app, nodes, app.ownerKey)).toEqual({ asked: 0, fast: true })

    const counting = await startApp({ RATE_LIMIT_PER_MINUTE: '1000' })
    const logging = await startApp({ LOG_LEVEL: 'info' })
    try {
      for (const on of [counting, logging]) {
        const q = await seed(on)
        await read(`/api/v1/nodes?projectId=${q}`, on.ownerKey, on)
        // asked once for the limit and the line together
        expect(await askedFor(on, `/api/v1/nodes?projectId=${q}`, on.ownerKey)).toEqual({ asked: 1, fast: true })
      }
      // /healthz is not rate limited: asked for its log line only
      expect(await askedFor(counting, '/healthz', null)).toEqual({ asked: 0, fast: true })
      expect(await askedFor(logging, '/healthz', null)).toEqual({ asked: 1, fast: true })
    } finally {
      await counting.close()
      await logging.close()
    }
  })
})
