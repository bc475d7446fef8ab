import { describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN } from './helpers'
import { replicas } from './process'

// live.md §6 across replicas: a key re-scoped through one replica holds on the other as soon as a
// revocation would (the auth cache's notification), after the other has cached the key.
const onPostgres = !!process.env.TEST_DATABASE_URL

describe.skipIf(!onPostgres)('scoped keys, two replicas', () => {
  const pair = replicas()

  it('a key narrowed on one replica is refused by the other within 1 s, and a project list set there holds there too', async () => {
    const a = await pair.a.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'alpha', id: 'alpha' } } })
    expect(a.status).toBe(200)
    const minted = await pair.a.call('POST', '/api/v1/keys', { body: { label: 'agent', scope: { role: 'write' } } })
    const key: string = minted.body.apiKey
    const add = { action: 'add', projectId: 'alpha', node: { type: 'goal', data: { label: 'G' } } }
    // cached on b
    for (let i = 0; i < 3; i++) expect((await pair.b.call('GET', '/api/v1/nodes?projectId=alpha', { key })).status).toBe(200)
    expect((await pair.b.call('POST', '/api/v1/mutate', { key, body: add })).status).toBe(200)
    const narrowed = await pair.a.call('PATCH', `/admin/v1/api-keys/${minted.body.keyId}`, {
      key: ADMIN_TOKEN,
      body: { scope: { role: 'read' } },
    })
    expect(narrowed.status).toBe(200)
    const since = performance.now()
    let last: { status: number; body: any }
    for (;;) {
      last = await pair.b.call('POST', '/api/v1/mutate', { key, body: { ...add, node: { type: 'goal', data: { label: 'Again' } } } })
      if (last.status === 403 || performance.now() - since > 1000) break
      await Bun.sleep(10)
    }
    expect({ status: last.status, error: last.body.error, withinOneSecond: performance.now() - since <= 1000 }).toEqual({
      status: 403,
      error: 'key_scope',
      withinOneSecond: true,
    })
    // a project list set through a: b lists only that project and refuses another
    await pair.a.call('PATCH', `/admin/v1/api-keys/${minted.body.keyId}`, {
      key: ADMIN_TOKEN,
      body: { scope: { role: 'read', projects: ['beta'] } },
    })
    await pair.b.until(async () => (await pair.b.call('GET', '/api/v1/nodes?projectId=alpha', { key })).body.error === 'key_scope', 5000)
    expect((await pair.b.call('GET', '/api/v1/projects', { key })).body.projects).toEqual([])
  })
})
