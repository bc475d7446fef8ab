import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN } from './helpers'
import { replicas, type ServerProcess, startServer } from './process'

const onPostgres = !!process.env.TEST_DATABASE_URL
const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}` }

/** Two replicas on one PostgreSQL database: the auth cache of one hears the other's writes (NOTIFY). */
describe.skipIf(!onPostgres)('two replicas share revocations through the database', () => {
  const pair = replicas()

  it('refuses on one replica, within 1 s, a key revoked on the other, after the first replica cached it', async () => {
    const created = await pair.a.call('POST', '/admin/v1/users', {
      key: null,
      headers: adminHeaders,
      body: { name: 'replica user', tier: 'team' },
    })
    const minted = await pair.a.call('POST', `/admin/v1/users/${created.body.user.id}/api-keys`, {
      key: null,
      headers: adminHeaders,
      body: {},
    })
    const key: string = minted.body.apiKey
    for (let i = 0; i < 3; i++) expect((await pair.b.call('GET', '/api/v1/projects', { key })).status).toBe(200)
    const revoked = await pair.a.call('DELETE', `/admin/v1/api-keys/${minted.body.keyId}`, { key: null, headers: adminHeaders })
    expect(revoked.status).toBe(200)
    const since = performance.now()
    const statuses: number[] = []
    for (;;) {
      const status = (await pair.b.call('GET', '/api/v1/projects', { key })).status
      statuses.push(status)
      if (status === 401 || performance.now() - since > 1000) break
      await Bun.sleep(10)
    }
    expect({ refused: statuses.at(-1), withinOneSecond: performance.now() - since <= 1000 }).toEqual({
      refused: 401,
      withinOneSecond: true,
    })
  })

  it('shows on one replica, within 1 s, a project renamed on the other', async () => {
    await pair.a.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Before', id: 'replicated' } } })
    expect((await pair.b.call('GET', '/api/v1/projects')).body.projects).toEqual([
      { id: 'replicated', name: 'Before', archived: false, role: 'owner' },
    ])
    await pair.a.call('POST', '/api/v1/mutate', { body: { action: 'renameProject', projectId: 'replicated', name: 'After' } })
    const after = await pair.b.until(
      async () => {
        const projects = (await pair.b.call('GET', '/api/v1/projects')).body.projects
        return projects[0]?.name === 'After' && projects
      },
      1000,
      'the rename seen on the other replica',
    )
    expect(after).toEqual([{ id: 'replicated', name: 'After', archived: false, role: 'owner' }])
  })
})

describe('one server process', () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it('refuses a revoked key on the next request after it was used', async () => {
    const created = await server.call('POST', '/admin/v1/users', { key: null, headers: adminHeaders, body: { name: 'u', tier: 'team' } })
    const key: string = created.body.apiKey
    expect((await server.call('GET', '/api/v1/projects', { key })).status).toBe(200)
    const minted = await server.call('POST', `/admin/v1/users/${created.body.user.id}/api-keys`, {
      key: null,
      headers: adminHeaders,
      body: {},
    })
    expect((await server.call('GET', '/api/v1/projects', { key: minted.body.apiKey })).status).toBe(200)
    await server.call('DELETE', `/admin/v1/api-keys/${minted.body.keyId}`, { key: null, headers: adminHeaders })
    expect((await server.call('GET', '/api/v1/projects', { key: minted.body.apiKey })).status).toBe(401)
    expect((await server.call('GET', '/api/v1/projects', { key })).status).toBe(200)
  })
})
