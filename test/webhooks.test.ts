import { afterAll, describe, expect, it } from 'bun:test'
import { startApp } from './helpers'

// api.md Webhooks (register, list, update in place, delete; rules 1-7) and the Webhook record.
// Receivers are public IP literals: registration resolves nothing and sends nothing.
const app = await startApp()
afterAll(() => app.close())

const ALL = ['node.added', 'node.updated', 'node.deleted', 'iteration.added', 'iteration.updated', 'iteration.deleted']
const RECEIVER = 'https://93.184.216.34/hooks/arbor'
const post = (body: unknown, key?: string) => app.call('POST', '/api/v1/webhooks', { body, key })
const patch = (body: unknown, key?: string) => app.call('PATCH', '/api/v1/webhooks', { body, key })
const list = (projectId: string, key?: string) => app.call('GET', `/api/v1/webhooks?projectId=${projectId}`, { key })
const del = (query: string, key?: string) => app.call('DELETE', `/api/v1/webhooks?${query}`, { key })

describe('register', () => {
  it('subscribes to all six events when events is omitted and shows a Standard Webhooks secret once', async () => {
    const p = await app.project()
    const res = await post({ projectId: p, url: RECEIVER })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      webhook: { id: expect.stringMatching(/^wh_[0-9A-Za-z]{16}$/), url: RECEIVER, events: ALL, secret: expect.any(String) },
      _meta: { _tip: expect.stringContaining('shown only once') },
    })
    const secret: string = res.body.webhook.secret
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32)
    expect((await list(p)).body).toEqual({
      webhooks: [
        {
          id: res.body.webhook.id,
          url: RECEIVER,
          events: ALL,
          lastDeliveryAt: null,
          lastStatus: null,
          lastError: null,
          createdAt: expect.any(String),
        },
      ],
    })
  })

  it('keeps a subset of events, without repeats, in the order of api.md', async () => {
    const p = await app.project()
    const res = await post({ projectId: p, url: RECEIVER, events: ['iteration.deleted', 'node.added', 'node.added'] })
    expect(res.body.webhook.events).toEqual(['node.added', 'iteration.deleted'])
  })

  it('rejects unknown events naming them and the valid ones', async () => {
    const p = await app.project()
    const res = await post({ projectId: p, url: RECEIVER, events: ['node.added', 'node.moved', 'goal.done'] })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ error: `Invalid events: node.moved, goal.done. Valid: ${ALL.join(', ')}` })
    expect((await post({ projectId: p, url: RECEIVER, events: [] })).body).toEqual({
      error: `Invalid events: the list is empty (omit events for all six). Valid: ${ALL.join(', ')}`,
    })
  })

  it('refuses a url or events of the wrong JSON type, or a blank url, by the body schema: 400, nothing registered', async () => {
    const p = await app.project()
    for (const [body, expected] of [
      [
        { url: RECEIVER, events: 'node.added' },
        { success: false, errors: ['events: Expected array'] },
      ],
      [
        { url: RECEIVER, events: null },
        { success: false, errors: ['events: Expected array'] },
      ],
      [{ url: 5 }, { success: false, errors: ["url: Expected property 'url' to be string but found: 5"] }],
      [{ url: '  ' }, { error: 'url is required', message: 'Send the https URL of your receiver.' }],
    ] as const) {
      const res = await post({ projectId: p, ...body })
      expect({ body, status: res.status, answer: res.body }).toEqual({ body, status: 400, answer: expected })
    }
    expect((await app.call('GET', `/api/v1/webhooks?projectId=${p}`)).body.webhooks).toEqual([])
  })

  it('requires https', async () => {
    const p = await app.project()
    const res = await post({ projectId: p, url: 'http://93.184.216.34/hook' })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ error: 'url must use https', message: 'the scheme is http' })
    expect((await post({ projectId: p, url: 'not a url' })).body).toEqual({
      error: 'url must use https',
      message: '"not a url" is not an absolute URL',
    })
  })

  it('requires a publicly routable host', async () => {
    const p = await app.project()
    const res = await post({ projectId: p, url: 'https://192.168.1.20/hook' })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ error: 'url must be publicly routable', message: '192.168.1.20 is a private address' })
  })

  it('allows at most 10 webhooks per project', async () => {
    const p = await app.project()
    const made = await Promise.all(Array.from({ length: 10 }, (_, i) => post({ projectId: p, url: `${RECEIVER}/${i}` })))
    expect(made.map((r) => r.status)).toEqual(Array(10).fill(201))
    const eleventh = await post({ projectId: p, url: `${RECEIVER}/10` })
    expect(eleventh.status).toBe(400)
    expect(eleventh.body).toEqual({
      error: 'Webhook limit reached: at most 10 webhooks per project',
      message: 'Delete one (DELETE /webhooks?projectId&id) or change one in place (PATCH /webhooks).',
    })
    expect((await list(p)).body.webhooks).toHaveLength(10)
  })

  it('holds the cap when registrations race for the last slots', async () => {
    const p = await app.project()
    const all = await Promise.all(Array.from({ length: 14 }, (_, i) => post({ projectId: p, url: `${RECEIVER}/${i}` })))
    expect(all.filter((r) => r.status === 201)).toHaveLength(10)
    expect((await list(p)).body.webhooks).toHaveLength(10)
  })
})

