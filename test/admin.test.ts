import { afterAll, describe, expect, it } from 'bun:test'
import { bootstrapOwner } from '../src/accounts/service'
import { ADMIN_TOKEN, startApp } from './helpers'

// self-hosting.md: users, tiers and the admin API; first start
const app = await startApp()
const disabled = await startApp({ ADMIN_TOKEN: '' })
afterAll(async () => {
  await app.close()
  await disabled.close()
})

const admin = (method: string, path: string, body?: unknown) => app.call(method, `/admin/v1${path}`, { key: ADMIN_TOKEN, body })
const USER_FIELDS = ['contributor', 'id', 'lapsed', 'name', 'status', 'tier']
const KEY_FORMAT = /^arb_[0-9A-Za-z]{32,}$/

describe('admin API without ADMIN_TOKEN', () => {
  it.each([
    ['GET', '/admin/v1/users', undefined],
    ['POST', '/admin/v1/users', { name: 'eve' }],
    ['POST', '/admin/v1/users', { bogus: true }],
    ['PATCH', '/admin/v1/users/usr_x', { tier: 'team' }],
    ['POST', '/admin/v1/users/usr_x/api-keys', {}],
    ['DELETE', '/admin/v1/api-keys/key_x', undefined],
    ['GET', '/admin/v1/elsewhere', undefined],
  ])('answers 404 to %s %s, whatever the token', async (method, path, body) => {
    for (const key of [null, ADMIN_TOKEN, disabled.ownerKey]) {
      const res = await disabled.call(method, path, { key, body })
      expect(res.status).toBe(404)
      expect(res.body.error).toBe('unknown_endpoint')
    }
  })
})

describe('admin API authentication', () => {
  it.each([
    ['no token', null],
    ['a wrong token', 'not-the-token'],
    ['an API key', 'API_KEY'],
  ])('answers 401 with %s', async (_name, key) => {
    const res = await app.call('GET', '/admin/v1/users', { key: key === 'API_KEY' ? app.ownerKey : key })
    expect(res.status).toBe(401)
    expect(res.body).toMatchObject({ error: 'unauthorized', message: 'Missing or invalid admin token' })
  })

  it('checks the token before the body', async () => {
    expect((await app.call('POST', '/admin/v1/users', { key: 'wrong', body: { bogus: 1 } })).status).toBe(401)
  })
})

describe('POST /admin/v1/users', () => {
  it('creates a team, active user by default and returns its first API key once', async () => {
    const res = await admin('POST', '/users', { name: '  Ada  ' })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      user: { id: expect.stringMatching(/^usr_/), name: 'Ada', tier: 'team', status: 'active', lapsed: false, contributor: false },
      apiKey: expect.stringMatching(KEY_FORMAT),
    })
    const status = await app.call('GET', '/api/v1/tier-status', { key: res.body.apiKey })
    expect(status.body).toMatchObject({ tier: 'team', status: 'active' })
  })

  it('takes tier, status and contributor', async () => {
    const res = await admin('POST', '/users', { name: 'Guest', tier: 'builder', status: 'trialing', contributor: true })
    expect(res.body.user).toMatchObject({ name: 'Guest', tier: 'builder', status: 'trialing', contributor: true })
  })

  it.each([
    ['name is missing', {}],
    ['name is blank', { name: '   ' }],
    ['tier is unknown', { name: 'x', tier: 'gold' }],
    ['status is unknown', { name: 'x', status: 'sleeping' }],
    ['contributor is not a boolean', { name: 'x', contributor: 'yes' }],
  ])('answers 400 when %s', async (_rule, body) => {
    const res = await admin('POST', '/users', body)
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ success: false, errors: [expect.any(String)] })
  })
})

