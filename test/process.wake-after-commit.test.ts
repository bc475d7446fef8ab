import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type ServerProcess, startServer } from './process'
import { startReceiver } from './receiver'

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

  /** A project with a webhook on node.added that posts to `path`. */
  async function hooked(id: string, path: string) {
    const made = await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: id, id } } })
    expect(made.status).toBe(200)
    const hook = await server.call('POST', '/api/v1/webhooks', { body: { projectId: id, url: receiver.url(path), events: ['node.added'] } })
    expect(hook.status).toBe(201)
    return id
  }
  const labels = (path: string) => receiver.on(path).map((r) => r.json?.node?.data?.label as string)

  it('POST /mutate: an add is delivered', async () => {
    const p = await hooked('wake-mutate', '/mutate')
    const added = await server.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Woken by mutate' } } },
    })
    expect(added.status).toBe(200)
    await server.until(async () => labels('/mutate').includes('Woken by mutate'), 30_000, 'the add delivered')
  }, 60_000)

  it("POST /workflow: a terminal advance's plan is delivered", async () => {
    const p = await hooked('wake-workflow', '/workflow')
    const planned = await server.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: p,
        mutations: [
          { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Goal' } } },
          { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Need' } } },
          { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Approach' } } },
        ],
      },
    })
    expect(planned.status).toBe(200)
    const approach = (planned.body.results as { node: { id: string; type: string } }[]).find((r) => r.node.type === 'approach')!.node.id
    // the batch's own deliveries first, so that the plan's is the one awaited next
    await server.until(async () => labels('/workflow').includes('Approach'), 30_000, 'the batch delivered')
    const started = await server.call('POST', '/api/v1/workflow', { body: { projectId: p, action: 'start', flow: 'add', input: 'CSV' } })
    expect(started.status).toBe(200)
    const draft = { id: 'draft-1', type: 'job', parentId: approach, data: { label: 'Woken by workflow' } }
    const applied = await server.call('POST', '/api/v1/workflow', {
      body: {
        projectId: p,
        action: 'advance',
        state: started.body.state,
        response: { signal: 'draft_ready', message: 'Small enough.', draftNodes: [draft] },
      },
    })
    expect([applied.status, applied.body.done]).toEqual([200, true])
    await server.until(async () => labels('/workflow').includes('Woken by workflow'), 30_000, "the plan's add delivered")
  }, 90_000)
})
