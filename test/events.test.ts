import { afterAll, describe, expect, it } from 'bun:test'
import { eventRetentionLoop } from '../src/events/loop'
import { outboxOf, save } from '../src/events/outbox'
import { deliverDue } from '../src/webhooks/delivery'
import { startApp } from './helpers'
import { startReceiver, until } from './receiver'

// The pull feed GET /api/v1/events (additive): the webhook payloads of api.md Events, oldest
// first after a cursor, kept at least 7 days.
const app = await startApp({ WEBHOOK_ALLOW_INSECURE: 'true' })
const rx = startReceiver()
afterAll(async () => {
  await app.close()
  rx.close()
})

const DAY = 86_400_000
const mutate = (body: unknown) => app.call('POST', '/api/v1/mutate', { body })
const feed = (projectId: string, query = '', key?: string) => app.call('GET', `/api/v1/events?projectId=${projectId}${query}`, { key })
const addGoal = (projectId: string, label: string) => mutate({ action: 'add', projectId, node: { type: 'goal', data: { label } } })
/**
 * The feed shows an event once every transaction older than its own has finished. On a shared
 * PostgreSQL server other sessions' transactions count too, so wait for the count to arrive.
 */
const settledFeed = (projectId: string, n: number, query = '') =>
  until(async () => {
    const res = await feed(projectId, query)
    return res.body.events?.length >= n ? res : null
  }, `${n} events in the feed`)

describe('GET /events', () => {
  it('returns the webhook payloads oldest first, with a cursor', async () => {
    const p = await app.project()
    await addGoal(p, 'First')
    await mutate({ action: 'update', projectId: p, nodeId: 'goal-1', data: { goalStatus: 'focus' } })
    await mutate({ action: 'addIteration', projectId: p, iteration: { name: 'S1' } })
    const res = await settledFeed(p, 3)
    expect(res.status).toBe(200)
    const ts = expect.stringMatching(/Z$/)
    // history.md, 4: every event names who made the write
    const actor = { userId: expect.stringMatching(/^usr_/), userName: 'owner', via: 'api' }
    expect(res.body).toEqual({
      events: [
        {
          event: 'node.added',
          project_id: p,
          timestamp: ts,
          node: { id: 'goal-1', rev: expect.any(String), type: 'goal', parentId: null, data: { label: 'First' } },
          actor,
        },
        {
          event: 'node.updated',
          project_id: p,
          timestamp: ts,
          node: { id: 'goal-1', rev: expect.any(String), type: 'goal', parentId: null, data: { label: 'First', goalStatus: 'focus' } },
          actor,
        },
        { event: 'iteration.added', project_id: p, timestamp: ts, iteration: { name: 'S1', status: 'active' }, actor },
      ],
      nextCursor: expect.any(String),
      hasMore: false,
      _meta: { _tip: 'Up to date. Poll again later with after=nextCursor; events are kept for 7 days.' },
    })
    const again = await feed(p, `&after=${res.body.nextCursor}`)
    expect(again.body).toMatchObject({ events: [], nextCursor: res.body.nextCursor, hasMore: false })
  })

  it('pages with limit and after, never repeating or skipping an event', async () => {
    const p = await app.project()
    for (let i = 1; i <= 5; i++) await addGoal(p, `Goal ${i}`)
    await settledFeed(p, 5)
    const seen: string[] = []
    let cursor = ''
    const pages: number[] = []
    for (;;) {
      const res = await feed(p, `&limit=2${cursor ? `&after=${cursor}` : ''}`)
      pages.push(res.body.events.length)
      seen.push(...res.body.events.map((e: any) => e.node.data.label))
      cursor = res.body.nextCursor
      if (!res.body.hasMore) break
    }
    expect(pages).toEqual([2, 2, 1])
    expect(seen).toEqual(['Goal 1', 'Goal 2', 'Goal 3', 'Goal 4', 'Goal 5'])
  })

  it('shows only the project asked for', async () => {
    const a = await app.project()
    const b = await app.project()
    await addGoal(a, 'In A')
    await addGoal(b, 'In B')
    await settledFeed(b, 1)
    expect((await settledFeed(a, 1)).body.events.map((e: any) => e.node.data.label)).toEqual(['In A'])
  })

  it('serves byte for byte the bodies a webhook receives', async () => {
    const p = await app.project()
    await app.call('POST', '/api/v1/webhooks', { body: { projectId: p, url: rx.url('/same') } })
    await addGoal(p, 'Same "bytes": ✓')
    await mutate({ action: 'delete', projectId: p, nodeId: 'goal-1' })
    // the receiver has both deliveries once it has read both bodies (they may arrive after deliverDue
    // returns); on PostgreSQL a delivery waits until every older write transaction of the cluster
    // has ended (sql/webhooks/fan-out.sql), another test file's too, so the due ones are sent again
    // until both are in
    await until(
      async () => {
        if (rx.on('/same').length >= 2) return true
        await deliverDue(app.deps)
        await Bun.sleep(50)
        return rx.on('/same').length >= 2
      },
      'both deliveries at the receiver',
      60_000,
    )
    const pushed = rx
      .on('/same')
      .map((r) => r.body)
      .sort()
    const pulled = (await settledFeed(p, 2)).body.events.map((e: unknown) => JSON.stringify(e)).sort()
    expect(pulled).toEqual(pushed)
    expect(pulled).toHaveLength(2)
  })

  it.skipIf(!process.env.TEST_DATABASE_URL)('holds back a newer event until an older transaction still running has committed', async () => {
    const p = await app.project()
    let release!: () => void
    let written!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const wrote = new Promise<void>((r) => (written = r))
    // a slow writer: its event gets the lower seq and transaction id, and commits last
    const slow = app.db.tx(async (tx) => {
      await save({ ...app.deps, db: tx }, outboxOf(p, [{ type: 'iteration.added', iteration: { name: 'Slow', status: 'active' } }]))
      written()
      await gate
    })
    await wrote
    await addGoal(p, 'Fast')
    const during = await feed(p)
    expect(during.body.events).toEqual([])
    release()
    await slow
    const after = await settledFeed(p, 2, during.body.nextCursor ? `&after=${during.body.nextCursor}` : '')
    expect(after.body.events.map((e: any) => e.event)).toEqual(['iteration.added', 'node.added'])
  })

  it('rejects a malformed cursor or limit', async () => {
    const p = await app.project()
    expect((await feed(p, '&after=xyz')).body).toEqual({
      success: false,
      errors: ['after must be a nextCursor returned by this endpoint'],
      _meta: { _tip: 'Omit after to start from the oldest event kept (7 days).' },
    })
    expect((await feed(p, '&limit=0')).body).toEqual({ success: false, errors: ['limit must be an integer from 1 to 500'] })
    expect((await feed(p, '&limit=501')).status).toBe(400)
  })

  it('refuses a project the key cannot access with 403 project_access_denied', async () => {
    const p = await app.project()
    const stranger = await app.user()
    const res = await feed(p, '', stranger.key)
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ error: 'project_access_denied', message: 'API key does not have access to this project' })
  })
})

