import { afterAll, describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN, startApp } from './helpers'

// api.md POST /feedback, its error rows and the feedback limits
const app = await startApp()
afterAll(() => app.close())

const send = (body: unknown, opts: { key?: string | null; headers?: Record<string, string> } = {}) =>
  app.call('POST', '/api/v1/feedback', { body, ...opts })
const stored = async (id: string) =>
  (await app.db.query('select kind, summary, details, context, agent_id, project_id from feedback where id = $1', [id]))[0]
const THANKS = 'Thanks: the item is stored as written. It is not added to your plan.'

describe('POST /feedback', () => {
  it('stores the item as written and answers {success, id, createdAt, _meta}', async () => {
    const body = {
      kind: 'friction',
      summary: 'Search misses synonyms',
      details: 'Looked for "invoice", got nothing for "bill".',
      context: { query: 'bill', results: 0 },
    }
    const res = await send(body)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, id: expect.any(String), createdAt: expect.any(String), _meta: { _tip: THANKS } })
    expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt)
    expect(await stored(res.body.id)).toEqual({ ...body, agent_id: null, project_id: null })
  })

  it.each(['feature_request', 'friction', 'bug', 'note'])('accepts kind %s', async (kind) => {
    expect((await send({ kind, summary: 'x' })).status).toBe(200)
  })

  it('records the reporting agent from X-Agent-Id', async () => {
    const res = await send({ kind: 'bug', summary: 'Crash' }, { headers: { 'x-agent-id': 'claude-code/1.2' } })
    expect((await stored(res.body.id)).agent_id).toBe('claude-code/1.2')
  })

  it('records a projectId the key can reach', async () => {
    const id = await app.project()
    const res = await send({ kind: 'note', summary: 'About this plan', projectId: id })
    expect(res.body._meta).toEqual({ _tip: THANKS })
    expect((await stored(res.body.id)).project_id).toBe(id)
  })

  it('drops a projectId the key cannot reach, stores the item, and says so in the tip', async () => {
    const stranger = await app.user()
    const theirs = await app.project(undefined, stranger.key)
    for (const projectId of [theirs, 'no-such-project']) {
      const res = await send({ kind: 'note', summary: 'Elsewhere', projectId })
      expect(res.status).toBe(200)
      expect(res.body._meta).toEqual({
        _tip: `projectId ${projectId} was dropped: this key cannot reach that project. The item itself is stored.`,
      })
      expect((await stored(res.body.id)).project_id).toBeNull()
    }
  })

  it('drops a projectId of a member project the key may not use (its owner is not on team)', async () => {
    const owner = await app.user({ tier: 'builder' })
    const member = await app.user({ tier: 'builder' })
    const id = await app.project(undefined, owner.key)
    await app.call('POST', '/api/v1/members', { key: owner.key, body: { projectId: id, userId: member.id } })
    const res = await send({ kind: 'note', summary: 'Shared', projectId: id }, { key: member.key })
    expect(res.status).toBe(200)
    expect((await stored(res.body.id)).project_id).toBeNull()
  })

  it('accepts the limits exactly: summary 200, details 5000, context 4 KB', async () => {
    const context = { pad: 'x'.repeat(4096 - JSON.stringify({ pad: '' }).length) }
    expect(new TextEncoder().encode(JSON.stringify(context)).length).toBe(4096)
    const res = await send({ kind: 'note', summary: 's'.repeat(200), details: 'd'.repeat(5000), context })
    expect(res.status).toBe(200)
  })

  it('answers on the unversioned path too', async () => {
    expect((await app.call('POST', '/api/feedback', { body: { kind: 'note', summary: 'legacy' } })).status).toBe(200)
  })
})

