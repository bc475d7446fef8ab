import { afterAll, describe, expect, it } from 'bun:test'
import { deliverDue } from '../src/webhooks/delivery'
import { seedPlan, startApp } from './helpers'
import { startReceiver, until } from './receiver'

// live.md §5: proposals. propose (checked as a batch, nothing written), list and read with a fresh
// preview and conflicts, applyProposal against baseRevs (409 stale_write unless force), reject,
// withdraw by the author only, closed ones refused, events, history, idempotency. Through HTTP,
// on PGlite, and on PostgreSQL with TEST_DATABASE_URL.
const app = await startApp({ WEBHOOK_ALLOW_INSECURE: 'true' })
afterAll(() => app.close())

const mutate = (body: unknown, opts: { key?: string; headers?: Record<string, string> } = {}) =>
  app.call('POST', '/api/v1/mutate', { body, ...opts })
const ok = async (body: unknown, opts: { key?: string; headers?: Record<string, string> } = {}) => {
  const res = await mutate(body, opts)
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}
const nodes = async (p: string) => (await app.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes as any[]
const node = async (p: string, id: string) => (await nodes(p)).find((n) => n.id === id)
const plan = () =>
  seedPlan(app, [
    { id: 'draft-j', type: 'job', parentId: 'draft-a', data: { label: 'J', iteration: 'S1' } },
    { id: 'draft-k', type: 'job', parentId: 'draft-a', data: { label: 'K', iteration: 'S1' } },
  ])

/** A member of `p` (the proposer in most tests): a user of its own, added by the owner. */
async function member(p: string) {
  const u = await app.user({ tier: 'team' })
  const res = await app.call('POST', '/api/v1/members', { body: { projectId: p, userId: u.id } })
  if (res.status >= 300) throw new Error(`member: ${res.status} ${JSON.stringify(res.body)}`)
  return u
}

const proposal = (p: string, mutations: unknown[], extra: Record<string, unknown> = {}) => ({
  action: 'propose',
  projectId: p,
  title: 'Reshape the plan',
  mutations,
  ...extra,
})

describe('propose', () => {
  it('checks the batch, writes nothing to the tree, and answers the proposal with its preview and baseRevs', async () => {
    const p = await plan()
    const agent = await member(p)
    const before = await nodes(p)
    const j = before.find((n) => n.id === 'job-1')
    const body = await ok(
      proposal(
        p,
        [
          { action: 'add', node: { id: 'draft-x', type: 'job', parentId: 'approach-1', data: { label: 'New job', iteration: 'S2' } } },
          { action: 'add', node: { type: 'task', data: { label: 'Its task' } } },
          { action: 'update', nodeId: 'job-1', data: { label: 'J renamed' } },
          { action: 'delete', nodeId: 'job-2' },
        ],
        { note: 'from the planner' },
      ),
      { key: agent.key, headers: { 'x-agent-id': 'planner/1' } },
    )
    expect(body.success).toBe(true)
    const pr = body.proposal
    expect(pr.proposalId).toMatch(/^prp_/)
    expect(pr).toMatchObject({ projectId: p, status: 'open', title: 'Reshape the plan', note: 'from the planner' })
    expect(pr.actor).toMatchObject({ userId: agent.id, agent: 'planner/1', via: 'api' })
    expect(Date.parse(pr.createdAt)).not.toBeNaN()
    expect(pr.mutations).toHaveLength(4)
    const changes = pr.preview.changes
    // an added node's target.id is the id the batch would give it
    expect(changes.find((c: any) => c.action === 'add' && c.after.data.label === 'New job').target).toEqual({
      kind: 'node',
      id: 'job-3',
      type: 'job',
    })
    expect(changes.find((c: any) => c.action === 'add' && c.after.data.label === 'Its task')).toMatchObject({
      target: { kind: 'node', id: 'task-1', type: 'task' },
      before: null,
      after: { parentId: null },
    })
    expect(changes.find((c: any) => c.action === 'update')).toMatchObject({
      target: { kind: 'node', id: 'job-1' },
      before: { data: { label: 'J' } },
      after: { data: { label: 'J renamed' } },
    })
    expect(changes.find((c: any) => c.action === 'delete')).toMatchObject({ target: { id: 'job-2' }, after: null })
    // an iteration it adds, in the shape the history keeps
    const withIteration = await ok(
      proposal(p, [
        { action: 'addIteration', iteration: { name: 'S9' } },
        { action: 'add', node: { type: 'job', parentId: 'approach-1', data: { label: 'In S9', iteration: 'S9' } } },
      ]),
    )
    expect(withIteration.proposal.preview.changes[0]).toEqual({
      target: { kind: 'iteration', id: 'S9' },
      action: 'addIteration',
      before: null,
      after: { name: 'S9', status: 'active', sortOrder: expect.any(Number), gitTags: [] },
    })
    expect((await app.call('GET', `/api/v1/iterations?projectId=${p}`)).body.iterations.some((i: any) => i.name === 'S9')).toBe(false)
    expect(pr.baseRevs).toEqual({ 'job-1': j.rev, 'job-2': before.find((n) => n.id === 'job-2').rev })
    // nothing of it was written
    expect(await nodes(p)).toEqual(before)
    expect((await app.call('GET', `/api/v1/history?projectId=${p}&agent=planner%2F1`)).body.changes).toEqual([])
    // the ids it previewed are still free: a write now takes them
    const added = await ok({ action: 'add', projectId: p, node: { type: 'job', parentId: 'approach-1', data: { label: 'Mine' } } })
    expect(added.node.id).toBe('job-3')
  })

  it('refuses a bad entry with the 400 of batch, and bad title, note and counts', async () => {
    const p = await plan()
    const bad = await mutate(proposal(p, [{ action: 'update', nodeId: 'job-99', data: { label: 'x' } }]))
    const batch = await mutate({ action: 'batch', projectId: p, mutations: [{ action: 'update', nodeId: 'job-99', data: { label: 'x' } }] })
    expect(bad.status).toBe(batch.status)
    expect(bad.body).toEqual(batch.body)
    const badType = await mutate(proposal(p, [{ action: 'add', node: { type: 'task', parentId: 'goal-1', data: { label: 'x' } } }]))
    expect(badType.status).toBe(400)
    expect(JSON.stringify(badType.body)).toContain('mutations[0]')
    const none = await mutate(proposal(p, []))
    expect([none.status, none.body.errors]).toEqual([
      400,
      ['mutations is required: a non-empty array of add, update, delete or addIteration entries (as a batch)'],
    ])
    const many = Array.from({ length: 501 }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `g${i}` } } }))
    const tooMany = await mutate(proposal(p, many))
    expect(tooMany.status).toBe(400)
    expect(tooMany.body.errors).toEqual(['mutations has 501 entries; at most 500 are allowed per proposal'])
    expect((await mutate(proposal(p, [{ action: 'delete', nodeId: 'job-1' }], { title: '' }))).status).toBe(400)
    expect((await mutate(proposal(p, [{ action: 'delete', nodeId: 'job-1' }], { title: 'x'.repeat(201) }))).status).toBe(400)
    expect((await mutate(proposal(p, [{ action: 'delete', nodeId: 'job-1' }], { title: 'x'.repeat(200) }))).status).toBe(200)
    expect((await mutate(proposal(p, [{ action: 'delete', nodeId: 'job-1' }], { note: 'n'.repeat(2001) }))).status).toBe(400)
    expect((await mutate(proposal(p, [{ action: 'delete', nodeId: 'job-1' }], { note: 'n'.repeat(2000) }))).status).toBe(200)
    expect(await node(p, 'job-1')).toBeDefined()
    // nothing stored by the refusals
    expect((await app.call('GET', `/api/v1/proposals?projectId=${p}`)).body.proposals).toHaveLength(2)
  })
})

