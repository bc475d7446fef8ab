import { afterAll, beforeEach, describe, expect, it } from 'bun:test'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { outboxOf, save } from '../src/events/outbox'
import { deliverDue, fanOut } from '../src/webhooks/delivery'
import { claimDue } from '../src/webhooks/queries'
import { startApp, type TestApp } from './helpers'
import { startReceiver, until } from './receiver'

/**
 * The first run of `run` that fans something out. On PostgreSQL the fan-out takes an event only
 * once no transaction older than it is open anywhere on the server (its xid horizon,
 * sql/webhooks/fan-out.sql), and another test file's, run beside this one on the same server, can
 * hold it back a moment; a run before that makes nothing.
 */
async function firstMade<T>(run: () => Promise<T>, made: (r: T) => boolean, what: string): Promise<T> {
  let last!: T
  await until(async () => made((last = await run())), what, 30_000)
  return last
}

// api.md Events (delivery semantics 1-7, headers, payloads) and self-hosting.md (X-Arbor-* headers,
// signature key), against a real receiver on 127.0.0.1 (WEBHOOK_ALLOW_INSECURE, as in development).
const INSECURE = { WEBHOOK_ALLOW_INSECURE: 'true' }
const app = await startApp(INSECURE, { loops: true })
const rx = startReceiver()
afterAll(async () => {
  await app.close()
  rx.close()
})

const MIN = 60_000
/** A frozen clock the test moves; the delivery code reads only deps.now. */
function clockOf(a: TestApp) {
  let t = Date.now()
  a.deps.now = () => new Date(t)
  return { advance: (ms: number) => (t += ms), now: () => new Date(t) }
}
let clock = clockOf(app)
// each test starts at the wall clock, so Standard Webhooks' 5-minute replay window accepts its timestamps
beforeEach(() => {
  clock = clockOf(app)
})

const mutate = (a: TestApp, body: unknown) => a.call('POST', '/api/v1/mutate', { body })
const addGoal = async (a: TestApp, projectId: string, label: string) => {
  const res = await mutate(a, { action: 'add', projectId, node: { type: 'goal', data: { label } } })
  expect(res.status).toBe(200)
  return res.body.node
}
async function register(a: TestApp, projectId: string, path: string, events?: string[]) {
  const res = await a.call('POST', '/api/v1/webhooks', { body: { projectId, url: rx.url(path), events } })
  expect(res.status).toBe(201)
  return res.body.webhook as { id: string; secret: string }
}
const deliveries = async (a: TestApp, projectId: string, id: string) =>
  (await a.call('GET', `/api/v1/webhooks/deliveries?projectId=${projectId}&id=${id}`)).body.deliveries
/**
 * Wait until the newest delivery of a webhook has had attempt `n` recorded. The clock is frozen
 * between moves, so attempt n is recorded once lastAttemptAt reads the current clock.
 */
const settled = (a: TestApp, projectId: string, id: string, n: number, at = a.deps.now()) =>
  until(
    async () => {
      const [d] = await deliveries(a, projectId, id)
      return d && d.attempts === n && d.lastAttemptAt === at.toISOString() ? d : null
    },
    `attempt ${n}`,
    15_000,
  )

const arborSig = (secret: string, body: string) => `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')}`
const sameSig = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

