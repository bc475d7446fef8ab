import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import postgres from 'postgres'
import { projectWithBatches, type ServerProcess, startServer } from './process'
import { startReceiver } from './receiver'
import { applyDraftedJob } from './workflow-fixtures'

/**
 * A committed write wakes the loops, whichever route made it: the write's transaction runs the
 * wake-up once it has committed (src/mutate/sequence.ts `runWrite`, through `Db.afterCommit`), so
 * no route calls it by hand. Seen from outside, on a real server process whose loops run on their
 * own only every 10 minutes (SCHEDULER_INTERVAL_MS): a webhook's first attempt, which the
 * delivery loop makes only when woken (src/webhooks/loop.ts), arrives well within the test's
 * deadline after a write through POST /mutate and after a workflow's plan applied through POST
 * /workflow. An import (POST /import-okf) writes a project nobody can hold a webhook on until it
 * is whole: its chunks' wake-ups are seen in process (test/mutate.wake.test.ts).
 */
describe('a committed write wakes the delivery loop, from every route that writes', () => {
  let server: ServerProcess
  const receiver = startReceiver()
  beforeAll(async () => {
    server = await startServer({ WEBHOOK_ALLOW_INSECURE: '1', SCHEDULER_INTERVAL_MS: '600000' })
  }, 60_000)
  afterAll(async () => {
    await server.close()
    receiver.close()
  })

  /** A webhook on node.added of `projectId`, posting to `path`: it gets the events of writes after it. */
  async function hook(projectId: string, path: string) {
    const made = await server.call('POST', '/api/v1/webhooks', { body: { projectId, url: receiver.url(path), events: ['node.added'] } })
    expect(made.status).toBe(201)
  }
  const labels = (path: string) => receiver.on(path).map((r) => r.json?.node?.data?.label as string)

  it('POST /mutate: an add is delivered', async () => {
    const p = await projectWithBatches(server, 'wake-mutate')
    await hook(p, '/mutate')
    const added = await server.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Woken by mutate' } } },
    })
    expect(added.status).toBe(200)
    await server.until(async () => labels('/mutate').includes('Woken by mutate'), 30_000, 'the add delivered')
  }, 60_000)

  // PostgreSQL: the fan-out delivers an event only once every older transaction has ended (a
  // transaction still open may yet commit a smaller seq); the end of that transaction wakes
  // nothing, so the runner looks again while an event is held back (src/webhooks/delivery.ts
  // HELD_AGAIN_MS). Before, the add waited for the next write's wake-up or the loop's tick
  // (here 10 minutes): this test failed in CI when another test file held a transaction open.
  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'an add held back by an older transaction is delivered once it ends',
    async () => {
      const p = await projectWithBatches(server, 'wake-held')
      await hook(p, '/held')
      const sql = postgres(server.env.DATABASE_URL!, { max: 2, onnotice: () => {} })
      try {
        let release = () => {}
        let holding = () => {}
        const held = new Promise<void>((r) => (release = r))
        const open = new Promise<void>((r) => (holding = r))
        // an older transaction, with a transaction id, left open
        const older = sql.begin(async (tx) => {
          await tx`select pg_current_xact_id()`
          holding()
          await held
        })
        await open
        const added = await server.call('POST', '/api/v1/mutate', {
          body: { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Held back' } } },
        })
        expect(added.status).toBe(200)
        // the add's event is committed, and behind the open transaction
        const [event] = await sql`select txid >= pg_snapshot_xmin(pg_current_snapshot()) as held from events
        where project_id = ${p} and type = 'node.added' order by seq desc limit 1`
        expect(event?.held).toBe(true)
        // a fixed wait on purpose: while the older transaction is open the add is not delivered
        // (its order is not known yet), and the add's own wake-up has run its fan-out meanwhile
        await Bun.sleep(1_000)
        expect(labels('/held')).toEqual([])
        release()
        await older
        await server.until(async () => labels('/held').includes('Held back'), 30_000, 'the held add delivered')
      } finally {
        await sql.end()
      }
    },
    60_000,
  )

  it("POST /workflow: a terminal advance's plan is delivered", async () => {
    // goal-1 › need-1 › approach-1, written before the webhook: only the plan's add is delivered
    const p = await projectWithBatches(server, 'wake-workflow', [
      { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Goal' } } },
      { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Need' } } },
      { action: 'add', node: { type: 'approach', parentId: 'draft-n', data: { label: 'Approach' } } },
    ])
    await hook(p, '/workflow')
    const applied = await applyDraftedJob(server, p, 'Woken by workflow')
    expect([applied.status, applied.body.done]).toEqual([200, true])
    await server.until(async () => labels('/workflow').includes('Woken by workflow'), 30_000, "the plan's add delivered")
    expect(labels('/workflow')).toEqual(['Woken by workflow'])
  }, 60_000)
})