describe('POST /feedback validation', () => {
  const ok = { kind: 'note', summary: 'fine' }
  const overContext = { pad: 'x'.repeat(4097 - JSON.stringify({ pad: '' }).length) }
  const KIND = { error: 'invalid_kind', message: 'kind must be one of: feature_request, friction, bug, note' }
  const SUMMARY = { error: 'invalid_summary', message: 'summary must be a string of 1 to 200 characters' }
  const DETAILS = { error: 'invalid_details', message: 'details must be a string of at most 5000 characters' }
  const CONTEXT_TYPE = { error: 'invalid_context', message: 'context must be a JSON object' }
  const CONTEXT_SIZE = { error: 'invalid_context', message: 'context must be at most 4 KB of JSON' }
  const PROJECT = { error: 'invalid_projectId', message: 'projectId must be a string' }
  it.each([
    ['kind is missing', { summary: 'x' }, KIND],
    ['kind is unknown', { ...ok, kind: 'praise' }, KIND],
    ['kind is not a string', { ...ok, kind: 3 }, KIND],
    ['summary is missing', { kind: 'note' }, SUMMARY],
    ['summary is empty', { ...ok, summary: '' }, SUMMARY],
    ['summary is blank', { ...ok, summary: '   ' }, SUMMARY],
    ['summary is over 200 characters', { ...ok, summary: 's'.repeat(201) }, SUMMARY],
    ['summary is not a string', { ...ok, summary: ['x'] }, SUMMARY],
    ['details are over 5000 characters', { ...ok, details: 'd'.repeat(5001) }, DETAILS],
    ['details are not a string', { ...ok, details: { a: 1 } }, DETAILS],
    ['context is an array', { ...ok, context: [1, 2] }, CONTEXT_TYPE],
    ['context is a string', { ...ok, context: '{"a":1}' }, CONTEXT_TYPE],
    ['context is over 4 KB', { ...ok, context: overContext }, CONTEXT_SIZE],
    ['projectId is not a string', { ...ok, projectId: 42 }, PROJECT],
  ])('answers 400 when %s', async (_rule, body, expected) => {
    const res = await send(body)
    expect(res.status).toBe(400)
    expect(res.body).toEqual(expected)
  })

  it.each([
    ['no key', null],
    ['an invalid key', `arb_${'z'.repeat(43)}`],
  ])('answers 401 Unauthorized with %s', async (_name, key) => {
    const res = await send({ kind: 'note', summary: 'x' }, { key })
    expect(res.status).toBe(401)
    expect(res.body).toEqual({
      error: 'Unauthorized',
      message: 'Missing or invalid API key',
      _meta: { guide: 'http://arbor.test/api/v1/guide' },
    })
  })
})

describe('feedback rate limit', () => {
  it('takes 20 items per account in 24 hours, then answers 429 rate_limited to every key of that account', async () => {
    const u = await app.user({ tier: 'builder' })
    for (let i = 0; i < 20; i++) expect((await send({ kind: 'note', summary: `item ${i}` }, { key: u.key })).status).toBe(200)
    const over = await send({ kind: 'note', summary: 'one too many' }, { key: u.key })
    expect(over.status).toBe(429)
    expect(over.body).toEqual({ error: 'rate_limited', message: 'At most 20 feedback items per account in 24 hours' })

    const minted = await app.call('POST', `/admin/v1/users/${u.id}/api-keys`, { key: ADMIN_TOKEN, body: {} })
    expect((await send({ kind: 'note', summary: 'other key' }, { key: minted.body.apiKey })).status).toBe(429)
    // another account is not affected
    expect((await send({ kind: 'note', summary: 'owner' })).status).toBe(200)

    // a day later the window has moved on
    const realNow = app.deps.now
    app.deps.now = () => new Date(Date.now() + 24 * 3600_000 + 60_000)
    try {
      expect((await send({ kind: 'note', summary: 'next day' }, { key: u.key })).status).toBe(200)
    } finally {
      app.deps.now = realNow
    }
  })

  it('does not count rejected items', async () => {
    const u = await app.user()
    for (let i = 0; i < 25; i++) await send({ kind: 'bad' }, { key: u.key })
    expect((await send({ kind: 'note', summary: 'first real one' }, { key: u.key })).status).toBe(200)
  })
})