describe('update in place (PATCH)', () => {
  it('changes url and events, keeps the id, and never shows the secret', async () => {
    const p = await app.project()
    const { id } = (await post({ projectId: p, url: RECEIVER })).body.webhook
    const res = await patch({ projectId: p, id, url: 'https://93.184.216.35/v2', events: ['node.deleted'] })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      webhook: {
        id,
        url: 'https://93.184.216.35/v2',
        events: ['node.deleted'],
        lastDeliveryAt: null,
        lastStatus: null,
        lastError: null,
        createdAt: expect.any(String),
      },
      _meta: { _tip: 'Updated in place: the id and secret are unchanged.' },
    })
  })

  it('rotates the secret, showing the new one once', async () => {
    const p = await app.project()
    const { id, secret } = (await post({ projectId: p, url: RECEIVER })).body.webhook
    const res = await patch({ projectId: p, id, rotateSecret: true })
    expect(res.body.webhook).toMatchObject({ id, url: RECEIVER, events: ALL, secret: expect.stringMatching(/^whsec_/) })
    expect(res.body.webhook.secret).not.toBe(secret)
    expect((await list(p)).body.webhooks[0]).not.toHaveProperty('secret')
  })

  it('needs at least one of url, events, rotateSecret', async () => {
    const p = await app.project()
    const { id } = (await post({ projectId: p, url: RECEIVER })).body.webhook
    for (const body of [
      { projectId: p, id },
      { projectId: p, id, rotateSecret: false },
    ]) {
      const res = await patch(body)
      expect(res.status).toBe(400)
      expect(res.body).toEqual({ error: 'Nothing to update: send at least one of url, events, rotateSecret' })
    }
  })

  it('applies the url and events rules to updates too', async () => {
    const p = await app.project()
    const { id } = (await post({ projectId: p, url: RECEIVER })).body.webhook
    expect((await patch({ projectId: p, id, url: 'https://10.1.2.3/' })).body).toEqual({
      error: 'url must be publicly routable',
      message: '10.1.2.3 is a private address',
    })
    expect((await patch({ projectId: p, id, events: ['nope'] })).body).toEqual({ error: `Invalid events: nope. Valid: ${ALL.join(', ')}` })
  })

  it('answers 404 Webhook not found for an unknown id and 400 without an id', async () => {
    const p = await app.project()
    const unknown = await patch({ projectId: p, id: 'wh_nope', rotateSecret: true })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toEqual({ error: 'Webhook not found' })
    const missing = await patch({ projectId: p, rotateSecret: true })
    expect(missing.status).toBe(400)
    expect(missing.body).toEqual({ error: 'id is required' })
  })
})

describe('delete', () => {
  it('deletes by id; registering again mints a new secret', async () => {
    const p = await app.project()
    const first = (await post({ projectId: p, url: RECEIVER })).body.webhook
    const res = await del(`projectId=${p}&id=${first.id}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, deleted: first.id, _meta: { _tip: expect.any(String) } })
    expect((await list(p)).body).toEqual({ webhooks: [] })
    const again = (await post({ projectId: p, url: RECEIVER })).body.webhook
    expect(again.id).not.toBe(first.id)
    expect(again.secret).not.toBe(first.secret)
  })

  it('takes only id: any other name gives 400 id is required', async () => {
    const p = await app.project()
    const { id } = (await post({ projectId: p, url: RECEIVER })).body.webhook
    const res = await del(`projectId=${p}&webhookId=${id}`)
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ error: 'id is required' })
    expect((await list(p)).body.webhooks).toHaveLength(1)
  })

  it('answers 404 Webhook not found for an unknown id', async () => {
    const p = await app.project()
    const res = await del(`projectId=${p}&id=wh_missing`)
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ error: 'Webhook not found' })
  })
})

describe('access', () => {
  it("refuses another user's project with 403 Not your project on every call", async () => {
    const p = await app.project()
    const { id } = (await post({ projectId: p, url: RECEIVER })).body.webhook
    const stranger = await app.user()
    const calls = [
      post({ projectId: p, url: RECEIVER }, stranger.key),
      list(p, stranger.key),
      patch({ projectId: p, id, rotateSecret: true }, stranger.key),
      del(`projectId=${p}&id=${id}`, stranger.key),
      app.call('GET', `/api/v1/webhooks/deliveries?projectId=${p}&id=${id}`, { key: stranger.key }),
    ]
    for (const res of await Promise.all(calls)) {
      expect(res.status).toBe(403)
      expect(res.body).toEqual({ error: 'Not your project' })
    }
  })

  it('answers 404 for an unknown project', async () => {
    const res = await list('no-such-project')
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ error: 'Project no-such-project not found', message: 'No project has that id; GET /projects lists yours.' })
  })

  it('lets a member of a team-owned project register and list', async () => {
    const p = await app.project()
    const member = await app.user({ tier: 'builder' })
    expect((await app.call('POST', '/api/v1/members', { body: { projectId: p, userId: member.id } })).status).toBe(201)
    expect((await post({ projectId: p, url: RECEIVER }, member.key)).status).toBe(201)
    expect((await list(p, member.key)).body.webhooks).toHaveLength(1)
  })

  it('needs a key', async () => {
    const res = await app.call('GET', '/api/v1/webhooks?projectId=x', { key: null })
    expect(res.status).toBe(401)
  })

  it('answers on the legacy path with Deprecation and a Link to /api/v1', async () => {
    const p = await app.project()
    const res = await app.call('GET', `/api/webhooks?projectId=${p}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('deprecation')).toBe('true')
    expect(res.headers.get('link')).toBe('<http://arbor.test/api/v1/webhooks>; rel="successor-version"')
  })
})
