import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MEILI_INDEX, MeiliBackend } from '../src/search/meili'
import { startApp, type TestApp } from './helpers'
import { type FakeMeili, startFakeMeili } from './meili-fake'

// Several replicas on one PostgreSQL each run the search loop. Two of them pushing the outbox to
// Meilisearch at once could send one node's add after its delete and bring the node back for
// good, so one replica at a time holds the sync lease; the others stand by and take over from
// the stored cursor once it is given up (on stop) or has expired (a crash).
describe.skipIf(!process.env.TEST_DATABASE_URL)('the Meilisearch sync lease across replicas', () => {
  let fake: FakeMeili
  let a: TestApp
  let b: TestApp
  let projectId: string
  const env = () => ({ MEILI_URL: fake.url, MEILI_API_KEY: 'test-master-key' })
  const add = async (app: TestApp, label: string) =>
    (await app.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId, node: { type: 'task', data: { label } } } })).body.node.id
  const labels = () =>
    [...fake.documents(MEILI_INDEX).values()]
      .filter((d) => d.projectId === projectId)
      .map((d) => d.label)
      .sort()

  beforeAll(async () => {
    fake = startFakeMeili({ masterKey: 'test-master-key' })
    a = await startApp(env(), { persist: true })
    b = await startApp(env(), { reopen: a, persist: true })
    projectId = await a.project()
  })
  afterAll(async () => {
    await b.close()
    await a.close()
    fake.stop()
  })

  test('one replica pushes while the other stands by; a write through either reaches the index once', async () => {
    await add(a, 'Renew the TLS certificate')
    // the first holder builds the new index from the database (then re-reads the last minute of events)
    expect(await a.deps.search.tick(new Date())).toEqual({ pushed: 1, rebuilt: 1 })
    const other = await add(b, 'Invoices in German or Dutch')
    expect(await b.deps.search.tick(new Date())).toEqual({ pushed: 0, standby: 1 })
    expect(labels()).toEqual(['Renew the TLS certificate'])
    expect(await a.deps.search.tick(new Date())).toEqual({ pushed: 1 })
    expect(labels()).toEqual(['Invoices in German or Dutch', 'Renew the TLS certificate'])
    await b.call('POST', '/api/v1/mutate', { body: { action: 'delete', projectId, nodeId: other } })
    expect(await b.deps.search.tick(new Date())).toEqual({ pushed: 0, standby: 1 })
    expect(await a.deps.search.tick(new Date())).toEqual({ pushed: 1 })
    expect(labels()).toEqual(['Renew the TLS certificate'])
  })

  test('a replica that stops gives the lease up: the other takes over at once, from the stored cursor', async () => {
    await a.deps.search.stop?.()
    await add(a, 'Renew the domain name')
    const took = await b.deps.search.tick(new Date())
    expect(took.standby).toBeUndefined()
    expect(took.pushed).toBeGreaterThanOrEqual(1) // the new node, plus the last minute re-read (idempotent)
    expect(labels()).toEqual(['Renew the TLS certificate', 'Renew the domain name'])
    expect(await a.deps.search.tick(new Date())).toEqual({ pushed: 0, standby: 1 })
  })

  test('a lease that is not renewed (a crashed replica) expires, and another replica takes over', async () => {
    await b.deps.search.stop?.()
    const crashed = new MeiliBackend(a.deps, a.deps.search.choice as never, MEILI_INDEX, 300)
    expect((await crashed.tick(new Date())).standby).toBeUndefined()
    expect(await b.deps.search.tick(new Date())).toEqual({ pushed: 0, standby: 1 })
    await add(b, 'Archive last year’s invoices')
    // b stands by until the crashed lease of 300 ms runs out, then takes over
    let took = await b.deps.search.tick(new Date())
    for (const end = Date.now() + 10_000; took.standby !== undefined && Date.now() < end; await Bun.sleep(20))
      took = await b.deps.search.tick(new Date())
    expect(took.standby).toBeUndefined()
    expect(labels()).toContain('Archive last year’s invoices')
  })

  test('`search:rebuild` while a replica holds the lease drops the index embedder, and the holder rebuilds the index', async () => {
    const script = new MeiliBackend(a.deps, a.deps.search.choice as never) // what src/search/rebuild.ts makes
    expect(await script.rebuild()).toEqual({ requested: true }) // b holds the lease
    const nodes = (await a.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes.length
    let rebuilt: Record<string, number> = {}
    for (const end = Date.now() + 30_000; !rebuilt.rebuilt && Date.now() < end; await Bun.sleep(200))
      rebuilt = await b.deps.search.tick(new Date())
    expect(rebuilt).toEqual({ pushed: expect.any(Number), rebuilt: nodes })
    expect(labels()).toEqual(['Archive last year’s invoices', 'Renew the TLS certificate', 'Renew the domain name'])
  })
})