describe('PATCH /admin/v1/users/:id', () => {
  it('changes plan, status, lapsed, contributor and name, effective on the next request', async () => {
    const u = await app.user({ tier: 'builder' })
    const res = await admin('PATCH', `/users/${u.id}`, { name: 'Renamed', tier: 'strategist', status: 'past_due' })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      user: { id: u.id, name: 'Renamed', tier: 'strategist', status: 'past_due', lapsed: false, contributor: false },
    })
    expect((await app.call('GET', '/api/v1/projects', { key: u.key })).status).toBe(403)

    const back = await admin('PATCH', `/users/${u.id}`, { tier: 'team', lapsed: true, contributor: false })
    expect(back.body.user).toEqual({ id: u.id, name: 'Renamed', tier: 'team', status: 'past_due', lapsed: true, contributor: false })
    expect((await app.call('GET', '/api/v1/tier-status', { key: u.key })).body.tier).toBe('free')
  })

  it('sets and clears the credit limit', async () => {
    const u = await app.user()
    await admin('PATCH', `/users/${u.id}`, { creditsLimit: 50 })
    expect((await app.call('GET', '/api/v1/tier-status', { key: u.key })).body.credits).toEqual({ used: 0, limit: 50, remaining: 50 })
    await admin('PATCH', `/users/${u.id}`, { creditsLimit: null })
    expect((await app.call('GET', '/api/v1/tier-status', { key: u.key })).body.credits).toEqual({ used: 0, limit: null, remaining: null })
  })

  it('answers 404 for an unknown user and 400 for a bad value', async () => {
    expect(await admin('PATCH', '/users/usr_nobody', { tier: 'team' })).toMatchObject({
      status: 404,
      body: { error: 'user_not_found', message: 'User usr_nobody not found' },
    })
    const u = await app.user()
    expect((await admin('PATCH', `/users/${u.id}`, { tier: 'platinum' })).status).toBe(400)
    expect((await admin('PATCH', `/users/${u.id}`, { creditsLimit: -1 })).status).toBe(400)
  })
})

describe('API keys through the admin API', () => {
  it('mints another key (201 {apiKey, keyId}) that works at once', async () => {
    const u = await app.user({ tier: 'builder' })
    const res = await admin('POST', `/users/${u.id}/api-keys`, { label: 'laptop' })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({ apiKey: expect.stringMatching(KEY_FORMAT), keyId: expect.stringMatching(/^key_/) })
    expect((await app.call('GET', '/api/v1/tier-status', { key: res.body.apiKey })).status).toBe(200)
  })

  it('mints without a body too', async () => {
    const u = await app.user()
    expect((await admin('POST', `/users/${u.id}/api-keys`)).status).toBe(201)
  })

  it('answers 404 when minting for an unknown user', async () => {
    expect(await admin('POST', '/users/usr_nobody/api-keys', {})).toMatchObject({ status: 404, body: { error: 'user_not_found' } })
  })

  it('revokes a key: {success:true}, and the key is refused on the very next request', async () => {
    const u = await app.user()
    const minted = await admin('POST', `/users/${u.id}/api-keys`, {})
    expect(await admin('DELETE', `/api-keys/${minted.body.keyId}`)).toMatchObject({ status: 200, body: { success: true } })
    expect((await app.call('GET', '/api/v1/tier-status', { key: minted.body.apiKey })).status).toBe(401)
  })

  it('answers 404 when revoking an unknown key', async () => {
    expect(await admin('DELETE', '/api-keys/key_nothing')).toMatchObject({
      status: 404,
      body: { error: 'key_not_found', message: 'API key key_nothing not found' },
    })
  })
})

describe('GET /admin/v1/users', () => {
  it('lists every user, oldest first, and never shows key material', async () => {
    const u = await app.user({ name: 'Listed' })
    const minted = await admin('POST', `/users/${u.id}/api-keys`, {})
    const res = await admin('GET', '/users')
    expect(res.status).toBe(200)
    expect(res.body.users[0]).toMatchObject({ name: 'owner', tier: 'team', status: 'active' })
    expect(res.body.users.find((x: any) => x.id === u.id)).toEqual({
      id: u.id,
      name: 'Listed',
      tier: 'team',
      status: 'active',
      lapsed: false,
      contributor: false,
    })
    for (const user of res.body.users) expect(Object.keys(user).sort()).toEqual(USER_FIELDS)
    const text = JSON.stringify(res.body)
    for (const secret of [app.ownerKey, u.key, minted.body.apiKey]) expect(text).not.toContain(secret)
    expect(text).not.toContain('arb_')
  })
})

describe('first start', () => {
  it('created one owner on the team tier whose key works, and never creates another', async () => {
    const users = (await admin('GET', '/users')).body.users.filter((x: any) => x.name === 'owner')
    expect(users).toHaveLength(1)
    expect(users[0]).toMatchObject({ tier: 'team', status: 'active', contributor: false, lapsed: false })
    expect((await app.call('GET', '/api/v1/tier-status')).body.tier).toBe('team')
    expect(await bootstrapOwner(app.db)).toBeNull()
  })
})
