import { afterAll, describe, expect, it } from 'bun:test'
import { startApp, type TestApp } from './helpers'
import { until } from './receiver'

// Ready work and claims (agents-and-app.md, 1 and 2), through the HTTP handler.
const app = await startApp()
afterAll(() => app.close())

const mutate = (body: Record<string, unknown>, key?: string) => app.call('POST', '/api/v1/mutate', { body, key })
const ready = (p: string, query = '') => app.call('GET', `/api/v1/ready?projectId=${p}${query}`)
const ids = (res: { body: any }) => res.body.items.map((i: any) => i.node.id)

/**
 * S1 (current) and S2; goal-1 (focus) > need-1 > approach-1 {job-1 in S2, job-2 in S1} and
 * approach-2 blockedBy approach-1 {job-3 in S1}; goal-2 > need-2 > approach-3 {job-4 in S1};
 * task-1 an urgent do-it task in Later, task-2 a memo.
 */
async function seed(a: TestApp = app): Promise<string> {
  const p = await a.project()
  const res = await a.call('POST', '/api/v1/mutate', {
    body: {
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'addIteration', iteration: { name: 'S1' } },
        { action: 'addIteration', iteration: { name: 'S2' } },
        { action: 'add', node: { id: 'draft-g1', type: 'goal', data: { label: 'G1', goalStatus: 'focus' } } },
        { action: 'add', node: { id: 'draft-n1', type: 'need', parentId: 'draft-g1', data: { label: 'N1' } } },
        { action: 'add', node: { id: 'draft-a1', type: 'approach', parentId: 'draft-n1', data: { label: 'A1' } } },
        { action: 'add', node: { id: 'draft-a2', type: 'approach', parentId: 'draft-n1', data: { label: 'A2', blockedBy: ['draft-a1'] } } },
        { action: 'add', node: { id: 'draft-g2', type: 'goal', data: { label: 'G2' } } },
        { action: 'add', node: { id: 'draft-n2', type: 'need', parentId: 'draft-g2', data: { label: 'N2' } } },
        { action: 'add', node: { id: 'draft-a3', type: 'approach', parentId: 'draft-n2', data: { label: 'A3' } } },
        { action: 'add', node: { type: 'job', parentId: 'draft-a1', data: { label: 'J1', iteration: 'S2' } } },
        { action: 'add', node: { type: 'job', parentId: 'draft-a1', data: { label: 'J2', iteration: 'S1' } } },
        { action: 'add', node: { type: 'job', parentId: 'draft-a2', data: { label: 'J3', iteration: 'S1' } } },
        { action: 'add', node: { type: 'job', parentId: 'draft-a3', data: { label: 'J4', iteration: 'S1' } } },
        { action: 'add', node: { type: 'task', data: { label: 'Fix the login outage' } } },
        { action: 'add', node: { type: 'task', data: { label: 'Idea: dark mode' } } },
      ],
    },
  })
  if (res.status !== 200) throw new Error(JSON.stringify(res.body))
  // classification is the loop's; set it here so the test does not wait for it
  await a.call('POST', '/api/v1/mutate', {
    body: { action: 'update', projectId: p, nodeId: 'task-1', data: { kind: 'do-it', urgent: true } },
  })
  await a.call('POST', '/api/v1/mutate', { body: { action: 'update', projectId: p, nodeId: 'task-2', data: { kind: 'memo' } } })
  return p
}