describe('applyProposal', () => {
  it('applies it as one batch; the changes name the proposal and its author, the proposal is applied', async () => {
    const p = await plan()
    const agent = await member(p)
    const made = await ok(
      proposal(p, [
        { action: 'add', node: { id: 'draft-x', type: 'job', parentId: 'approach-1', data: { label: 'New job', iteration: 'S2' } } },
        { action: 'update', nodeId: 'job-1', data: { label: 'J renamed' } },
      ]),
      { key: agent.key, headers: { 'x-agent-id': 'planner/1' } },
    )
    const id = made.proposal.proposalId
    const applied = await ok({ action: 'applyProposal', projectId: p, proposalId: id })
    expect(applied.proposal).toMatchObject({ proposalId: id, status: 'applied', appliedBy: { userName: expect.any(String) } })
    expect(applied.proposal.appliedBy.userId).not.toBe(agent.id)
    expect(Date.parse(applied.proposal.appliedAt)).not.toBeNaN()
    expect(applied.proposal.changeIds).toHaveLength(2)
    expect((await node(p, 'job-1')).data.label).toBe('J renamed')
    expect((await node(p, 'job-3')).data.label).toBe('New job')
    const history = (await app.call('GET', `/api/v1/history?projectId=${p}&limit=2`)).body.changes
    expect(history.map((c: any) => c.changeId).sort()).toEqual([...applied.proposal.changeIds].sort())
    for (const c of history) {
      expect(c.proposal).toEqual({ proposalId: id, actor: made.proposal.actor })
      expect(c.actor.userId).not.toBe(agent.id)
    }
    // the history of other writes names no proposal
    const older = (await app.call('GET', `/api/v1/history?projectId=${p}&limit=10`)).body.changes.slice(2)
    expect(older.every((c: any) => c.proposal === undefined)).toBe(true)
    // and it can be taken back as any write
    const reverted = await ok({ action: 'revert', projectId: p, changeIds: applied.proposal.changeIds })
    expect(reverted.reverted).toBe(2)
    expect((await node(p, 'job-1')).data.label).toBe('J')
  })

  it('refuses a stale one with 409 stale_write, writes nothing, and applies it with force', async () => {
    const p = await plan()
    const made = await ok(proposal(p, [{ action: 'update', nodeId: 'job-1', data: { label: 'Proposed' } }]))
    const id = made.proposal.proposalId
    // someone changes another field: no conflict for the per-field rule
    await ok({ action: 'update', projectId: p, nodeId: 'job-1', data: { description: 'other field' } })
    const fresh = await app.call('GET', `/api/v1/proposals/${id}?projectId=${p}`)
    expect(fresh.status).toBe(200)
    expect(fresh.body.proposal.conflicts).toEqual([])
    // then the same field
    await ok({ action: 'update', projectId: p, nodeId: 'job-1', data: { label: 'Theirs' } })
    const read = (await app.call('GET', `/api/v1/proposals/${id}?projectId=${p}`)).body.proposal
    expect(read.conflicts).toEqual([
      expect.objectContaining({ target: { kind: 'node', id: 'job-1' }, field: 'label', yours: 'Proposed', theirs: 'Theirs' }),
    ])
    // the fresh preview starts from the value now
    expect(read.preview.changes[0]).toMatchObject({ before: { data: { label: 'Theirs' } }, after: { data: { label: 'Proposed' } } })
    expect(made.proposal.preview.changes[0].before.data.label).toBe('J')
    const stale = await mutate({ action: 'applyProposal', projectId: p, proposalId: id })
    expect(stale.status).toBe(409)
    expect(stale.body.error).toBe('stale_write')
    expect(stale.body.conflicts[0]).toMatchObject({ field: 'label', yours: 'Proposed', theirs: 'Theirs' })
    expect(stale.body._meta._tip).toContain('force')
    expect((await node(p, 'job-1')).data.label).toBe('Theirs')
    expect((await app.call('GET', `/api/v1/proposals/${id}?projectId=${p}`)).body.proposal.status).toBe('open')
    const forced = await ok({ action: 'applyProposal', projectId: p, proposalId: id, force: true })
    expect(forced.proposal.status).toBe('applied')
    expect((await node(p, 'job-1')).data.label).toBe('Proposed')
  })

  it('a delete is stale when anything of its node changed', async () => {
    const p = await plan()
    const made = await ok(proposal(p, [{ action: 'delete', nodeId: 'job-2' }]))
    await ok({ action: 'update', projectId: p, nodeId: 'job-2', data: { description: 'still needed' } })
    const res = await mutate({ action: 'applyProposal', projectId: p, proposalId: made.proposal.proposalId })
    expect(res.status).toBe(409)
    expect(res.body.conflicts[0]).toMatchObject({ target: { id: 'job-2' }, field: 'description', yours: null })
    expect(await node(p, 'job-2')).toBeDefined()
  })

  it('a target deleted since: the read says why it cannot be applied, and applying it is refused as the batch would be', async () => {
    const p = await plan()
    const made = await ok(proposal(p, [{ action: 'update', nodeId: 'job-2', data: { label: 'x' } }]))
    await ok({ action: 'delete', projectId: p, nodeId: 'job-2' })
    const read = (await app.call('GET', `/api/v1/proposals/${made.proposal.proposalId}?projectId=${p}`)).body.proposal
    expect(read.problem).toMatchObject({ status: expect.any(Number), message: expect.stringContaining('job-2') })
    expect(read.preview).toEqual(made.proposal.preview)
    const res = await mutate({ action: 'applyProposal', projectId: p, proposalId: made.proposal.proposalId })
    expect(res.status).toBeGreaterThanOrEqual(400)
    expect(res.status).toBeLessThan(500)
  })
})

