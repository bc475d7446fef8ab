import { afterAll, describe, expect, it } from 'bun:test'
import { startApp } from './helpers'
import { until } from './receiver'

// What the one sequence of a write (src/mutate/sequence.ts) saves, in the order it happens: the
// events and changes a handler notes (in its WriteCtx or its outbox) come out of the one saving
// step in the order they were noted, with the write's actor and one requestId.
const app = await startApp()
afterAll(() => app.close())

const mutate = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
  const res = await app.call('POST', '/api/v1/mutate', { body, headers })
  expect(res.status).toBe(200)
  return res.body
}
/** The project's events, oldest first, once there are at least `n`. */
const events = (p: string, n: number) =>
  until(async () => {
    const res = await app.call('GET', `/api/v1/events?projectId=${p}&limit=500`)
    return res.body.events?.length >= n ? (res.body.events as Record<string, any>[]) : null
  }, `${n} events`)
/** The project's changes, newest first. */
const changes = async (p: string) => (await app.call('GET', `/api/v1/history?projectId=${p}`)).body.changes as Record<string, any>[]

/** An approach with a job in iteration S1 (job-1), written by one batch. */
async function seed(): Promise<string> {
  const p = await app.project()
  await mutate({
    action: 'batch',
    projectId: p,
    mutations: [
      { action: 'addIteration', iteration: { name: 'S1' } },
      { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
      { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
      { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'J', iteration: 'S1' } } },
    ],
  })
  return p
}

describe('the saving step of the write sequence', () => {
  it("saves a batch's iteration before its nodes, events and changes alike", async () => {
    const p = await seed()
    const all = await events(p, 5)
    expect(all.map((e) => e.event)).toEqual(['iteration.added', 'node.added', 'node.added', 'node.added', 'node.added'])
    const saved = await changes(p)
    // newest first: the iteration's change is the batch's first
    expect(saved.map((c) => [c.action, c.target.id])).toEqual([
      ['add', 'job-1'],
      ['add', 'approach-1'],
      ['add', 'need-1'],
      ['add', 'goal-1'],
      ['addIteration', 'S1'],
    ])
    expect(new Set(saved.map((c) => c.requestId)).size).toBe(1)
  })

  it('saves the claims that marking work done ends after the update, with its actor', async () => {
    const p = await seed()
    const [claim] = (await mutate({ action: 'claim', projectId: p, agent: 'worker', nodeIds: ['job-1'] })).claims
    await mutate({ action: 'update', projectId: p, nodeId: 'job-1', claimToken: claim.claimToken, data: { status: 'done' } })
    const last = (await events(p, 8)).slice(-2)
    const actor = { userId: expect.stringMatching(/^usr_/), userName: 'owner', agent: 'worker', via: 'api' }
    expect(last).toEqual([
      expect.objectContaining({ event: 'node.updated', node: expect.objectContaining({ id: 'job-1' }), actor }),
      { event: 'node.released', project_id: p, timestamp: expect.any(String), nodeId: 'job-1', agent: 'worker', actor },
    ])
    // the claim ended: its token no longer renews
    const renewed = await app.call('POST', '/api/v1/mutate', { body: { action: 'renewClaim', projectId: p, claimToken: claim.claimToken } })
    expect(renewed.status).toBe(409)
  })

  it("saves an iteration's rename before the jobs it moves, in one request", async () => {
    const p = await seed()
    await mutate({ action: 'updateIteration', projectId: p, iterationName: 'S1', data: { name: 'Sprint 1' } }, { 'x-agent-id': 'planner' })
    const last = (await events(p, 7)).slice(-2)
    expect(last.map((e) => [e.event, e.iteration ?? e.node.data.iteration, e.actor.agent])).toEqual([
      ['iteration.updated', { name: 'Sprint 1', previous_name: 'S1' }, 'planner'],
      ['node.updated', 'Sprint 1', 'planner'],
    ])
    const renamed = (await changes(p)).slice(0, 2)
    expect(renamed.map((c) => [c.action, c.target.id, c.fields])).toEqual([
      ['update', 'job-1', ['iteration']],
      ['updateIteration', 'Sprint 1', ['name']],
    ])
    expect(renamed[0]!.requestId).toBe(renamed[1]!.requestId)
  })

  it("saves a revert's iteration step before its nodes: the iteration's change first, its event unmarked", async () => {
    const p = await seed()
    await mutate({ action: 'update', projectId: p, nodeId: 'goal-1', data: { label: 'G2' } })
    await mutate({ action: 'updateIteration', projectId: p, iterationName: 'S1', data: { name: 'Sprint 1' } })
    const seen = (await events(p, 8)).length
    // newest first: the job the rename moved, the rename, the goal's label
    const [, rename, label] = await changes(p)
    const res = await mutate({ action: 'revert', projectId: p, changeIds: [rename!.changeId, label!.changeId] })
    const saved = (await changes(p)).slice(0, 3)
    // newest first: the goal set back, saved after the iteration's step (its rename taken back,
    // and the job it moved back with it, recorded as part of the revert: docs/history.md)
    expect(saved.map((c) => [c.action, c.target.id, c.fields])).toEqual([
      ['revert', 'goal-1', ['label']],
      ['revert', 'job-1', ['iteration']],
      ['revert', 'S1', ['name']],
    ])
    expect(new Set(saved.map((c) => c.requestId)).size).toBe(1)
    // every change the revert recorded, in the order its steps ran
    expect(res.changeIds).toEqual([saved[2]!.changeId, saved[1]!.changeId, saved[0]!.changeId])
    // the iteration's own event is not marked; the nodes' it moved or set back say "reverted"
    const last = (await events(p, seen + 3)).slice(seen)
    expect(last.map((e) => [e.event, e.iteration?.name ?? e.node.id, e.revert])).toEqual([
      ['iteration.updated', 'S1', undefined],
      ['node.updated', 'job-1', true],
      ['node.updated', 'goal-1', true],
    ])
  })

  it('advances the revision of a write with no event and no change (a claim renewed)', async () => {
    const p = await seed()
    const [claim] = (await mutate({ action: 'claim', projectId: p, agent: 'worker', nodeIds: ['job-1'] })).claims
    const tree = () => app.call('GET', `/api/v1/nodes?projectId=${p}`)
    const before = await tree()
    await mutate({ action: 'renewClaim', projectId: p, claimToken: claim.claimToken, leaseSeconds: 3600 })
    const after = await tree()
    const expiresAt = (res: { body: any }) => res.body.nodes.find((n: any) => n.id === 'job-1').claim.expiresAt
    // the cached read of the nodes was read again: it shows the renewed claim
    expect(expiresAt(after)).not.toBe(expiresAt(before))
  })
})