describe('delivery', () => {
  it('delivers node.added at once, signed both ways, with the api.md payload and X-Arbor headers', async () => {
    const p = await app.project()
    const hook = await register(app, p, '/first')
    const node = await addGoal(app, p, 'Ship: "v1" #now')
    const [req] = await until(() => (rx.on('/first').length ? rx.on('/first') : null), 'the first attempt')
    expect(req!.json).toEqual({
      event: 'node.added',
      project_id: p,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      node: { id: node.id, rev: expect.any(String), type: 'goal', parentId: null, data: { label: 'Ship: "v1" #now' } },
      // history.md, 4: who made the write
      actor: { userId: expect.stringMatching(/^usr_/), userName: 'owner', via: 'api' },
    })
    expect(Object.keys(req!.json)).toEqual(['event', 'project_id', 'timestamp', 'node', 'actor'])
    const h = req!.headers
    expect(h['content-type']).toBe('application/json')
    expect(h['x-arbor-event']).toBe('node.added')
    expect(h['x-arbor-delivery']).toMatch(/^msg_[0-9a-f]{32}$/)
    expect(h['webhook-id']).toBe(h['x-arbor-delivery']!)
    // X-Arbor-Signature: HMAC-SHA256 of the raw body keyed with the secret string (self-hosting.md)
    expect(sameSig(h['x-arbor-signature']!, arborSig(hook.secret, req!.body))).toBe(true)
    // Standard Webhooks: the library verifies id.timestamp.body and the timestamp window
    expect(new StandardWebhook(hook.secret).verify(req!.body, h)).toEqual(req!.json)
    expect(() => new StandardWebhook(hook.secret).verify(req!.body.replace('v1', 'v2'), h)).toThrow()

    const d = await settled(app, p, hook.id, 1)
    expect(d).toEqual({
      id: h['x-arbor-delivery'],
      event: 'node.added',
      status: 'delivered',
      attempts: 1,
      lastStatus: 200,
      lastError: null,
      lastAttemptAt: expect.any(String),
      nextAttemptAt: null,
      createdAt: expect.any(String),
    })
    const list = await app.call('GET', `/api/v1/webhooks?projectId=${p}`)
    expect(list.body.webhooks[0]).toMatchObject({ id: hook.id, lastStatus: 200, lastDeliveryAt: d.lastAttemptAt, lastError: null })
  })

  it('carries node.updated, node.deleted and iteration payloads exactly as Events says', async () => {
    const p = await app.project()
    await register(app, p, '/all')
    const g = await addGoal(app, p, 'Grow')
    await mutate(app, { action: 'update', projectId: p, nodeId: g.id, data: { description: 'more users' } })
    await mutate(app, { action: 'addIteration', projectId: p, iteration: { name: 'Sprint 1' } })
    await mutate(app, { action: 'updateIteration', projectId: p, iterationName: 'Sprint 1', data: { name: 'Sprint 2' } })
    await mutate(app, { action: 'updateIteration', projectId: p, iterationName: 'Sprint 2', data: { status: 'done' } })
    await mutate(app, { action: 'deleteIteration', projectId: p, iterationName: 'Sprint 2' })
    await mutate(app, { action: 'delete', projectId: p, nodeId: g.id })
    const got = await until(() => (rx.on('/all').length >= 7 ? rx.on('/all') : null), 'seven events')
    const base = { project_id: p, timestamp: clock.now().toISOString() }
    // deliveries run side by side, so the order of arrival is not the order of commit
    const canonical = (list: unknown[]) => list.map((x) => JSON.stringify(x)).sort()
    for (const r of got) expect(r.json.actor).toEqual({ userId: expect.stringMatching(/^usr_/), userName: 'owner', via: 'api' })
    // every node carries its rev after the event (live.md, 1); compared below without it
    for (const r of got) if (r.json.node) expect(r.json.node.rev).toEqual(expect.any(String))
    const byEvent = got.map(({ json: { actor, ...payload } }) => {
      if (!payload.node) return payload
      const { rev, ...node } = payload.node
      return { ...payload, node }
    })
    expect(canonical(byEvent)).toEqual(
      canonical([
        { event: 'node.added', ...base, node: { id: g.id, type: 'goal', parentId: null, data: { label: 'Grow' } } },
        {
          event: 'node.updated',
          ...base,
          node: { id: g.id, type: 'goal', parentId: null, data: { label: 'Grow', description: 'more users' } },
        },
        { event: 'iteration.added', ...base, iteration: { name: 'Sprint 1', status: 'active' } },
        // a rename carries the new name and previous_name; status only when it changed
        { event: 'iteration.updated', ...base, iteration: { name: 'Sprint 2', previous_name: 'Sprint 1' } },
        { event: 'iteration.updated', ...base, iteration: { name: 'Sprint 2', status: 'done' } },
        { event: 'iteration.deleted', ...base, iteration: { name: 'Sprint 2', status: 'done' } },
        {
          event: 'node.deleted',
          ...base,
          node: { id: g.id, type: 'goal', parentId: null, data: { label: 'Grow', description: 'more users' } },
        },
      ]),
    )
    expect(new Set(got.map((r) => r.headers['x-arbor-delivery'])).size).toBe(7)
    expect(got.map((r) => r.headers['x-arbor-event']).sort()).toEqual(byEvent.map((e) => e.event).sort())
  })

  it('sends only the events a webhook subscribed to', async () => {
    const p = await app.project()
    const hook = await register(app, p, '/deleted-only', ['node.deleted'])
    const g = await addGoal(app, p, 'Temp')
    await mutate(app, { action: 'delete', projectId: p, nodeId: g.id })
    await until(() => rx.on('/deleted-only').length === 1, 'the delete')
    expect(rx.on('/deleted-only').map((r) => r.json.event)).toEqual(['node.deleted'])
    expect((await deliveries(app, p, hook.id)).map((d: any) => d.event)).toEqual(['node.deleted'])
  })
})

