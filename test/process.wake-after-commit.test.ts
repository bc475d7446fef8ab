import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
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
