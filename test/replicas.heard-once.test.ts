import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { AUTH_CHANNEL } from '../src/accounts/auth-cache'
import type { Replicas } from '../src/revisions/replicas'
import { REVISION_CHANNEL } from '../src/revisions/revision'
import { ADMIN_TOKEN, startApp, type TestApp } from './helpers'

// A write's notifications reach each listener of each replica once (src/db/postgres.ts
// `committed`). On PostgreSQL the writer's own listeners of the channels writers wait on
// (REVISION_CHANNEL, AUTH_CHANNEL) heard each of them twice: at the commit, and again when its
// LISTEN connection brought it back. Two apps on one database, as two replicas (on PGlite, the
// one app).
const onPostgres = !!process.env.TEST_DATABASE_URL
/** sent by the test after the writes: heard on a LISTEN connection, everything committed before it was heard there too */
const FLUSH = 'arbor_test_flush'

describe('a write is heard once by each listener', () => {
  const apps: { name: string; app: TestApp }[] = []
  const heard: string[] = []
  let flushes = 0
  beforeAll(async () => {
    const a = await startApp({}, { persist: onPostgres })
    apps.push({ name: 'a', app: a })
    if (onPostgres) apps.push({ name: 'b', app: await startApp({}, { reopen: a }) })
    for (const { name, app } of apps) {
      // as a replica runs: writers wait until every replica holding a lease has heard them
      await (app.deps.replicas as unknown as Replicas | null)?.start()
      for (const channel of [REVISION_CHANNEL, AUTH_CHANNEL])
        await app.db.listen(channel, { message: (payload) => heard.push(`${name} ${channel} ${payload}`), up() {}, down() {} })
      await app.db.listen(FLUSH, { message: () => flushes++, up() {}, down() {} })
    }
  })
  afterAll(async () => {
    // the last app opened drops the database: the first closes before it
    for (const { app } of apps) await app.close()
  })

  /** What the listeners heard up to now: once every app has heard a notification sent after it. */
  const heardSoFar = async () => {
    const expected = flushes + apps.length
    await apps[0]!.app.db.notify(FLUSH, '')
    const deadline = Date.now() + 20_000
    while (flushes < expected && Date.now() < deadline) await Bun.sleep(20)
    expect(flushes).toBe(expected)
    return heard.splice(0).sort()
  }

  it('a node added on one replica: its project heard once on each', async () => {
    const [a, b] = apps.map((x) => x.app)
    const p = await a!.project()
    const other = b ? await b.project() : null
    await heardSoFar()
    const add = async (app: TestApp, projectId: string) => {
      const res = await app.call('POST', '/api/v1/mutate', {
        body: { action: 'add', projectId, node: { type: 'goal', data: { label: 'Heard once' } } },
      })
      expect(res.status).toBe(200)
    }
    await add(a!, p)
    expect(await heardSoFar()).toEqual(apps.map(({ name }) => `${name} ${REVISION_CHANNEL} ${p}`).sort())
    if (!b || !other) return
    // the other way, and two writes at once on one replica
    await Promise.all([add(b, other), add(b, other)])
    expect(await heardSoFar()).toEqual(apps.flatMap(({ name }) => Array(2).fill(`${name} ${REVISION_CHANNEL} ${other}`)).sort())
  })

  it("a change of anyone's access: heard once on each", async () => {
    const [a] = apps.map((x) => x.app)
    await heardSoFar()
    const created = await a!.call('POST', '/admin/v1/users', { key: ADMIN_TOKEN, body: { name: 'heard-once' } })
    expect(created.status).toBe(201)
    expect(await heardSoFar()).toEqual(apps.map(({ name }) => `${name} ${AUTH_CHANNEL} `).sort())
  })
})