describe('reject, withdraw, closed, unknown', () => {
  it('rejects with a reason; only an open one can be applied, rejected or withdrawn', async () => {
    const p = await plan()
    const made = await ok(proposal(p, [{ action: 'update', nodeId: 'job-1', data: { label: 'No' } }]))
    const id = made.proposal.proposalId
    const rejected = await ok({ action: 'rejectProposal', projectId: p, proposalId: id, reason: 'not now' })
    expect(rejected.proposal).toMatchObject({ status: 'rejected', reason: 'not now', rejectedBy: { via: 'api' } })
    expect((await node(p, 'job-1')).data.label).toBe('J')
    for (const action of ['applyProposal', 'rejectProposal', 'withdrawProposal']) {
      const res = await mutate({ action, projectId: p, proposalId: id })
      expect({ action, status: res.status, error: res.body.error }).toEqual({ action, status: 409, error: 'proposal_closed' })
    }
  })

  it('withdraw: by its author only (403 not_author), then closed', async () => {
    const p = await plan()
    const agent = await member(p)
    const other = await member(p)
    const made = await ok(proposal(p, [{ action: 'update', nodeId: 'job-1', data: { label: 'Mine' } }]), { key: agent.key })
    const id = made.proposal.proposalId
    for (const key of [other.key, app.ownerKey]) {
      const res = await mutate({ action: 'withdrawProposal', projectId: p, proposalId: id }, { key })
      expect(res.status).toBe(403)
      expect(res.body.error).toBe('not_author')
    }
    const withdrawn = await ok({ action: 'withdrawProposal', projectId: p, proposalId: id }, { key: agent.key })
    expect(withdrawn.proposal).toMatchObject({ status: 'withdrawn', withdrawnAt: expect.any(String) })
    expect((await mutate({ action: 'applyProposal', projectId: p, proposalId: id })).body.error).toBe('proposal_closed')
  })

  it('an unknown id is 404, in /mutate and GET; a proposal of another project is unknown there', async () => {
    const p = await plan()
    const q = await plan()
    const made = await ok(proposal(p, [{ action: 'delete', nodeId: 'job-1' }]))
    for (const action of ['applyProposal', 'rejectProposal', 'withdrawProposal']) {
      expect((await mutate({ action, projectId: p, proposalId: 'prp_nope' })).status).toBe(404)
      expect((await mutate({ action, projectId: q, proposalId: made.proposal.proposalId })).status).toBe(404)
    }
    expect((await app.call('GET', `/api/v1/proposals/prp_nope?projectId=${p}`)).status).toBe(404)
    expect((await app.call('GET', `/api/v1/proposals/${made.proposal.proposalId}?projectId=${q}`)).status).toBe(404)
    expect((await mutate({ action: 'applyProposal', projectId: p })).status).toBe(400)
  })

  it('a stranger can neither propose nor read', async () => {
    const p = await plan()
    const stranger = await app.user({ tier: 'team' })
    expect((await mutate(proposal(p, [{ action: 'delete', nodeId: 'job-1' }]), { key: stranger.key })).status).toBe(403)
    expect((await app.call('GET', `/api/v1/proposals?projectId=${p}`, { key: stranger.key })).status).toBe(403)
  })
})

