import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type ServerProcess, startServer } from './process'

describe('the server process (test/process.ts)', () => {
  let server: ServerProcess
  beforeAll(async () => {
    // an empty DATA_DIR on PGlite: the first start runs initdb itself
    server = await startServer({}, undefined, { emptyDataDir: true })
  }, 60_000)
  afterAll(() => server.close())

  it('answers through HTTP alone with the key it printed on first start', async () => {
    expect(server.ownerKey).toMatch(/^arb_[0-9A-Za-z]{32,}$/)
    const res = await server.call('GET', '/api/v1/projects')
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { projects: [] } })
  })

  it('exits 0 on SIGTERM', async () => {
    expect(await server.stop()).toBe(0)
  })
})