describe('GET /ready', () => {
  it('lists urgent tasks, then the current iteration, focus goals first, then other iterations; blocked work is counted', async () => {
    const p = await seed()
    const res = await ready(p)
    expect(res.status).toBe(200)
    expect(ids(res)).toEqual(['task-1', 'job-2', 'job-4', 'job-1'])
    expect(res.body._meta).toEqual({ total: 4, claimed: 0, blocked: 1, _tip: expect.any(String) })
    expect(res.body.items[1]).toEqual({
      node: { id: 'job-2', rev: expect.any(String), type: 'job', parentId: 'approach-1', data: { label: 'J2', iteration: 'S1' } },
      ancestors: [
        { id: 'goal-1', type: 'goal', label: 'G1' },
        { id: 'need-1', type: 'need', label: 'N1' },
        { id: 'approach-1', type: 'approach', label: 'A1' },
      ],
      blockedBy: [],
    })
  })

  it('filters by iteration and limits, counting beyond the limit', async () => {
    const p = await seed()
    expect(ids(await ready(p, '&iteration=S1'))).toEqual(['job-2', 'job-4'])
    const limited = await ready(p, '&limit=1')
    expect(ids(limited)).toEqual(['task-1'])
    expect(limited.body._meta.total).toBe(4)
    expect((await ready(p, '&limit=0')).body).toEqual({ success: false, errors: ['limit must be an integer from 1 to 100'] })
  })

  it('makes blocked work ready once every job of the blocker is done, and says so in _meta.unblocked', async () => {
    const p = await seed()
    const first = await mutate({ action: 'update', projectId: p, nodeId: 'job-1', data: { status: 'done' } })
    expect(first.body._meta.unblocked).toEqual([])
    const second = await mutate({ action: 'update', projectId: p, nodeId: 'job-2', data: { status: 'done' } })
    expect(second.body._meta.unblocked).toEqual(['job-3'])
    expect(ids(await ready(p))).toEqual(['task-1', 'job-3', 'job-4'])
  })

  it('clears a blocker that is resolved, retired or deleted; a retired approach or a done goal blocks its own jobs', async () => {
    const p = await seed()
    const res = await mutate({
      action: 'batch',
      projectId: p,
      mutations: [{ action: 'update', nodeId: 'approach-1', data: { approachStatus: 'retired' } }],
    })
    expect(res.body._meta.unblocked).toEqual(['job-3'])
    expect(ids(await ready(p))).toEqual(['task-1', 'job-3', 'job-4'])
    await mutate({ action: 'update', projectId: p, nodeId: 'goal-2', data: { goalStatus: 'done' } })
    expect(ids(await ready(p))).toEqual(['task-1', 'job-3'])
    const p2 = await seed()
    const del = await mutate({ action: 'delete', projectId: p2, nodeId: 'approach-1' })
    expect(del.body._meta.unblocked).toEqual(['job-3'])
  })

  it('refuses a project the key cannot read', async () => {
    const p = await seed()
    const other = await app.user({ tier: 'team' })
    expect((await app.call('GET', `/api/v1/ready?projectId=${p}`, { key: other.key })).status).toBe(403)
  })
})