describe('fan-out: deliveries are made after the commit, not inside the write', () => {
  it('a write adds only its event; the loop turns it into one delivery per subscribed webhook', async () => {
    const quiet = await startApp(INSECURE) // no loops: nothing runs behind the test's back
    try {
      const p = await quiet.project()
      const hooks = [await register(quiet, p, '/fan-1'), await register(quiet, p, '/fan-2')]
      await addGoal(quiet, p, 'Fanned out later')
      for (const h of hooks) expect(await deliveries(quiet, p, h.id)).toEqual([])
      expect(
        await firstMade(
          () => deliverDue(quiet.deps),
          (n) => n > 0,
          'the first fan-out',
        ),
      ).toBe(2)
      for (const h of hooks)
        expect((await deliveries(quiet, p, h.id)).map((d: any) => [d.event, d.status])).toEqual([['node.added', 'delivered']])
      expect(await deliverDue(quiet.deps)).toBe(0) // fanned out once: a second run makes nothing new
    } finally {
      await quiet.close()
    }
  })

  it('a webhook gets the events of writes after its registration, not those before', async () => {
    const quiet = await startApp(INSECURE)
    try {
      const p = await quiet.project()
      const early = await register(quiet, p, '/fan-early')
      await addGoal(quiet, p, 'Before the second webhook')
      const late = await register(quiet, p, '/fan-late')
      await addGoal(quiet, p, 'After both')
      let made = 0 // three deliveries: early's two, late's one (held back a moment on PostgreSQL: firstMade)
      await until(async () => (made += await deliverDue(quiet.deps)) >= 3, 'the three deliveries', 30_000)
      // sent side by side in one round: either may arrive first
      const labels = rx.on('/fan-early').map((r) => r.json.node.data.label)
      expect(labels.sort()).toEqual(['After both', 'Before the second webhook'])
      expect(rx.on('/fan-late').map((r) => r.json.node.data.label)).toEqual(['After both'])
      expect(await deliveries(quiet, p, late.id)).toHaveLength(1)
      expect(await deliveries(quiet, p, early.id)).toHaveLength(2)
    } finally {
      await quiet.close()
    }
  })

  it('the fan-out claims the first deliveries it makes (a first attempt needs no claim); the rest wait for one', async () => {
    const quiet = await startApp(INSECURE)
    try {
      const p = await quiet.project()
      const hooks = [await register(quiet, p, '/claim-1'), await register(quiet, p, '/claim-2'), await register(quiet, p, '/claim-3')]
      await addGoal(quiet, p, 'Claimed as it is fanned out')
      const now = quiet.deps.now()
      const fresh = await firstMade(
        () => fanOut(quiet.deps, 2, now),
        (f) => f.claimed.length > 0,
        'the first fan-out',
      )
      expect(fresh.backlog).toBe(true)
      expect(fresh.claimed.map((d) => [d.webhook_id, d.attempts, d.event])).toEqual(
        hooks
          .map((h) => h.id)
          .sort()
          .slice(0, 2)
          .map((id) => [id, 1, 'node.added']),
      )
      expect(JSON.parse(fresh.claimed[0]!.payload).node.data.label).toBe('Claimed as it is fanned out')
      // leased: only the third is due for a claim, and a second fan-out makes and claims nothing
      const rest = await claimDue(quiet.db, now, new Date(now.getTime() + MIN), 10)
      expect(rest.map((d) => [d.webhook_id, d.attempts])).toEqual([[hooks.map((h) => h.id).sort()[2]!, 1]])
      expect(await fanOut(quiet.deps, 10, now)).toEqual({ claimed: [], backlog: false, held: false })
      // a lease that lapses (the process died mid-attempt) hands the delivery to the next claim
      clock.advance(2 * MIN)
      quiet.deps.now = app.deps.now
      expect(await deliverDue(quiet.deps)).toBe(3)
      for (const h of hooks) expect((await deliveries(quiet, p, h.id)).map((d: any) => [d.status, d.attempts])).toEqual([['delivered', 2]])
    } finally {
      await quiet.close()
    }
  })

  it.skipIf(!process.env.TEST_DATABASE_URL)('an event committed after a later one was fanned out is still delivered', async () => {
    const quiet = await startApp(INSECURE)
    try {
      const p = await quiet.project()
      await register(quiet, p, '/fan-late-commit')
      let release!: () => void
      let written!: () => void
      const gate = new Promise<void>((r) => (release = r))
      const wrote = new Promise<void>((r) => (written = r))
      // a slow writer: its event gets the lower seq and transaction id, and commits last
      const slow = quiet.db.tx(async (tx) => {
        await save({ ...quiet.deps, db: tx }, outboxOf(p, [{ type: 'iteration.added', iteration: { name: 'Slow', status: 'active' } }]))
        written()
        await gate
      })
      await wrote
      await addGoal(quiet, p, 'Fast')
      expect(await deliverDue(quiet.deps)).toBe(0) // the slow transaction holds the fan-out back
      release()
      await slow
      expect(
        await firstMade(
          () => deliverDue(quiet.deps),
          (n) => n > 0,
          'the fan-out after the slow commit',
        ),
      ).toBe(2)
      // both sent in one round, side by side: either may arrive first
      const events = rx.on('/fan-late-commit').map((r) => r.json.event)
      expect(events.sort()).toEqual(['iteration.added', 'node.added'])
    } finally {
      await quiet.close()
    }
  })
})

