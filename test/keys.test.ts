import { afterAll, describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN, startApp } from './helpers'

// agents-and-app.md §5, Own API keys
const app = await startApp()
afterAll(() => app.close())

const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
const KEY = /^arb_[0-9A-Za-z]{43}$/
const UNAUTHORIZED = { error: 'unauthorized', message: 'Missing or invalid API key', _meta: { guide: 'http://arbor.test/api/v1/guide' } }

describe('own API keys', () => {
  it('lists the caller’s live keys with prefix, dates and the current one, never key material', async () => {
    const u = await app.user({ tier: 'builder' })
    const first = (await app.call('GET', '/api/v1/keys', { key: u.key })).body.keys[0]
    const minted = await app.call('POST', '/api/v1/keys', { key: u.key, body: { label: 'laptop' } })
    // (bun's toMatchObject writes its asymmetric matchers into the received object: plain checks here)
    expect(minted.status).toBe(201)
    expect(Object.keys(minted.body).sort()).toEqual(['apiKey', 'keyId'])
    expect(minted.body.apiKey).toMatch(KEY)
    expect(minted.body.keyId).toMatch(/^key_/)
    const res = await app.call('GET', '/api/v1/keys', { key: minted.body.apiKey })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      keys: [
        {
          keyId: first.keyId,
          label: null,
          prefix: u.key.slice(0, 8),
          createdAt: ISO,
          lastUsedAt: ISO,
          current: false,
          scope: { role: 'write' },
        },
        {
          keyId: minted.body.keyId,
          label: 'laptop',
          prefix: minted.body.apiKey.slice(0, 8),
          createdAt: ISO,
          lastUsedAt: ISO,
          current: true,
          scope: { role: 'write' },
        },
      ],
    })
    expect(JSON.stringify(res.body)).not.toContain(minted.body.apiKey.slice(8))
    expect(JSON.stringify(res.body)).not.toContain(u.key.slice(8))
  })

  it('records lastUsedAt on use, at most once a minute per key', async () => {
    const u = await app.user({ tier: 'builder' })
    const minted = (await app.call('POST', '/api/v1/keys', { key: u.key, body: {} })).body
    const listed = async () => (await app.call('GET', '/api/v1/keys', { key: u.key })).body.keys.find((k: any) => k.keyId === minted.keyId)
    expect(await listed()).toMatchObject({ lastUsedAt: null, label: null })
    expect((await app.call('GET', '/api/v1/projects', { key: minted.apiKey })).status).toBe(200)
    const used = (await listed()).lastUsedAt
    expect(used).toEqual(ISO)
    // pushed back in the database: a use within the process's minute writes nothing
    await app.db.query(`update api_keys set last_used_at = '2020-01-01T00:00:00Z' where id = $1`, [minted.keyId])
    expect((await app.call('GET', '/api/v1/projects', { key: minted.apiKey })).status).toBe(200)
    expect((await listed()).lastUsedAt).toBe('2020-01-01T00:00:00.000Z')
  })

  it('a free, strategist or contributor key manages its own keys too', async () => {
    for (const opts of [{ tier: 'free' }, { tier: 'strategist' }, { tier: 'team', contributor: true }, { tier: 'team', lapsed: true }]) {
      const u = await app.user(opts)
      const minted = await app.call('POST', '/api/v1/keys', { key: u.key })
      expect({ opts, status: minted.status }).toEqual({ opts, status: 201 })
      expect((await app.call('GET', '/api/v1/keys', { key: u.key })).body.keys).toHaveLength(2)
      const del = await app.call('DELETE', `/api/v1/keys?keyId=${minted.body.keyId}`, { key: u.key })
      expect({ opts, del: del.body }).toEqual({ opts, del: { success: true } })
    }
  })

  it('a revoked key stops working at once, even just after it was used', async () => {
    const u = await app.user({ tier: 'team' })
    const minted = (await app.call('POST', '/api/v1/keys', { key: u.key, body: { label: 'ci' } })).body
    expect((await app.call('GET', '/api/v1/projects', { key: minted.apiKey })).status).toBe(200)
    expect(await app.call('DELETE', `/api/v1/keys?keyId=${minted.keyId}`, { key: u.key })).toMatchObject({
      status: 200,
      body: { success: true },
    })
    expect(await app.call('GET', '/api/v1/projects', { key: minted.apiKey })).toMatchObject({ status: 401, body: UNAUTHORIZED })
    expect((await app.call('GET', '/api/v1/keys', { key: u.key })).body.keys.map((k: any) => k.keyId)).not.toContain(minted.keyId)
  })

  it('a key may revoke itself when another is left', async () => {
    const u = await app.user({ tier: 'team' })
    const minted = (await app.call('POST', '/api/v1/keys', { key: u.key })).body
    expect((await app.call('DELETE', `/api/v1/keys?keyId=${minted.keyId}`, { key: minted.apiKey })).body).toEqual({ success: true })
    expect((await app.call('GET', '/api/v1/keys', { key: minted.apiKey })).status).toBe(401)
  })

  it('refuses to revoke the only key: 409 last_key', async () => {
    const u = await app.user({ tier: 'team' })
    const [only] = (await app.call('GET', '/api/v1/keys', { key: u.key })).body.keys
    const res = await app.call('DELETE', `/api/v1/keys?keyId=${only.keyId}`, { key: u.key })
    expect(res).toMatchObject({ status: 409 })
    expect(res.body).toEqual({
      error: 'last_key',
      message: 'This is your only API key; revoking it would lock you out',
      _meta: { _tip: 'Mint a new key first (POST /api/v1/keys), then revoke this one.' },
    })
    expect((await app.call('GET', '/api/v1/keys', { key: u.key })).status).toBe(200)
  })

  it('another user’s key id, an unknown one or a revoked one: 404, and the key keeps working', async () => {
    const a = await app.user({ tier: 'team' })
    const b = await app.user({ tier: 'team' })
    const bKey = (await app.call('POST', '/api/v1/keys', { key: b.key })).body
    for (const keyId of [bKey.keyId, 'key_nope']) {
      const res = await app.call('DELETE', `/api/v1/keys?keyId=${keyId}`, { key: a.key })
      expect(res).toMatchObject({ status: 404 })
      expect(res.body).toEqual({ error: 'key_not_found', message: `API key ${keyId} not found` })
    }
    expect((await app.call('GET', '/api/v1/projects', { key: bKey.apiKey })).status).toBe(200)
    await app.call('DELETE', `/api/v1/keys?keyId=${bKey.keyId}`, { key: b.key })
    expect((await app.call('DELETE', `/api/v1/keys?keyId=${bKey.keyId}`, { key: b.key })).status).toBe(404)
  })

  it('a key minted by the admin API shows in the list with its prefix', async () => {
    const u = await app.user({ tier: 'team' })
    const minted = (await app.call('POST', `/admin/v1/users/${u.id}/api-keys`, { key: ADMIN_TOKEN, body: { label: 'ops' } })).body
    const keys = (await app.call('GET', '/api/v1/keys', { key: u.key })).body.keys
    expect(keys.find((k: any) => k.keyId === minted.keyId)).toMatchObject({
      label: 'ops',
      prefix: minted.apiKey.slice(0, 8),
      current: false,
    })
  })

  it.each([
    ['an empty label', { label: '' }],
    ['a label over 100 characters', { label: 'x'.repeat(101) }],
    ['a label that is not a string', { label: 5 }],
  ])('refuses %s with 400', async (_name, body) => {
    const u = await app.user({ tier: 'team' })
    const res = await app.call('POST', '/api/v1/keys', { key: u.key, body })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ success: false, errors: [expect.stringContaining('label')] })
    expect((await app.call('GET', '/api/v1/keys', { key: u.key })).body.keys).toHaveLength(1)
  })

  it('DELETE without keyId is a 400', async () => {
    const res = await app.call('DELETE', '/api/v1/keys')
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ success: false, errors: [expect.stringContaining('keyId')] })
  })

  it.each([
    ['GET', '/api/v1/keys'],
    ['POST', '/api/v1/keys'],
    ['DELETE', '/api/v1/keys?keyId=key_x'],
  ])('%s %s without a key: 401', async (method, path) => {
    expect(await app.call(method, path, { key: null, body: method === 'POST' ? {} : undefined })).toMatchObject({
      status: 401,
      body: UNAUTHORIZED,
    })
  })

  it('caps live keys at 20 (409 key_limit); a revoked key frees a place', async () => {
    const u = await app.user({ tier: 'team' })
    const ids: string[] = []
    for (let i = 0; i < 19; i++) ids.push((await app.call('POST', '/api/v1/keys', { key: u.key })).body.keyId)
    const over = await app.call('POST', '/api/v1/keys', { key: u.key })
    expect(over.status).toBe(409)
    expect(over.body).toEqual({
      error: 'key_limit',
      message: 'At most 20 live API keys per user',
      _meta: { _tip: 'Revoke a key you no longer use (DELETE /api/v1/keys?keyId=), then mint a new one.' },
    })
    await app.call('DELETE', `/api/v1/keys?keyId=${ids[0]}`, { key: u.key })
    expect((await app.call('POST', '/api/v1/keys', { key: u.key })).status).toBe(201)
  })
})