describe('claim', () => {
  it('claims spread first: one per approach, a task its own, then a second per approach', async () => {
    const p = await seed()
    await mutate({ action: 'update', projectId: p, nodeId: 'job-1', data: { iteration: 'S1' } })
    // ready order: task-1, job-1, job-2 (approach-1), job-4 (approach-3)
    const res = await mutate({ action: 'claim', projectId: p, agent: 'bot@a', count: 3 })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      success: true,
      claims: ['task-1', 'job-1', 'job-4'].map((nodeId) => ({
        nodeId,
        rev: expect.any(String),
        agent: 'bot@a',
        claimToken: expect.stringMatching(/^clm_[A-Za-z0-9_-]{43}$/),
        expiresAt: expect.any(String),
      })),
      _meta: { _tip: expect.any(String) },
    })
    const lease = new Date(res.body.claims[0].expiresAt).getTime() - Date.now()
    expect(lease).toBeGreaterThan(890_000)
    expect(lease).toBeLessThanOrEqual(900_000)
    const after = await ready(p)
    expect(ids(after)).toEqual(['job-2'])
    expect(after.body._meta).toMatchObject({ total: 1, claimed: 3, blocked: 1 })
    const empty = await mutate({ action: 'claim', projectId: p, agent: 'bot@b', count: 5 })
    expect(empty.body.claims.map((c: any) => c.nodeId)).toEqual(['job-2'])
    const none = await mutate({ action: 'claim', projectId: p, agent: 'bot@b' })
    expect(none.body).toEqual({ success: true, claims: [], _meta: { _tip: expect.any(String) } })
  })

  it('claims listed items all or none, naming why each refused one is not claimable', async () => {
    const p = await seed()
    const held = await mutate({ action: 'claim', projectId: p, agent: 'first', nodeIds: ['job-4'], leaseSeconds: 60 })
    expect(held.body.claims).toEqual([
      { nodeId: 'job-4', rev: expect.any(String), agent: 'first', claimToken: expect.any(String), expiresAt: expect.any(String) },
    ])
    await mutate({ action: 'update', projectId: p, nodeId: 'job-1', data: { status: 'done' } })
    const res = await mutate({ action: 'claim', projectId: p, agent: 'second', nodeIds: ['job-2', 'job-4', 'job-1', 'job-3', 'goal-1'] })
    expect(res.status).toBe(409)
    expect(res.body).toEqual({
      error: 'not_claimable',
      message: expect.any(String),
      items: [
        { nodeId: 'job-4', reason: 'claimed' },
        { nodeId: 'job-1', reason: 'done' },
        { nodeId: 'job-3', reason: 'blocked' },
        { nodeId: 'goal-1', reason: 'not_work' },
      ],
      holder: { agent: 'first', expiresAt: held.body.claims[0].expiresAt },
    })
    // nothing was claimed: job-2 is still ready
    expect(ids(await ready(p))).toContain('job-2')
    expect((await mutate({ action: 'claim', projectId: p, agent: 'x', nodeIds: ['job-99'] })).status).toBe(404)
  })

  it('checks its body: agent, count, leaseSeconds', async () => {
    const p = await seed()
    const errors = async (body: Record<string, unknown>) => (await mutate({ action: 'claim', projectId: p, ...body })).body.errors
    expect(await errors({})).toEqual(['agent is required: a name of 1 to 100 characters (e.g. claude-code@laptop)'])
    expect(await errors({ agent: 'x'.repeat(101) })).toEqual(['agent is required: a name of 1 to 100 characters (e.g. claude-code@laptop)'])
    expect(await errors({ agent: 'a', count: 21 })).toEqual(['count must be an integer from 1 to 20'])
    expect(await errors({ agent: 'a', leaseSeconds: 29 })).toEqual(['leaseSeconds must be an integer from 30 to 86400'])
  })

  it('gives 50 concurrent claims of one item each over 10 ready items 10 distinct items and 40 empty answers', async () => {
    const p = await app.project()
    await mutate({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
        { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
        ...Array.from({ length: 10 }, (_, i) => ({ action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: `J${i}` } } })),
      ],
    })
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => mutate({ action: 'claim', projectId: p, agent: `agent-${i}`, count: 1 })),
    )
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200))
    const claimed = answers.flatMap((a) => a.body.claims.map((c: any) => c.nodeId))
    expect(claimed.length).toBe(10)
    expect(new Set(claimed).size).toBe(10)
    expect(answers.filter((a) => a.body.claims.length === 0).length).toBe(40)
  })
})

describe('claims racing writes', () => {
  it('never claims an item while its holder marks it done: the claim waits for the write and sees it done', async () => {
    const p = await app.project()
    await mutate({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
        { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
        ...Array.from({ length: 10 }, (_, i) => ({ action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: `J${i}` } } })),
      ],
    })
    const held = (await mutate({ action: 'claim', projectId: p, agent: 'holder', count: 10 })).body.claims
    expect(held.length).toBe(10)
    const [dones, claims] = await Promise.all([
      Promise.all(
        held.map((c: any) =>
          mutate({ action: 'update', projectId: p, nodeId: c.nodeId, claimToken: c.claimToken, data: { status: 'done' } }),
        ),
      ),
      Promise.all(Array.from({ length: 30 }, (_, i) => mutate({ action: 'claim', projectId: p, agent: `late-${i}`, count: 1 }))),
    ])
    expect(dones.map((d) => d.status)).toEqual(Array(10).fill(200))
    expect(claims.flatMap((c) => c.body.claims)).toEqual([])
  })
})