describe('retries', () => {
  it('retries a non-2xx answer about 2 minutes later, with the same delivery id, and keeps lastStatus', async () => {
    const p = await app.project()
    const hook = await register(app, p, '/flaky')
    rx.plan('/flaky', 500)
    await addGoal(app, p, 'Retry me')
    const first = await settled(app, p, hook.id, 1)
    expect(first).toMatchObject({ status: 'pending', lastStatus: 500, lastError: 'HTTP 500' })
    expect(Date.parse(first.nextAttemptAt) - Date.parse(first.lastAttemptAt)).toBe(2 * MIN)
    expect((await app.call('GET', `/api/v1/webhooks?projectId=${p}`)).body.webhooks[0]).toMatchObject({
      lastStatus: 500,
      lastError: 'HTTP 500',
    })

    clock.advance(MIN) // not due yet
    expect(await deliverDue(app.deps)).toBe(0)
    clock.advance(MIN)
    await deliverDue(app.deps)
    const second = await settled(app, p, hook.id, 2)
    expect(second).toMatchObject({ status: 'delivered', lastStatus: 200, lastError: null, nextAttemptAt: null })
    const [a, b] = rx.on('/flaky')
    expect(b!.headers['x-arbor-delivery']).toBe(a!.headers['x-arbor-delivery']!)
    expect(b!.body).toBe(a!.body)
    expect((await app.call('GET', `/api/v1/webhooks?projectId=${p}`)).body.webhooks[0]).toMatchObject({ lastStatus: 200, lastError: null })
  })

  it('waits 2, 4, 8, 16 and 32 minutes between attempts and marks the delivery failed after the 6th', async () => {
    const p = await app.project()
    const hook = await register(app, p, '/down')
    rx.plan('/down', 503, 503, 503, 503, 503, 503, 503)
    await addGoal(app, p, 'Never lands')
    let d = await settled(app, p, hook.id, 1)
    const waits: number[] = []
    for (let n = 2; n <= 6; n++) {
      waits.push(Date.parse(d.nextAttemptAt) - Date.parse(d.lastAttemptAt))
      clock.advance(Date.parse(d.nextAttemptAt) - clock.now().getTime())
      await deliverDue(app.deps)
      d = await settled(app, p, hook.id, n)
    }
    expect(waits).toEqual([2, 4, 8, 16, 32].map((m) => m * MIN))
    expect(d).toMatchObject({ status: 'failed', attempts: 6, lastStatus: 503, nextAttemptAt: null })
    clock.advance(24 * 60 * MIN)
    expect(await deliverDue(app.deps)).toBe(0)
    expect(rx.on('/down')).toHaveLength(6)
    expect(new Set(rx.on('/down').map((r) => r.headers['x-arbor-delivery'])).size).toBe(1)
  })

  it('counts no answer within 5 seconds as a failed attempt and retries it', async () => {
    const p = await app.project()
    const hook = await register(app, p, '/hangs')
    rx.plan('/hangs', 'hang')
    await addGoal(app, p, 'Slow receiver')
    const first = await settled(app, p, hook.id, 1)
    expect(first).toMatchObject({ status: 'pending', lastStatus: null, lastError: 'no answer within 5 s' })
    expect((await app.call('GET', `/api/v1/webhooks?projectId=${p}`)).body.webhooks[0]).toMatchObject({
      lastStatus: null,
      lastError: 'no answer within 5 s',
    })
    clock.advance(2 * MIN)
    await deliverDue(app.deps)
    expect(await settled(app, p, hook.id, 2)).toMatchObject({ status: 'delivered', lastStatus: 200 })
  }, 30_000)

  it('a hanging receiver holds up no other delivery', async () => {
    const slow = await app.project()
    const fast = await app.project()
    const stuck = await register(app, slow, '/stuck')
    await register(app, fast, '/quick')
    rx.plan('/stuck', 'hang')
    await addGoal(app, slow, 'Stuck')
    await until(() => rx.on('/stuck').length === 1, 'the hanging attempt')
    await addGoal(app, fast, 'Quick')
    await until(() => rx.on('/quick').length === 1, 'the other delivery')
    // the stuck attempt is still waiting for its answer
    expect((await deliveries(app, slow, stuck.id))[0]).toMatchObject({ attempts: 1, lastAttemptAt: null })
  })

  it('does not follow redirects: a 302 is a failed attempt', async () => {
    const p = await app.project()
    const hook = await register(app, p, '/moved')
    rx.plan('/moved', 302)
    await addGoal(app, p, 'Redirected')
    expect(await settled(app, p, hook.id, 1)).toMatchObject({
      status: 'pending',
      lastStatus: 302,
      lastError: 'HTTP 302 (redirects are not followed)',
    })
    expect(rx.on('/elsewhere')).toHaveLength(0)
  })

  it('signs a pending retry with the secret rotated in the meantime; the old secret no longer verifies', async () => {
    const p = await app.project()
    const hook = await register(app, p, '/rotate')
    rx.plan('/rotate', 500)
    await addGoal(app, p, 'Rotate mid-retry')
    await settled(app, p, hook.id, 1)
    const rotated = await app.call('PATCH', '/api/v1/webhooks', { body: { projectId: p, id: hook.id, rotateSecret: true } })
    const secret = rotated.body.webhook.secret as string
    expect(secret).not.toBe(hook.secret)
    clock.advance(2 * MIN)
    await deliverDue(app.deps)
    await settled(app, p, hook.id, 2)
    const [before, retry] = rx.on('/rotate')
    expect(sameSig(before!.headers['x-arbor-signature']!, arborSig(hook.secret, before!.body))).toBe(true)
    expect(sameSig(retry!.headers['x-arbor-signature']!, arborSig(secret, retry!.body))).toBe(true)
    expect(sameSig(retry!.headers['x-arbor-signature']!, arborSig(hook.secret, retry!.body))).toBe(false)
    expect(new StandardWebhook(secret).verify(retry!.body, retry!.headers)).toEqual(retry!.json)
    expect(() => new StandardWebhook(hook.secret).verify(retry!.body, retry!.headers)).toThrow()
  })

  it('keeps the secret when url or events change in place', async () => {
    const p = await app.project()
    const hook = await register(app, p, '/old-path')
    const moved = await app.call('PATCH', '/api/v1/webhooks', { body: { projectId: p, id: hook.id, url: rx.url('/new-path') } })
    expect(moved.body.webhook).not.toHaveProperty('secret')
    await addGoal(app, p, 'After the move')
    const [req] = await until(() => (rx.on('/new-path').length ? rx.on('/new-path') : null), 'delivery to the new url')
    expect(sameSig(req!.headers['x-arbor-signature']!, arborSig(hook.secret, req!.body))).toBe(true)
    expect(rx.on('/old-path')).toHaveLength(0)
  })

  it('drops pending deliveries when the webhook is deleted', async () => {
    const p = await app.project()
    const hook = await register(app, p, '/gone')
    rx.plan('/gone', 500)
    await addGoal(app, p, 'Orphaned retry')
    await settled(app, p, hook.id, 1)
    expect((await app.call('DELETE', `/api/v1/webhooks?projectId=${p}&id=${hook.id}`)).status).toBe(200)
    clock.advance(2 * MIN)
    await deliverDue(app.deps)
    expect(rx.on('/gone')).toHaveLength(1)
  })
})

