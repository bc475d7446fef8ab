import { afterAll, describe, expect, it } from 'bun:test'
import { startApp } from './helpers'

// The work state's statements before a write (src/work/service.ts `beforeWrite`: the project's
// work lock, the blocked-before read, a batch's deferral) go out on PostgreSQL without waiting
// for their answer, with the handler's first statements. A write whose handler fails before or
// while they run is rolled back whole, and the next writes of the project see a work state as
// if it had never been tried: nothing of it deferred, nothing locked, `_meta.unblocked` as ever.
const app = await startApp()
afterAll(() => app.close())

const mutate = (body: Record<string, unknown>) => app.call('POST', '/api/v1/mutate', { body })
const ready = async (p: string) => ((await app.call('GET', `/api/v1/ready?projectId=${p}`)).body.items as any[]).map((i) => i.node.id)

/** goal-1 > need-1 > approach-1 {job-1}, and approach-2 blocked by approach-1 {job-2} */
async function seed(): Promise<string> {
  const p = await app.project()
  const res = await mutate({
    action: 'batch',
    projectId: p,
    mutations: [
      { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
      { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
      { action: 'add', node: { id: 'draft-a1', type: 'approach', parentId: 'draft-n', data: { label: 'A1' } } },
      { action: 'add', node: { id: 'draft-a2', type: 'approach', parentId: 'draft-n', data: { label: 'A2', blockedBy: ['draft-a1'] } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-a1', data: { label: 'J1' } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-a2', data: { label: 'J2' } } },
    ],
  })
  expect(res.status).toBe(200)
  return p
}

describe('a write refused after its work lock was sent', () => {
  it('leaves the work state, the lock and the next writes as they were', async () => {
    const p = await seed()
    expect(await ready(p)).toEqual(['job-1'])
    // refused by the handler, each after beforeWrite's statements went out: a job under no node,
    // a job in an iteration that does not exist, a delete of no node, a batch (deferred) whose
    // second entry is refused
    const refused = [
      await mutate({ action: 'add', projectId: p, node: { type: 'job', parentId: 'approach-9', data: { label: 'x' } } }),
      await mutate({ action: 'add', projectId: p, node: { type: 'job', parentId: 'approach-1', data: { label: 'x', iteration: 'S9' } } }),
      await mutate({ action: 'delete', projectId: p, nodeId: 'job-9' }),
      await mutate({
        action: 'batch',
        projectId: p,
        mutations: [
          { action: 'add', node: { type: 'job', parentId: 'approach-1', data: { label: 'b1' } } },
          { action: 'add', node: { type: 'job', parentId: 'approach-9', data: { label: 'b2' } } },
        ],
      }),
      // and one refused before any statement of its own ran: its first entry's data is no label
      await mutate({
        action: 'batch',
        projectId: p,
        mutations: [{ action: 'add', node: { type: 'goal', data: { label: 5 } } }],
      }),
    ]
    expect(refused.map((r) => r.status >= 400 && r.status < 500)).toEqual([true, true, true, true, true])
    // nothing of them was kept
    expect(await ready(p)).toEqual(['job-1'])
    // the next single writes: a job's add is ready at once (its work state not deferred), and
    // marking job-1 done unblocks approach-2's job, said in _meta.unblocked
    const added = await mutate({ action: 'add', projectId: p, node: { type: 'job', parentId: 'approach-1', data: { label: 'J3' } } })
    expect(added.status).toBe(200)
    expect(added.body.node.id).toBe('job-3')
    expect(added.body._meta.unblocked).toBeUndefined() // an add unblocks nothing: the blocked-before answer is false, not a promise
    expect(await ready(p)).toEqual(['job-1', 'job-3'])
    expect((await mutate({ action: 'delete', projectId: p, nodeId: 'job-3' })).status).toBe(200)
    const done = await mutate({ action: 'update', projectId: p, nodeId: 'job-1', data: { status: 'done' } })
    expect(done.status).toBe(200)
    expect(done.body._meta.unblocked).toEqual(['job-2'])
    expect(await ready(p)).toEqual(['job-2'])
  })
})