describe('GET /proposals', () => {
  it('lists newest first, by status, a page at a time', async () => {
    const p = await plan()
    const ids: string[] = []
    for (let i = 0; i < 5; i++)
      ids.push(
        (await ok(proposal(p, [{ action: 'update', nodeId: 'job-1', data: { label: `v${i}` } }], { title: `t${i}` }))).proposal.proposalId,
      )
    await ok({ action: 'rejectProposal', projectId: p, proposalId: ids[1] })
    const all = (await app.call('GET', `/api/v1/proposals?projectId=${p}`)).body
    expect(all.proposals.map((x: any) => x.proposalId)).toEqual([...ids].reverse())
    expect(all.next).toBeUndefined()
    const first = (await app.call('GET', `/api/v1/proposals?projectId=${p}&limit=2`)).body
    expect(first.proposals.map((x: any) => x.proposalId)).toEqual([ids[4], ids[3]])
    const second = (await app.call('GET', `/api/v1/proposals?projectId=${p}&limit=2&after=${first.next}`)).body
    expect(second.proposals.map((x: any) => x.proposalId)).toEqual([ids[2], ids[1]])
    const open = (await app.call('GET', `/api/v1/proposals?projectId=${p}&status=open`)).body
    expect(open.proposals.map((x: any) => x.proposalId)).toEqual([ids[4], ids[3], ids[2], ids[0]])
    const rejected = (await app.call('GET', `/api/v1/proposals?projectId=${p}&status=rejected`)).body
    expect(rejected.proposals.map((x: any) => x.status)).toEqual(['rejected'])
    for (const bad of ['limit=0', 'limit=101', 'status=done', 'after=zzz'])
      expect({ bad, status: (await app.call('GET', `/api/v1/proposals?projectId=${p}&${bad}`)).status }).toEqual({ bad, status: 400 })
    expect((await app.call('GET', `/api/v1/proposals?projectId=${p}&limit=100`)).status).toBe(200)
  })
})