describe('documentation', () => {
  it('is described in the guide and the OpenAPI document', async () => {
    const guide = (await app.call('GET', '/api/v1/guide', { key: null })).body
    expect(guide.endpoints).toContainEqual(expect.objectContaining({ method: 'GET', path: '/api/v1/events' }))
    expect(guide.events.pull.request).toBe('GET /api/v1/events?projectId&after=<nextCursor>&limit=<1-500, default 100>&wait=<0-60 seconds>')
    const openapi = (await app.call('GET', '/openapi.json', { key: null })).body
    expect(openapi.paths['/api/v1/events'].get.parameters.map((x: any) => x.name)).toEqual(['projectId', 'after', 'limit', 'wait'])
  })
})

describe('GET /events?wait', () => {
  it('holds an empty page until a write of the project commits, then answers with it', async () => {
    const p = await app.project()
    const cursor = (await feed(p)).body.nextCursor ?? ''
    const held = feed(p, `&after=${cursor}&wait=30`)
    // the request is waiting once it holds a waiter
    for (const end = Date.now() + 10_000; app.deps.waiters.size() === 0 && Date.now() < end; ) await Bun.sleep(5)
    const started = performance.now()
    await addGoal(p, 'Wakes the feed')
    const res = await held
    expect(performance.now() - started).toBeLessThan(5000)
    expect(res.body.events.map((e: any) => [e.event, e.node.data.label])).toEqual([['node.added', 'Wakes the feed']])
  })

  it('answers at once when events are waiting, and refuses a wait outside 0 to 60', async () => {
    const p = await app.project()
    await addGoal(p, 'Already there')
    await settledFeed(p, 1)
    const started = performance.now()
    expect((await feed(p, '&wait=60')).body.events.length).toBe(1)
    expect(performance.now() - started).toBeLessThan(5000)
    for (const wait of ['61', '-1', '1.5', 'abc'])
      expect((await feed(p, `&wait=${wait}`)).body).toEqual({ success: false, errors: ['wait must be an integer from 0 to 60 (seconds)'] })
  })
})

describe('retention', () => {
  it('keeps events 7 days, then drops them, except those a pending delivery still needs', async () => {
    const kept = await app.project()
    const pending = await app.project()
    await addGoal(kept, 'Old news')
    // a receiver that is never attempted here: its delivery stays pending
    await app.call('POST', '/api/v1/webhooks', { body: { projectId: pending, url: 'http://127.0.0.1:9/never' } })
    await addGoal(pending, 'Still owed')
    await settledFeed(kept, 1)
    await settledFeed(pending, 1)
    const now = Date.now()
    await eventRetentionLoop.tick(app.deps, new Date(now + 6 * DAY))
    expect((await feed(kept)).body.events).toHaveLength(1)
    await eventRetentionLoop.tick(app.deps, new Date(now + 7 * DAY + 60_000))
    expect((await feed(kept)).body.events).toHaveLength(0)
    expect((await feed(pending)).body.events).toHaveLength(1)
  })
})
