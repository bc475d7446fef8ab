import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/create-deps'
import type { Db } from '../src/db'
import { openPostgres } from '../src/db/postgres'
import type { Deps } from '../src/deps'
import { createLogger } from '../src/log'
import { startApp, type TestApp } from './helpers'
import { startLagProxy } from './lag-proxy'

// src/search/catch-up.ts on PostgreSQL: a replica whose lease is held, and which heard no change
// of a project since its index last read the outbox, searches it without reading any table. Its
// own search is asked directly here (not through the route, whose auth and read cache would wait
// for the database first): a replica that lags must read the outbox again once a write it has
// not heard of has answered, and so find what that write added.
describe.skipIf(!process.env.TEST_DATABASE_URL)('the built-in index of a replica that holds its lease', () => {
  let a: TestApp
  let db: Db
  let b: Deps
  let proxy: Awaited<ReturnType<typeof startLagProxy>>
  const search = (projectId: string, q: string) => b.search.search(projectId, { q, limit: 10, mode: 'keyword' })
  const held = async (deps: Deps) => {
    await deps.replicas!.start()
    const deadline = Date.now() + 30_000
    while (!deps.replicas!.trusted() && Date.now() < deadline) await Bun.sleep(10)
    expect(deps.replicas!.trusted()).toBe(true)
  }

  beforeAll(async () => {
    a = await startApp({}, { persist: true })
    const url = new URL(a.store.pgUrl!)
    proxy = await startLagProxy({ host: url.hostname, port: Number(url.port || 5432) })
    url.host = `127.0.0.1:${proxy.port}`
    db = await openPostgres(url.toString())
    b = createDeps({ config: loadConfig({ DATABASE_URL: url.toString(), LOG_LEVEL: 'silent' }), db, log: createLogger('silent') })
    await held(a.deps)
    await held(b)
  })
  afterAll(async () => {
    proxy?.release()
    await b?.replicas?.stop()
    await db?.close()
    await a?.deps.replicas?.stop()
    await a?.close()
    await proxy?.close()
  })

  it('reads the outbox for a project only after a change, and again once a write it has not heard of has answered', async () => {
    const projectId = await a.project()
    const add = async (label: string) =>
      expect(
        (await a.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId, node: { type: 'task', data: { label } } } })).status,
      ).toBe(200)
    await add('Count the petty cash')
    const found = async (q: string) => (await search(projectId, q)).hits.map((h) => h.node.data.label)
    expect(await found('petty')).toEqual(['Count the petty cash'])
    // new queries of the unchanged project: no read of the outbox
    const reads = b.search.outboxReads!()
    for (const q of ['cash', 'count', 'petty cash', 'the cash']) expect(await found(q)).toEqual(['Count the petty cash'])
    expect(b.search.outboxReads!()).toBe(reads)
    // a write heard: the next search reads it
    await add('Order receipt paper')
    expect(await found('receipt')).toEqual(['Order receipt paper'])
    expect(b.search.outboxReads!()).toBe(reads + 1)

    // b hears nothing more: the write's notification, and the marker a waits on, stay in the proxy
    proxy.hold()
    let searching: Promise<string[]> | undefined
    try {
      await add('Quokka census')
      // the write has answered (a waited b's lease out): b's search must find it, though b has not heard of it
      searching = found('quokka')
      // a fixed wait on purpose: b stays lagging this long while its read runs (the read must show the write all the same)
      await Bun.sleep(300)
    } finally {
      proxy.release()
    }
    expect(await searching).toEqual(['Quokka census'])
  })
})