describe('idempotency and events', () => {
  it('replays each action under the same Idempotency-Key', async () => {
    const p = await plan()
    const body = proposal(p, [{ action: 'update', nodeId: 'job-1', data: { label: 'Once' } }])
    const a = await mutate(body, { headers: { 'idempotency-key': 'prop-1' } })
    const b = await mutate(body, { headers: { 'idempotency-key': 'prop-1' } })
    expect(b.headers.get('idempotent-replayed')).toBe('true')
    expect(b.body).toEqual(a.body)
    expect((await app.call('GET', `/api/v1/proposals?projectId=${p}`)).body.proposals).toHaveLength(1)
    const id = a.body.proposal.proposalId
    const apply = { action: 'applyProposal', projectId: p, proposalId: id }
    const x = await mutate(apply, { headers: { 'idempotency-key': 'apply-1' } })
    const y = await mutate(apply, { headers: { 'idempotency-key': 'apply-1' } })
    expect(x.status).toBe(200)
    expect(y.status).toBe(200)
    expect(y.headers.get('idempotent-replayed')).toBe('true')
    expect(y.body).toEqual(x.body)
    // a new key finds it closed
    expect((await mutate(apply, { headers: { 'idempotency-key': 'apply-2' } })).status).toBe(409)
    // a replayed 409 stays the same 409
    const r1 = await mutate({ action: 'rejectProposal', projectId: p, proposalId: id }, { headers: { 'idempotency-key': 'rej-1' } })
    const r2 = await mutate({ action: 'rejectProposal', projectId: p, proposalId: id }, { headers: { 'idempotency-key': 'rej-1' } })
    expect([r1.status, r2.status]).toEqual([409, 409])
    expect(r2.body).toEqual(r1.body)
    const made = (await ok(proposal(p, [{ action: 'delete', nodeId: 'job-2' }]))).proposal.proposalId
    for (const action of ['rejectProposal', 'withdrawProposal']) {
      const m = await ok(proposal(p, [{ action: 'delete', nodeId: 'job-2' }]))
      const req = { action, projectId: p, proposalId: m.proposal.proposalId }
      const one = await mutate(req, { headers: { 'idempotency-key': `${action}-k` } })
      const two = await mutate(req, { headers: { 'idempotency-key': `${action}-k` } })
      expect([one.status, two.status, two.headers.get('idempotent-replayed')]).toEqual([200, 200, 'true'])
      expect(two.body).toEqual(one.body)
    }
    expect(made).toMatch(/^prp_/)
  })

  it('puts proposal.created, applied, rejected and withdrawn in /events with {proposalId, title, actor}', async () => {
    const p = await plan()
    const a = (await ok(proposal(p, [{ action: 'update', nodeId: 'job-1', data: { label: 'A' } }], { title: 'First' }))).proposal
    const b = (await ok(proposal(p, [{ action: 'update', nodeId: 'job-2', data: { label: 'B' } }], { title: 'Second' }))).proposal
    const c = (await ok(proposal(p, [{ action: 'delete', nodeId: 'job-2' }], { title: 'Third' }))).proposal
    await ok({ action: 'applyProposal', projectId: p, proposalId: a.proposalId })
    await ok({ action: 'rejectProposal', projectId: p, proposalId: b.proposalId })
    await ok({ action: 'withdrawProposal', projectId: p, proposalId: c.proposalId })
    // an event shows once every transaction that began before it has ended (on a shared PostgreSQL, others' too): wait for all six
    const events = await until(async () => {
      const all = (await app.call('GET', `/api/v1/events?projectId=${p}&limit=500`)).body.events as any[]
      return all.filter((e) => e.event.startsWith('proposal.')).length >= 6 && all
    }, 'the six proposal events listed')
    const mine = events.filter((e) => e.event.startsWith('proposal.'))
    expect(mine.map((e) => [e.event, e.proposalId, e.title])).toEqual([
      ['proposal.created', a.proposalId, 'First'],
      ['proposal.created', b.proposalId, 'Second'],
      ['proposal.created', c.proposalId, 'Third'],
      ['proposal.applied', a.proposalId, 'First'],
      ['proposal.rejected', b.proposalId, 'Second'],
      ['proposal.withdrawn', c.proposalId, 'Third'],
    ])
    for (const e of mine) expect(e.actor).toMatchObject({ userId: expect.any(String), via: 'api' })
    // the applied one's node event is there too, before its proposal.applied
    const applied = events.findIndex((e) => e.event === 'proposal.applied')
    expect(events.slice(0, applied).some((e) => e.event === 'node.updated' && e.node.id === 'job-1')).toBe(true)
  })

  it('webhooks may subscribe to the proposal events by name and receive them; "all six" leaves them out', async () => {
    const p = await plan()
    const rx = startReceiver()
    try {
      const named = await app.call('POST', '/api/v1/webhooks', {
        body: { projectId: p, url: rx.url('/named'), events: ['proposal.created', 'proposal.applied', 'node.added'] },
      })
      expect(named.status).toBe(201)
      expect(named.body.webhook.events).toEqual(['node.added', 'proposal.created', 'proposal.applied'])
      const all = await app.call('POST', '/api/v1/webhooks', { body: { projectId: p, url: rx.url('/all') } })
      expect(all.body.webhook.events.some((e: string) => e.startsWith('proposal.'))).toBe(false)
      const bad = await app.call('POST', '/api/v1/webhooks', { body: { projectId: p, url: rx.url('/x'), events: ['proposal.made'] } })
      expect(bad.status).toBe(400)
      const made = (
        await ok(proposal(p, [{ action: 'add', node: { type: 'goal', data: { label: 'Proposed goal' } } }], { title: 'Hooked' }))
      ).proposal
      await ok({ action: 'applyProposal', projectId: p, proposalId: made.proposalId })
      await until(async () => {
        await deliverDue(app.deps)
        return rx.on('/named').length >= 3 && rx.on('/all').length >= 1
      }, 'the proposal events delivered')
      const got = rx.on('/named').map((r) => r.json)
      expect(got.map((e) => e.event)).toEqual(['proposal.created', 'node.added', 'proposal.applied'])
      expect(got[0]).toMatchObject({ project_id: p, proposalId: made.proposalId, title: 'Hooked', actor: { via: 'api' } })
      expect(rx.on('/all').map((r) => r.json.event)).toEqual(['node.added'])
    } finally {
      rx.close()
    }
  })
})