describe('_meta.unblocked under concurrent writes', () => {
  it('names a job made ready by two concurrent writes exactly once', async () => {
    const p = await seed()
    // approach-1 blocks job-3; its jobs job-1 and job-2 are marked done at the same time
    const answers = await Promise.all(
      ['job-1', 'job-2'].map((nodeId) => mutate({ action: 'update', projectId: p, nodeId, data: { status: 'done' } })),
    )
    expect(answers.flatMap((a) => a.body._meta.unblocked)).toEqual(['job-3'])
  })
})

describe('claim tokens on writes', () => {
  it('lets the holder write with its token, refuses a stale token with 409 claim_lost, never refuses a write without one', async () => {
    const p = await seed()
    const [c] = (await mutate({ action: 'claim', projectId: p, agent: 'worker', nodeIds: ['job-2'] })).body.claims
    // a person edits freely
    expect((await mutate({ action: 'update', projectId: p, nodeId: 'job-2', data: { description: 'by hand' } })).status).toBe(200)
    expect(
      (await mutate({ action: 'update', projectId: p, nodeId: 'job-2', claimToken: c.claimToken, data: { description: 'by the agent' } }))
        .status,
    ).toBe(200)
    const released = await mutate({ action: 'releaseClaim', projectId: p, claimToken: c.claimToken })
    expect(released.body).toEqual({ success: true, released: { nodeId: 'job-2' } })
    const [d] = (await mutate({ action: 'claim', projectId: p, agent: 'other', nodeIds: ['job-2'] })).body.claims
    const stale = await mutate({ action: 'update', projectId: p, nodeId: 'job-2', claimToken: c.claimToken, data: { status: 'done' } })
    expect(stale.status).toBe(409)
    expect(stale.body).toEqual({
      error: 'claim_lost',
      message: expect.any(String),
      holder: { agent: 'other', expiresAt: d.expiresAt },
      _meta: { _tip: expect.any(String) },
    })
    const inBatch = await mutate({
      action: 'batch',
      projectId: p,
      mutations: [{ action: 'delete', nodeId: 'job-2', claimToken: c.claimToken }],
    })
    expect(inBatch.status).toBe(409)
    expect(inBatch.body.error).toBe('claim_lost')
    expect((await mutate({ action: 'renewClaim', projectId: p, claimToken: c.claimToken })).body).toEqual({
      error: 'claim_lost',
      message: 'This claimToken is unknown, expired or released',
      _meta: { _tip: expect.any(String) },
    })
    expect((await mutate({ action: 'releaseClaim', projectId: p, claimToken: 'clm_unknown' })).status).toBe(409)
  })

  it('ends the claim when the item is marked done, and when it is deleted', async () => {
    const p = await seed()
    const [c] = (await mutate({ action: 'claim', projectId: p, agent: 'worker', nodeIds: ['job-2'] })).body.claims
    const done = await mutate({ action: 'update', projectId: p, nodeId: 'job-2', claimToken: c.claimToken, data: { status: 'done' } })
    expect(done.status).toBe(200)
    expect((await mutate({ action: 'renewClaim', projectId: p, claimToken: c.claimToken })).status).toBe(409)
    const [e] = (await mutate({ action: 'claim', projectId: p, agent: 'worker', nodeIds: ['job-4'] })).body.claims
    await mutate({ action: 'delete', projectId: p, nodeId: 'job-4' })
    expect((await mutate({ action: 'releaseClaim', projectId: p, claimToken: e.claimToken })).status).toBe(409)
  })

  it('shows live claims on /nodes and /tree beside data, never the token, and lets them expire without a write', async () => {
    const p = await seed()
    const [c] = (await mutate({ action: 'claim', projectId: p, agent: 'worker', nodeIds: ['job-2'], leaseSeconds: 30 })).body.claims
    const nodes = await app.call('GET', `/api/v1/nodes?projectId=${p}&type=job`)
    const job2 = nodes.body.nodes.find((n: any) => n.id === 'job-2')
    expect(job2).toEqual({
      id: 'job-2',
      rev: expect.any(String),
      type: 'job',
      parentId: 'approach-1',
      data: { label: 'J2', iteration: 'S1' },
      claim: { agent: 'worker', expiresAt: c.expiresAt },
    })
    expect(JSON.stringify(nodes.body)).not.toContain(c.claimToken)
    const tree = await app.call('GET', `/api/v1/tree?projectId=${p}&nodeId=approach-1&direction=down`)
    expect(tree.body.nodes.find((n: any) => n.id === 'job-2').claim).toEqual({ agent: 'worker', expiresAt: c.expiresAt })
    const renewed = await mutate({ action: 'renewClaim', projectId: p, claimToken: c.claimToken, leaseSeconds: 60 })
    expect(renewed.body).toEqual({
      success: true,
      claim: { nodeId: 'job-2', agent: 'worker', claimToken: c.claimToken, expiresAt: expect.any(String) },
    })
    // the clock moves past the lease: no write, and the claim is gone everywhere
    const realNow = app.deps.now
    app.deps.now = () => new Date(Date.now() + 61_000)
    try {
      const later = await app.call('GET', `/api/v1/nodes?projectId=${p}&type=job`)
      expect(later.body.nodes.find((n: any) => n.id === 'job-2').claim).toBeUndefined()
      expect(ids(await ready(p))).toContain('job-2')
      const stale = await mutate({
        action: 'update',
        projectId: p,
        nodeId: 'job-2',
        claimToken: c.claimToken,
        data: { description: 'late' },
      })
      expect(stale.body).toEqual({ error: 'claim_lost', message: expect.any(String), _meta: { _tip: expect.any(String) } })
      expect((await mutate({ action: 'claim', projectId: p, agent: 'next', nodeIds: ['job-2'] })).body.claims[0].agent).toBe('next')
    } finally {
      app.deps.now = realNow
    }
  })

  it('never shows claims in the OKF export or a share view', async () => {
    const p = await seed()
    await mutate({ action: 'claim', projectId: p, agent: 'secret-agent', nodeIds: ['job-2'] })
    const exported = await app.call('GET', `/api/v1/export-okf?projectId=${p}`)
    expect(exported.status).toBe(200)
    expect(JSON.stringify(exported.body)).not.toContain('secret-agent')
    const share = await app.call('POST', '/api/v1/share', { body: { projectId: p } })
    const view = await app.call('GET', `/api/v1/public/share/${share.body.token}`, { key: null })
    expect(view.status).toBe(200)
    expect(JSON.stringify(view.body)).not.toContain('secret-agent')
  })
})

describe('claim events', () => {
  it('writes node.claimed and node.released to GET /events', async () => {
    const p = await seed()
    const [c] = (await mutate({ action: 'claim', projectId: p, agent: 'worker', nodeIds: ['job-2'] })).body.claims
    await mutate({ action: 'releaseClaim', projectId: p, claimToken: c.claimToken })
    const res = await until(async () => {
      const r = await app.call('GET', `/api/v1/events?projectId=${p}&limit=500`)
      const claims = r.body.events.filter((e: any) => e.event.startsWith('node.claimed') || e.event === 'node.released')
      return claims.length >= 2 ? claims : null
    }, 'claim events')
    // history.md, 4: the actor is the claim's agent and its user
    const actor = { userId: expect.stringMatching(/^usr_/), userName: 'owner', agent: 'worker', via: 'api' }
    expect(res).toEqual([
      {
        event: 'node.claimed',
        project_id: p,
        timestamp: expect.any(String),
        nodeId: 'job-2',
        agent: 'worker',
        expiresAt: c.expiresAt,
        actor,
      },
      { event: 'node.released', project_id: p, timestamp: expect.any(String), nodeId: 'job-2', agent: 'worker', actor },
    ])
  })
})