describe('own API keys under concurrency', () => {
  it('21 concurrent mints from one key: exactly 20 live keys, the rest 409 key_limit', async () => {
    const u = await app.user({ tier: 'team' })
    const answers = await Promise.all(Array.from({ length: 21 }, () => app.call('POST', '/api/v1/keys', { key: u.key })))
    const statuses = answers.map((r) => r.status).sort()
    expect(statuses).toEqual([...Array(19).fill(201), ...Array(2).fill(409)])
    expect((await app.call('GET', '/api/v1/keys', { key: u.key })).body.keys).toHaveLength(20)
  })

  it('concurrent revokes of the last two keys: one succeeds, one 409 last_key, one key left working', async () => {
    for (let round = 0; round < 5; round++) {
      const u = await app.user({ tier: 'team' })
      const other = (await app.call('POST', '/api/v1/keys', { key: u.key })).body
      // the user's first key: the one that is not `other` (two keys made in one millisecond list in either order)
      const firstId = (await app.call('GET', '/api/v1/keys', { key: u.key })).body.keys
        .map((k: any) => k.keyId)
        .find((id: string) => id !== other.keyId)
      const answers = await Promise.all([
        app.call('DELETE', `/api/v1/keys?keyId=${firstId}`, { key: u.key }),
        app.call('DELETE', `/api/v1/keys?keyId=${other.keyId}`, { key: u.key }),
      ])
      // never both: one revoke succeeds; the other is refused as the last key (409), or, when it
      // reached the server after the first had revoked the very key it was sent with, as that
      // key's 401 (a revoked key authenticates nothing, whatever it was asked to do)
      const statuses = answers.map((r) => r.status).sort()
      expect([
        [200, 401],
        [200, 409],
      ]).toContainEqual(statuses)
      const refused = answers.find((r) => r.status !== 200)!
      if (refused.status === 409) expect(refused.body.error).toBe('last_key')
      else expect(answers[0]!.status).toBe(200) // the 401 is the request sent with the key the other revoked
      const alive = [u.key, other.apiKey]
      const working = await Promise.all(alive.map(async (key) => (await app.call('GET', '/api/v1/keys', { key })).status))
      expect(working.sort()).toEqual([200, 401])
    }
  })
})
