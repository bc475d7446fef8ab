import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { presenceExpiryLoop } from '../src/live/loop'
import { startApp, type TestApp } from './helpers'

// live.md, 3–4 in process: a presence holds 30 seconds unless posted again, then the presence
// loop ends it (and with it its edit intent). The clock is moved, not waited for.
describe('presence runs out', () => {
  let app: TestApp
  let goal: string
  const P = 'expiring'
  beforeAll(async () => {
    app = await startApp()
    await app.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'E', id: P } } })
    goal = (
      await app.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId: P, node: { type: 'goal', data: { label: 'G' } } } })
    ).body.node.id
  })
  afterAll(async () => {
    await app?.close()
  })

  it('keeps a presence 30 s after its last post, then lists it no more and lets other writes of its field through', async () => {
    const t0 = Date.now()
    app.deps.now = () => new Date(t0)
    const posted = await app.call('POST', '/api/v1/presence', {
      headers: { 'x-arbor-via': 'app' },
      body: { projectId: P, nodeId: goal, field: 'label' },
    })
    expect(posted.status).toBe(200)
    expect(Date.parse(posted.body.expiresAt) - t0).toBe(30_000)
    const write = () =>
      app.call('POST', '/api/v1/mutate', {
        headers: { 'x-agent-id': 'bot' },
        body: { action: 'update', projectId: P, nodeId: goal, data: { label: 'bot' } },
      })
    // 20 s later it holds; posting again keeps it, with the same `since`
    app.deps.now = () => new Date(t0 + 20_000)
    expect((await write()).status).toBe(409)
    const again = await app.call('POST', '/api/v1/presence', {
      headers: { 'x-arbor-via': 'app' },
      body: { projectId: P, nodeId: goal, field: 'label' },
    })
    expect(again.body.presence.since).toBe(posted.body.presence.since)
    expect(Date.parse(again.body.expiresAt) - t0).toBe(50_000)
    // 45 s after the start it still holds (renewed at 20 s)
    app.deps.now = () => new Date(t0 + 45_000)
    expect((await app.call('GET', `/api/v1/presence?projectId=${P}`)).body.presence).toHaveLength(1)
    expect((await write()).status).toBe(409)
    // past 50 s it is gone: not listed, not holding, and the loop deletes it
    app.deps.now = () => new Date(t0 + 50_001)
    expect((await app.call('GET', `/api/v1/presence?projectId=${P}`)).body.presence).toEqual([])
    expect((await write()).status).toBe(200)
    expect(await presenceExpiryLoop.tick(app.deps, app.deps.now())).toBe(1)
    expect(await presenceExpiryLoop.tick(app.deps, app.deps.now())).toBe(0)
    // a new post after a gap starts a new `since`
    const fresh = await app.call('POST', '/api/v1/presence', { headers: { 'x-arbor-via': 'app' }, body: { projectId: P, nodeId: goal } })
    expect(fresh.body.presence.since).toBe(new Date(t0 + 50_001).toISOString())
  })
})