describe('the scheduler', () => {
  it('retries on its own every SCHEDULER_INTERVAL_MS, with delays times WEBHOOK_BACKOFF_SCALE', async () => {
    // 2 and 4 minutes become 120 and 240 ms; the loop runs every second
    const fast = await startApp({ ...INSECURE, WEBHOOK_BACKOFF_SCALE: '0.001', SCHEDULER_INTERVAL_MS: '1000' }, { loops: true })
    try {
      const p = await fast.project()
      const hook = await register(fast, p, '/scheduled')
      rx.plan('/scheduled', 500, 502)
      await addGoal(fast, p, 'Retried by the loop')
      const d = await until(
        async () => {
          const [row] = await deliveries(fast, p, hook.id)
          return row?.status === 'delivered' ? row : null
        },
        'the loop to deliver',
        15_000,
      )
      expect(d).toMatchObject({ attempts: 3, lastStatus: 200 })
      expect(rx.on('/scheduled').map((r) => r.headers['x-arbor-delivery'])).toEqual(Array(3).fill(d.id))
    } finally {
      await fast.close()
    }
  }, 30_000)
})

describe('durability', () => {
  it('attempts a delivery committed just before a crash as soon as the server is back', async () => {
    // no loops: the process "dies" after the commit, before any attempt
    const before = await startApp(INSECURE, { persist: true })
    const p = await before.project()
    const hook = await register(before, p, '/after-crash')
    await addGoal(before, p, 'Committed, never attempted')
    await before.close()
    expect(rx.on('/after-crash')).toHaveLength(0)

    const after = await startApp(INSECURE, { reopen: before, loops: true })
    try {
      const [req] = await until(() => (rx.on('/after-crash').length ? rx.on('/after-crash') : null), 'the delivery after restart')
      expect(req!.json).toMatchObject({ event: 'node.added', project_id: p, node: { data: { label: 'Committed, never attempted' } } })
      expect(sameSig(req!.headers['x-arbor-signature']!, arborSig(hook.secret, req!.body))).toBe(true)
    } finally {
      await after.close()
    }
  })

  it('keeps a pending retry across a restart and sends it with the same delivery id', async () => {
    const before = await startApp(INSECURE, { persist: true, loops: true })
    const c1 = clockOf(before)
    const p = await before.project()
    const hook = await register(before, p, '/restart-retry')
    rx.plan('/restart-retry', 500)
    await addGoal(before, p, 'Survives a restart')
    await settled(before, p, hook.id, 1)
    await before.close()

    const after = await startApp(INSECURE, { reopen: before, loops: true })
    try {
      const c2 = clockOf(after)
      c2.advance(c1.now().getTime() - c2.now().getTime() + 2 * MIN)
      await deliverDue(after.deps)
      expect(await settled(after, p, hook.id, 2)).toMatchObject({ status: 'delivered', attempts: 2, lastStatus: 200 })
      const [first, retry] = rx.on('/restart-retry')
      expect(retry!.headers['x-arbor-delivery']).toBe(first!.headers['x-arbor-delivery']!)
      expect(rx.on('/restart-retry')).toHaveLength(2)
    } finally {
      await after.close()
    }
  })

  it.skipIf(!process.env.TEST_DATABASE_URL)('never delivers the same attempt twice from two replicas on one PostgreSQL', async () => {
    const one = await startApp(INSECURE, { persist: true })
    const two = await startApp(INSECURE, { reopen: one })
    try {
      const p = await one.project()
      await register(one, p, '/replicas')
      rx.slow('/replicas', 20) // rounds stay in flight while the other claimers go on
      const mutations = Array.from({ length: 1000 }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `Goal ${i}` } } }))
      expect((await mutate(two, { action: 'batch', projectId: p, mutations })).status).toBe(200)
      // both replicas claim the same 1,000 due deliveries at the same moment, twice each
      const counts = await Promise.all([deliverDue(one.deps), deliverDue(two.deps), deliverDue(one.deps), deliverDue(two.deps)])
      expect(counts.reduce((a, b) => a + b, 0)).toBe(1000)
      expect(counts.filter((n) => n > 0).length).toBeGreaterThan(1)
      const ids = rx.on('/replicas').map((r) => r.headers['x-arbor-delivery'])
      expect(ids).toHaveLength(1000)
      expect(new Set(ids).size).toBe(1000)
    } finally {
      await one.close()
      await two.close()
    }
  })
})
