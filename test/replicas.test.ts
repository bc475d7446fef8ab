import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Replicas } from '../src/revisions/replicas'
import { startApp, type TestApp } from './helpers'

// src/revisions/replicas.ts on PostgreSQL: two apps on one database, as two replicas. Writes on
// one wait until the other, which renews, has heard them: acknowledged, never waited out while
// it is there, however the writers' markers interleave; and no longer once it has stopped.
describe.skipIf(!process.env.TEST_DATABASE_URL)('writers wait to be heard by the other replicas', () => {
  let a: TestApp
  let b: TestApp
  const replicasOf = (app: TestApp) => app.deps.replicas as unknown as Replicas
  beforeAll(async () => {
    a = await startApp({}, { persist: true })
    b = await startApp({}, { reopen: a })
    await replicasOf(a).start()
    await replicasOf(b).start()
  })
  afterAll(async () => {
    await b?.close()
    await a?.close()
  })

  it('50 concurrent writes are each acknowledged by the other replica, none waits out its renewal', async () => {
    const p = await a.project()
    // a has heard b renew once a write waits for b's acknowledgement
    const stats = replicasOf(a).stats
    const write = (i: number) =>
      a.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId: p, node: { type: 'task', data: { label: `Task ${i}` } } } })
    const deadline = Date.now() + 30_000
    while (stats.acknowledged === 0 && Date.now() < deadline) expect((await write(-1)).status).toBe(200)
    expect(stats.acknowledged).toBeGreaterThan(0)
    const before = { ...stats }
    // concurrent transactions: their markers commit in another order than they were numbered
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => write(i)))
    expect(answers.map((r) => r.status)).toEqual(Array(50).fill(200))
    expect(stats.waitedOut).toBe(before.waitedOut)
    expect(stats.acknowledged).toBe(before.acknowledged + 50)
    // and b saw them: its answer lists every task
    const nodes = await b.call('GET', `/api/v1/nodes?projectId=${p}`)
    expect(nodes.body.nodes.filter((n: { data: { label: string } }) => /^Task \d+$/.test(n.data.label))).toHaveLength(50)
  })

  it('a replica that stopped is not waited for', async () => {
    const p = await a.project()
    await replicasOf(b).stop()
    const stats = replicasOf(a).stats
    const before = { ...stats }
    // b said 'bye': a's next writes wait for nobody (neither acknowledged nor waited out)
    let quiet = false
    const deadline = Date.now() + 30_000
    while (!quiet && Date.now() < deadline) {
      const mark = { ...stats }
      expect(
        (
          await a.call('POST', '/api/v1/mutate', {
            body: { action: 'add', projectId: p, node: { type: 'task', data: { label: 'After' } } },
          })
        ).status,
      ).toBe(200)
      quiet = stats.acknowledged === mark.acknowledged && stats.waitedOut === mark.waitedOut
    }
    expect(quiet).toBe(true)
    expect(stats.waitedOut).toBe(before.waitedOut)
  })
})
