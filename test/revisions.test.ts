import { afterAll, describe, expect, it } from 'bun:test'
import { seedPlan, startApp } from './helpers'

// live.md, 1: a rev on every node and iteration, ifRev on the writes of a target with the
// per-field rule, 409 stale_write with the conflicts and the targets as they are now.
const app = await startApp()
afterAll(() => app.close())

const mutate = (body: unknown, headers: Record<string, string> = {}) => app.call('POST', '/api/v1/mutate', { body, headers })
const ok = async (body: unknown, headers: Record<string, string> = {}) => {
  const res = await mutate(body, headers)
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}
const nodes = async (p: string) => (await app.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes as any[]
const node = async (p: string, id: string) => (await nodes(p)).find((n) => n.id === id)
const iterations = async (p: string) => (await app.call('GET', `/api/v1/iterations?projectId=${p}`)).body.iterations as any[]

const plan = () => seedPlan(app, [{ id: 'draft-j', type: 'job', parentId: 'draft-a', data: { label: 'J', iteration: 'S1' } }])

describe('rev', () => {
  it('is on every node, beside id, and moves with each change and only then', async () => {
    const p = await plan()
    const all = await nodes(p)
    for (const n of all) expect(n.rev).toEqual(expect.any(String))
    expect(Object.keys(all[0]).slice(0, 2)).toEqual(['id', 'rev'])
    expect(new Set(all.map((n) => n.rev)).size).toBe(all.length)
    const r0 = (await node(p, 'job-1')).rev
    const updated = await ok({ action: 'update', projectId: p, nodeId: 'job-1', data: { description: 'd' } })
    expect(updated.node.rev).not.toBe(r0)
    expect((await node(p, 'job-1')).rev).toBe(updated.node.rev)
    // a write that changes nothing is no change
    await ok({ action: 'update', projectId: p, nodeId: 'job-1', data: { description: 'd' } })
    expect((await node(p, 'job-1')).rev).toBe(updated.node.rev)
    // a claim is no change
    const claimed = await ok({ action: 'claim', projectId: p, nodeId: 'job-1', agent: 'a1' })
    expect(claimed.claims[0].rev).toBe(updated.node.rev)
    expect((await node(p, 'job-1')).rev).toBe(updated.node.rev)
  })

  it('never comes back: a delete and a restore give a new one', async () => {
    const p = await plan()
    const seen = new Set<string>()
    const r0 = (await node(p, 'job-1')).rev
    seen.add(r0)
    await ok({ action: 'delete', projectId: p, nodeId: 'job-1' })
    const restored = await ok({ action: 'restore', projectId: p, nodeId: 'job-1' })
    expect(restored.node.rev).toEqual(expect.any(String))
    expect(seen.has(restored.node.rev)).toBe(false)
    expect((await node(p, 'job-1')).rev).toBe(restored.node.rev)
    // the rev of before the delete is stale for every field now
    const res = await mutate({ action: 'update', projectId: p, nodeId: 'job-1', data: { label: 'x' }, ifRev: r0 })
    expect(res.status).toBe(409)
    expect(res.body.error).toBe('stale_write')
  })

  it('is in /tree, /ready, /mutate answers, batch results and events', async () => {
    const p = await plan()
    const j = await node(p, 'job-1')
    const tree = await app.call('GET', `/api/v1/tree?projectId=${p}&nodeId=goal-1&direction=down`)
    expect(tree.status).toBe(200)
    const flat = JSON.stringify(tree.body)
    expect(flat).toContain(`"rev":"${j.rev}"`)
    const ready = await app.call('GET', `/api/v1/ready?projectId=${p}`)
    expect(ready.status).toBe(200)
    expect(JSON.stringify(ready.body)).toContain(`"rev":"${j.rev}"`)
    const b = await ok({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'update', nodeId: 'job-1', data: { label: 'J2' } },
        { action: 'add', node: { type: 'task', data: { label: 'T' } } },
      ],
    })
    expect(b.results[0].node.rev).toEqual(expect.any(String))
    expect(b.results[1].node.rev).toEqual(expect.any(String))
    expect((await node(p, 'job-1')).rev).toBe(b.results[0].node.rev)
    expect((await node(p, b.results[1].nodeId)).rev).toBe(b.results[1].node.rev)
    const events = await app.call('GET', `/api/v1/events?projectId=${p}&limit=200`)
    const last = events.body.events.filter((e: any) => e.node?.id === 'job-1').at(-1)
    expect(last.node.rev).toBe(b.results[0].node.rev)
    const added = events.body.events.find((e: any) => e.event === 'node.added' && e.node.id === b.results[1].nodeId)
    expect(added.node.rev).toBe(b.results[1].node.rev)
  })

  it('is on iterations and moves with their changes', async () => {
    const p = await plan()
    const before = (await iterations(p)).find((i) => i.name === 'S1')
    expect(before.rev).toEqual(expect.any(String))
    const up = await ok({ action: 'updateIteration', projectId: p, iterationName: 'S1', data: { gitTags: ['v1'] } })
    expect(up.iteration.rev).not.toBe(before.rev)
    expect((await iterations(p)).find((i) => i.name === 'S1').rev).toBe(up.iteration.rev)
  })
})

