import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { WakeTopic } from '../src/deps'
import { startApp, type TestApp } from './helpers'
import { applyDraftedJob, planProject } from './workflow-fixtures'

/**
 * The loops are woken by a write's transaction once it has committed (src/mutate/sequence.ts
 * `runWrite`, `Db.afterCommit`), never by a route: counted here as the wake-ups the app's
 * `onWake` listeners hear, for each route that writes, and not for a write that committed
 * nothing. test/process.wake-after-commit.test.ts sees the same from outside, as webhook
 * deliveries. Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.
 */

let app: TestApp
let projectId: string
const heard: Record<WakeTopic, number> = { events: 0, classify: 0, view: 0 }

beforeAll(async () => {
  app = await startApp()
  projectId = await app.project('wake-once')
  for (const topic of ['events', 'classify'] as const) app.deps.onWake(topic, () => heard[topic]++)
}, 60_000)
afterAll(() => app?.close())

/** The wake-ups heard while `fn` ran, once the microtasks it queued have run. */
async function woken(fn: () => Promise<unknown>): Promise<{ events: number; classify: number }> {
  heard.events = 0
  heard.classify = 0
  await fn()
  await Bun.sleep(0)
  return { events: heard.events, classify: heard.classify }
}

const addGoal = (label: string, headers?: Record<string, string>) =>
  app.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId, node: { type: 'goal', data: { label } } }, headers })

describe('a committed write wakes the loops, from the transaction, whichever route made it', () => {
  it('POST /mutate: once per write; a refused write and a replay wake nothing', async () => {
    expect(await woken(async () => expect((await addGoal('Woken')).status).toBe(200))).toEqual({ events: 1, classify: 1 })
    const refused = await woken(async () => expect((await addGoal('')).status).toBe(400))
    expect(refused).toEqual({ events: 0, classify: 0 })
    const first = await woken(async () => expect((await addGoal('Once', { 'Idempotency-Key': 'wake-once-1' })).status).toBe(200))
    expect(first).toEqual({ events: 1, classify: 1 })
    const replay = await woken(async () => {
      const res = await addGoal('Once', { 'Idempotency-Key': 'wake-once-1' })
      expect([res.status, res.headers.get('idempotent-replayed')]).toEqual([200, 'true'])
    })
    expect(replay).toEqual({ events: 0, classify: 0 })
    // a rule refused inside the handler: its transaction rolled back
    const stale = await woken(async () => {
      const res = await app.call('POST', '/api/v1/mutate', { body: { action: 'delete', projectId, nodeId: 'goal-nope' } })
      expect(res.status).toBeGreaterThanOrEqual(400)
    })
    expect(stale).toEqual({ events: 0, classify: 0 })
  })

  it("POST /workflow: a terminal advance's plan", async () => {
    const planned = await planProject(app)
    const applied = await woken(async () => {
      const res = await applyDraftedJob(app, planned, 'A manager exports the summary')
      expect([res.status, res.body.done]).toEqual([200, true])
    })
    expect(applied.events).toBeGreaterThanOrEqual(1)
    expect(applied.classify).toBeGreaterThanOrEqual(1)
  })

  it("POST /import-okf: each chunk's commit", async () => {
    const source = await app.project('wake-source')
    const mutations = Array.from({ length: 120 }, (_, i) => ({ action: 'add', node: { type: 'task', data: { label: `T${i}` } } }))
    expect((await app.call('POST', '/api/v1/mutate', { body: { action: 'batch', projectId: source, mutations } })).status).toBe(200)
    const files = (await app.call('GET', `/api/v1/export-okf?projectId=${source}`)).body.files as Record<string, string>
    const imported = await woken(async () => {
      const res = await app.call('POST', '/api/v1/import-okf', { body: { files } })
      expect([res.status, res.body.nodes]).toEqual([200, 120])
    })
    // the first chunk holds 50 entries (src/mutate/import-okf.ts): 120 tasks take at least two
    expect(imported.events).toBeGreaterThanOrEqual(2)
    expect(imported.classify).toBe(imported.events)
  })
})