describe('kept HISTORY_DAYS', () => {
  it('the hourly clean-up removes proposals made before the window', async () => {
    const { pruneProposals } = await import('../src/proposals/service')
    const p = await plan()
    await ok(proposal(p, [{ action: 'delete', nodeId: 'job-1' }]))
    const days = app.config.historyDays
    expect(days).toBeGreaterThan(0)
    expect(await pruneProposals(app.deps, new Date(Date.now() + (days - 1) * 86_400_000))).toBe(0)
    expect(await pruneProposals(app.deps, new Date(Date.now() + (days + 1) * 86_400_000))).toBeGreaterThanOrEqual(1)
    expect((await app.call('GET', `/api/v1/proposals?projectId=${p}`)).body.proposals).toEqual([])
  })
})

describe('who: scoped keys (live.md §6) and the OpenAPI document', () => {
  it('a propose key proposes and withdraws its own; applying and rejecting need a key that may write; a read key reads', async () => {
    const p = await plan()
    const key = async (role: string) =>
      (await app.call('POST', '/api/v1/keys', { body: { label: role, scope: { role, projects: [p] } } })).body.apiKey as string
    const proposeKey = await key('propose')
    const readKey = await key('read')
    const made = await mutate(proposal(p, [{ action: 'update', nodeId: 'job-1', data: { label: 'From a narrow key' } }]), {
      key: proposeKey,
    })
    expect(made.status).toBe(200)
    const id = made.body.proposal.proposalId
    for (const action of ['applyProposal', 'rejectProposal']) {
      const res = await mutate({ action, projectId: p, proposalId: id }, { key: proposeKey })
      expect({ action, status: res.status, error: res.body.error }).toEqual({ action, status: 403, error: 'key_scope' })
    }
    expect((await mutate(proposal(p, [{ action: 'delete', nodeId: 'job-1' }]), { key: readKey })).body.error).toBe('key_scope')
    expect((await app.call('GET', `/api/v1/proposals?projectId=${p}`, { key: readKey })).body.proposals).toHaveLength(1)
    expect((await app.call('GET', `/api/v1/proposals/${id}?projectId=${p}`, { key: readKey })).body.proposal.conflicts).toEqual([])
    // the same user's own proposal: the owner's narrow key withdraws it
    expect((await ok({ action: 'withdrawProposal', projectId: p, proposalId: id }, { key: proposeKey })).proposal.status).toBe('withdrawn')
  })

  it('documents both reads and the answer of the four actions', async () => {
    const doc = (await app.call('GET', '/openapi.json')).body
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/v1/proposals', '/api/v1/proposals/{proposalId}']))
    const list = doc.paths['/api/v1/proposals'].get.responses['200'].content['application/json'].schema
    expect(JSON.stringify(list)).toContain('baseRevs')
    const one = doc.paths['/api/v1/proposals/{proposalId}'].get.responses['200'].content['application/json'].schema
    expect(JSON.stringify(one)).toContain('conflicts')
    const result = JSON.stringify(doc.paths['/api/v1/mutate'].post.responses['200'])
    expect(result).toContain('propose, applyProposal, rejectProposal, withdrawProposal')
  })
})
