import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { replicas, type ServerProcess, startServer } from './process'

// agents-and-app.md §5 through the real server: a user mints, lists and revokes their own keys
const onPostgres = !!process.env.TEST_DATABASE_URL

describe('own API keys, one server process', () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it('mints a key that works, lists it as current, revokes it and refuses it at once', async () => {
    const minted = await server.call('POST', '/api/v1/keys', { body: { label: 'agent' } })
    expect(minted.status).toBe(201)
    const key: string = minted.body.apiKey
    const listed = await server.call('GET', '/api/v1/keys', { key })
    expect(listed.status).toBe(200)
    expect(listed.body.keys.map((k: any) => [k.label, k.prefix, k.current])).toEqual([
      [null, server.ownerKey.slice(0, 8), false],
      ['agent', key.slice(0, 8), true],
    ])
    expect(await server.call('DELETE', `/api/v1/keys?keyId=${minted.body.keyId}`)).toMatchObject({ status: 200, body: { success: true } })
    expect((await server.call('GET', '/api/v1/projects', { key })).status).toBe(401)
    const last = await server.call('DELETE', `/api/v1/keys?keyId=${listed.body.keys[0].keyId}`)
    expect({ status: last.status, error: last.body.error }).toEqual({ status: 409, error: 'last_key' })
    expect((await server.call('GET', '/api/v1/projects')).status).toBe(200)
  })
})

/** Two replicas on one PostgreSQL database: a key revoked through one is refused by the other at once. */
describe.skipIf(!onPostgres)('own API keys, two replicas', () => {
  const pair = replicas()

  it('a key revoked on one replica is refused by the other within 1 s, after the other cached it', async () => {
    const minted = await pair.a.call('POST', '/api/v1/keys', { body: { label: 'replicated' } })
    const key: string = minted.body.apiKey
    for (let i = 0; i < 3; i++) expect((await pair.b.call('GET', '/api/v1/projects', { key })).status).toBe(200)
    expect((await pair.a.call('DELETE', `/api/v1/keys?keyId=${minted.body.keyId}`)).status).toBe(200)
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
    expect((await pair.b.call('GET', '/api/v1/projects')).status).toBe(200)
  })
})
