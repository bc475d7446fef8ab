import { afterAll, describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN, startApp } from './helpers'

// api.md Authentication 1–4 and self-hosting.md (API key format, 401 body)
const app = await startApp()
afterAll(() => app.close())

const GUIDE = 'http://arbor.test/api/v1/guide'
const UNAUTHORIZED = { error: 'unauthorized', message: 'Missing or invalid API key', _meta: { guide: GUIDE } }
const DENIED = { error: 'project_access_denied', message: 'API key does not have access to this project' }
const KEY_FORMAT = /^arb_[0-9A-Za-z]{32,}$/

describe('authentication', () => {
  it.each([
    ['GET', '/api/v1/projects', undefined],
    ['GET', '/api/v1/tier-status', undefined],
    ['GET', '/api/v1/members?projectId=x', undefined],
    ['PATCH', '/api/v1/projects', { projectId: 'x', archived: true }],
    ['POST', '/api/v1/mutate', { action: 'renameProject', projectId: 'x', name: 'y' }],
  ])('answers 401 unauthorized with the guide to %s %s without a key', async (method, path, body) => {
    const res = await app.call(method, path, { key: null, body })
    expect(res.status).toBe(401)
    expect(res.body).toEqual(UNAUTHORIZED)
    expect(res.headers.get('content-type')).toContain('application/json')
  })

  it('checks the key before the body, so a bad body without a key is still a 401', async () => {
    const res = await app.call('POST', '/api/v1/mutate', { key: null, body: { nonsense: 1 } })
    expect(res).toMatchObject({ status: 401, body: UNAUTHORIZED })
  })

  it.each([
    ['an unknown arb_ key', `Bearer arb_${'x'.repeat(43)}`],
    ['a key without the arb_ prefix', 'Bearer sk_live_abcdefghijklmnopqrstuvwxyz0123456789'],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['Bearer without a key', 'Bearer '],
    ['two tokens', `Bearer ${`arb_${'a'.repeat(40)}`} extra`],
  ])('answers 401 to %s', async (_name, authorization) => {
    const res = await app.call('GET', '/api/v1/tier-status', { key: null, headers: { authorization } })
    expect(res).toMatchObject({ status: 401, body: UNAUTHORIZED })
  })

  it('accepts the Bearer scheme in any case', async () => {
    const res = await app.call('GET', '/api/v1/tier-status', { key: null, headers: { authorization: `bearer ${app.ownerKey}` } })
    expect(res.status).toBe(200)
  })
})

describe('API keys', () => {
  it('are arb_ followed by at least 32 base62 characters, a new one per mint', async () => {
    const u = await app.user({ tier: 'builder' })
    const minted = await app.call('POST', `/admin/v1/users/${u.id}/api-keys`, { key: ADMIN_TOKEN, body: {} })
    for (const key of [app.ownerKey, u.key, minted.body.apiKey]) expect(key).toMatch(KEY_FORMAT)
    expect(new Set([app.ownerKey, u.key, minted.body.apiKey]).size).toBe(3)
  })

  it('are stored only as a hash', async () => {
    const u = await app.user()
    const rows = await app.db.query('select * from api_keys')
    const stored = JSON.stringify(rows)
    expect(stored).not.toContain(u.key)
    expect(stored).not.toContain(u.key.slice(4))
    expect(stored).not.toContain(app.ownerKey)
  })

  it('stop working at once when revoked through the admin API, while the user’s other keys go on', async () => {
    const u = await app.user({ tier: 'builder' })
    const second = await app.call('POST', `/admin/v1/users/${u.id}/api-keys`, { key: ADMIN_TOKEN, body: { label: 'ci' } })
    expect((await app.call('GET', '/api/v1/tier-status', { key: second.body.apiKey })).status).toBe(200)

    const revoked = await app.call('DELETE', `/admin/v1/api-keys/${second.body.keyId}`, { key: ADMIN_TOKEN })
    expect(revoked).toMatchObject({ status: 200, body: { success: true } })
    expect(await app.call('GET', '/api/v1/tier-status', { key: second.body.apiKey })).toMatchObject({ status: 401, body: UNAUTHORIZED })
    expect(await app.call('GET', '/api/v1/projects', { key: second.body.apiKey })).toMatchObject({ status: 401, body: UNAUTHORIZED })
    expect((await app.call('GET', '/api/v1/tier-status', { key: u.key })).status).toBe(200)
  })

  it('belong to a user, not a project: one key reaches every project of its user', async () => {
    const u = await app.user()
    const a = await app.project(undefined, u.key)
    const b = await app.project(undefined, u.key)
    for (const id of [a, b]) expect((await app.call('GET', `/api/v1/members?projectId=${id}`, { key: u.key })).status).toBe(200)
  })
})

describe('project access', () => {
  it('answers 403 project_access_denied for a project the key neither owns nor is a member of', async () => {
    const stranger = await app.user()
    const id = await app.project()
    const res = await app.call('GET', `/api/v1/members?projectId=${id}`, { key: stranger.key })
    expect(res).toMatchObject({ status: 403, body: DENIED })
  })

  it('answers the same 403 for a project that does not exist, so ids cannot be probed', async () => {
    const res = await app.call('GET', '/api/v1/members?projectId=no-such-project')
    expect(res.status).toBe(403)
    expect(res.body).toEqual(DENIED)
  })

  it('adds the guide to the 403 from mutate', async () => {
    const stranger = await app.user()
    const id = await app.project()
    const res = await app.call('POST', '/api/v1/mutate', {
      key: stranger.key,
      body: { action: 'renameProject', projectId: id, name: 'Mine now' },
    })
    expect(res.status).toBe(403)
    // api.md's body, and a tip that reads the same for another user's project as for an unknown one
    expect(res.body).toEqual({
      ...DENIED,
      _meta: {
        guide: GUIDE,
        _tip: `projectId "${id}" names no project this key can see (a typo, or a project it is not a member of); GET /api/v1/projects lists the ids this key can use.`,
      },
    })
  })

  it('lets a member in on a team owner’s project', async () => {
    const member = await app.user({ tier: 'builder' })
    const id = await app.project()
    expect((await app.call('POST', '/api/v1/members', { body: { projectId: id, userId: member.id } })).status).toBe(201)
    expect((await app.call('GET', `/api/v1/members?projectId=${id}`, { key: member.key })).status).toBe(200)
  })
})