describe('ifRev', () => {
  it('refuses a write of a field changed since, with the conflict and the node as it is now', async () => {
    const p = await plan()
    const r0 = (await node(p, 'job-1')).rev
    const theirs = await ok(
      { action: 'update', projectId: p, nodeId: 'job-1', data: { description: 'agent text' } },
      { 'x-agent-id': 'bot/1', 'x-arbor-via': 'mcp' },
    )
    const res = await mutate({ action: 'update', projectId: p, nodeId: 'job-1', data: { description: 'person text' }, ifRev: r0 })
    expect(res.status).toBe(409)
    const changeId = res.body.conflicts[0].changeId
    expect(res.body).toMatchObject({
      error: 'stale_write',
      conflicts: [
        {
          target: { kind: 'node', id: 'job-1' },
          field: 'description',
          yours: 'person text',
          theirs: 'agent text',
          changeId: expect.any(String),
          actor: { userName: 'owner', agent: 'bot/1', via: 'mcp' },
          at: expect.stringMatching(/Z$/),
        },
      ],
      current: [{ id: 'job-1', rev: theirs.node.rev, data: { description: 'agent text' } }],
      _meta: { _tip: expect.any(String) },
    })
    const hist = await app.call('GET', `/api/v1/history?projectId=${p}&nodeId=job-1&limit=1`)
    expect(changeId).toBe(hist.body.changes[0].changeId)
    // nothing written
    expect((await node(p, 'job-1')).data.description).toBe('agent text')
    // retried with the new rev, it lands
    const retried = await ok({
      action: 'update',
      projectId: p,
      nodeId: 'job-1',
      data: { description: 'person text' },
      ifRev: theirs.node.rev,
    })
    expect(retried.node.data.description).toBe('person text')
  })

  it('lets a write of another field land on the current node', async () => {
    const p = await plan()
    const r0 = (await node(p, 'job-1')).rev
    await ok({ action: 'update', projectId: p, nodeId: 'job-1', data: { description: 'agent text' } })
    const mine = await ok({ action: 'update', projectId: p, nodeId: 'job-1', data: { label: 'Renamed' }, ifRev: r0 })
    expect(mine.node.data).toMatchObject({ label: 'Renamed', description: 'agent text' })
    expect(mine.node.rev).toBe((await node(p, 'job-1')).rev)
  })

  it('treats a move as a write of parentId', async () => {
    const p = await plan()
    await ok({ action: 'add', projectId: p, node: { type: 'approach', parentId: 'need-1', data: { label: 'A2' } } })
    await ok({ action: 'add', projectId: p, node: { type: 'approach', parentId: 'need-1', data: { label: 'A3' } } })
    const r0 = (await node(p, 'job-1')).rev
    await ok({ action: 'update', projectId: p, nodeId: 'job-1', parentId: 'approach-2' })
    const res = await mutate({ action: 'update', projectId: p, nodeId: 'job-1', parentId: 'approach-3', ifRev: r0 })
    expect(res.status).toBe(409)
    expect(res.body.conflicts).toEqual([expect.objectContaining({ field: 'parentId', yours: 'approach-3', theirs: 'approach-2' })])
    // a label write based on r0 is not about parentId
    expect((await mutate({ action: 'update', projectId: p, nodeId: 'job-1', data: { label: 'L' }, ifRev: r0 })).status).toBe(200)
  })

  it('refuses a delete when anything changed, one conflict per field, yours null', async () => {
    const p = await plan()
    const r0 = (await node(p, 'job-1')).rev
    await ok({ action: 'update', projectId: p, nodeId: 'job-1', data: { description: 'x', label: 'L' } })
    const res = await mutate({ action: 'delete', projectId: p, nodeId: 'job-1', ifRev: r0 })
    expect(res.status).toBe(409)
    expect(res.body.conflicts.map((c: any) => c.field).sort()).toEqual(['description', 'label'])
    for (const c of res.body.conflicts) expect(c.yours).toBeNull()
    expect(await node(p, 'job-1')).toBeDefined()
    const now = (await node(p, 'job-1')).rev
    expect((await mutate({ action: 'delete', projectId: p, nodeId: 'job-1', ifRev: now })).status).toBe(200)
  })

  it('counts every field as changed for a rev the node never had', async () => {
    const p = await plan()
    const other = (await node(p, 'goal-1')).rev
    for (const ifRev of ['nonsense', other, 'zzzzzz-0000']) {
      const res = await mutate({ action: 'update', projectId: p, nodeId: 'job-1', data: { label: 'a', description: 'b' }, ifRev })
      expect(res.status).toBe(409)
      expect(res.body.conflicts.map((c: any) => c.field).sort()).toEqual(['description', 'label'])
      const latest = (await app.call('GET', `/api/v1/history?projectId=${p}&nodeId=job-1&limit=1`)).body.changes[0]
      for (const c of res.body.conflicts) expect(c.changeId).toBe(latest.changeId)
    }
    const bad = await mutate({ action: 'update', projectId: p, nodeId: 'job-1', data: { label: 'a' }, ifRev: 5 })
    expect(bad.status).toBe(400)
  })

  it('refuses a whole batch, and an idempotent replay answers the same 409', async () => {
    const p = await plan()
    const r0 = (await node(p, 'job-1')).rev
    await ok({ action: 'update', projectId: p, nodeId: 'job-1', data: { label: 'theirs' } })
    const body = {
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'add', node: { type: 'task', data: { label: 'new' } } },
        { action: 'update', nodeId: 'goal-1', data: { label: 'G!' } },
        { action: 'update', nodeId: 'job-1', data: { label: 'mine' }, ifRev: r0 },
      ],
    }
    const headers = { 'idempotency-key': `k-${Math.random()}` }
    const first = await mutate(body, headers)
    expect(first.status).toBe(409)
    expect(first.body.conflicts).toEqual([expect.objectContaining({ field: 'label', yours: 'mine', theirs: 'theirs' })])
    expect((await nodes(p)).some((n) => n.data.label === 'new' || n.data.label === 'G!')).toBe(false)
    const again = await mutate(body, headers)
    expect(again.status).toBe(409)
    expect(again.body).toEqual(first.body)
    // an entry that updates a node an earlier entry of the same batch changed is checked against the committed node
    const r1 = (await node(p, 'job-1')).rev
    const both = await ok({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'update', nodeId: 'job-1', data: { label: 'one' }, ifRev: r1 },
        { action: 'update', nodeId: 'job-1', data: { label: 'two' }, ifRev: r1 },
      ],
    })
    expect(both.results[1].node.data.label).toBe('two')
  })

  it('holds for updateIteration and deleteIteration', async () => {
    const p = await plan()
    const r0 = (await iterations(p)).find((i) => i.name === 'S2').rev
    await ok({ action: 'updateIteration', projectId: p, iterationName: 'S2', data: { gitTags: ['t'] } })
    const stale = await mutate({ action: 'updateIteration', projectId: p, iterationName: 'S2', data: { gitTags: ['u'] }, ifRev: r0 })
    expect(stale.status).toBe(409)
    expect(stale.body.conflicts).toEqual([
      expect.objectContaining({ target: { kind: 'iteration', id: 'S2' }, field: 'gitTags', yours: ['u'], theirs: ['t'] }),
    ])
    expect(stale.body.current[0]).toMatchObject({ name: 'S2', gitTags: ['t'], rev: expect.any(String) })
    expect(
      (await mutate({ action: 'updateIteration', projectId: p, iterationName: 'S2', data: { status: 'done' }, ifRev: r0 })).status,
    ).toBe(200)
    const del = await mutate({ action: 'deleteIteration', projectId: p, iterationName: 'S2', ifRev: r0 })
    expect(del.status).toBe(409)
    expect(del.body.conflicts.map((c: any) => c.field).sort()).toEqual(['gitTags', 'status'])
    const now = (await iterations(p)).find((i) => i.name === 'S2').rev
    expect((await mutate({ action: 'deleteIteration', projectId: p, iterationName: 'S2', ifRev: now })).status).toBe(200)
  })

  it('lets exactly one of ten concurrent writers with one ifRev win', async () => {
    const p = await plan()
    const r0 = (await node(p, 'job-1')).rev
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        mutate({ action: 'update', projectId: p, nodeId: 'job-1', data: { label: `w${i}` }, ifRev: r0 }),
      ),
    )
    const statuses = answers.map((a) => a.status).sort()
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409, 409, 409])
    const winner = answers.find((a) => a.status === 200)!
    expect((await node(p, 'job-1')).data.label).toBe(winner.body.node.data.label)
    for (const a of answers.filter((x) => x.status === 409)) expect(a.body.conflicts[0].theirs).toBe(winner.body.node.data.label)
  })
})
