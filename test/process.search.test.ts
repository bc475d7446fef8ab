import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type ServerProcess, startServer } from './process'

/**
 * Search in the running server, seen through HTTP alone: a bulk import is indexed for meaning
 * by the scheduled loop, with no search request and no `tick` call in between.
 */
describe('search in the server process', () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServer()
  }, 60_000)
  afterAll(() => server.close())

  const SEPA = 'Payers in the eurozone can pay by SEPA Direct Debit'
  const fillers = Array.from({ length: 44 }, (_, i) => `Renew certificate number ${i} of the marketing site before it lapses`)

  it('indexes a batch of 45 adds for meaning on its own, then finds a paraphrase', async () => {
    await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Search', id: 'search-proc' } } })
    const added = await server.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: 'search-proc',
        mutations: [SEPA, ...fillers].map((label) => ({ action: 'add', node: { type: 'task', data: { label } } })),
      },
    })
    expect(added.status).toBe(200)

    // no search yet: wait until the loop has had time to embed everything, then ask once
    const q = encodeURIComponent('European customers authorise pulling money from their account')
    const first = await server.until(
      async () => {
        await Bun.sleep(1000)
        const res = await server.call('GET', `/api/v1/search?projectId=search-proc&limit=3&q=${q}`)
        return res.body._meta?.search?.pendingNodes === 0 && res.body._meta.search.semantic === 'full' ? res : null
      },
      90_000,
      'every node embedded by the loop',
    )
    expect(first!.status).toBe(200)
    expect(first!.body.results[0].node.data.label).toBe(SEPA)
  }, 120_000)
})
