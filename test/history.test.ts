import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN } from './helpers'
import { type ServerProcess, startServer } from './process'

// history.md through the real server: actors on every write, a change per node or iteration,
// GET /history with its filters and cursor, and the revert action.
let srv: ServerProcess
beforeAll(async () => {
  srv = await startServer()
})
afterAll(async () => {
  await srv?.close()
})

let n = 0
const project = async (key?: string) => {
  const id = `h${++n}-${Math.random().toString(36).slice(2, 8)}`
  const res = await srv.call('POST', '/api/v1/mutate', { key, body: { action: 'addProject', project: { name: id, id } } })
  expect(res.status).toBe(200)
  return id
}
const mutate = (body: unknown, headers: Record<string, string> = {}, key?: string) =>
  srv.call('POST', '/api/v1/mutate', { body, headers, key })
const history = (projectId: string, query = '', key?: string) => srv.call('GET', `/api/v1/history?projectId=${projectId}${query}`, { key })
const ok = async (body: unknown, headers: Record<string, string> = {}) => {
  const res = await mutate(body, headers)
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}
const AGENT = { 'x-agent-id': 'claude-code@laptop', 'x-arbor-via': 'mcp' }
/** A change as the tests compare it: what it did, to what, from what to what. */
const brief = (c: any) => ({ action: c.action, target: c.target, before: c.before, after: c.after })

describe('actors and changes', () => {
  it('records every write with its actor, one change per node, newest first', async () => {
    const p = await project()
    const keys = await srv.call('GET', '/api/v1/keys')
    const keyId = keys.body.keys[0].keyId
    await ok({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'G' } } }, AGENT)
    await ok({ action: 'update', projectId: p, nodeId: 'goal-1', data: { label: 'G2' } }, { 'x-arbor-via': 'app' })
    const res = await history(p, '&nodeId=goal-1')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      changes: [
        {
          changeId: expect.any(String),
          at: expect.stringMatching(/Z$/),
          actor: { userId: expect.stringMatching(/^usr_/), userName: 'owner', keyId, via: 'app' },
          requestId: expect.any(String),
          action: 'update',
          target: { kind: 'node', id: 'goal-1', type: 'goal' },
          before: { parentId: null, data: { label: 'G' } },
          after: { parentId: null, data: { label: 'G2' } },
          fields: ['label'],
        },
        {
          changeId: expect.any(String),
          at: expect.stringMatching(/Z$/),
          actor: { userId: expect.stringMatching(/^usr_/), userName: 'owner', keyId, agent: 'claude-code@laptop', via: 'mcp' },
          requestId: expect.any(String),
          action: 'add',
          target: { kind: 'node', id: 'goal-1', type: 'goal' },
          before: null,
          after: { parentId: null, data: { label: 'G' } },
          fields: ['parentId', 'label'],
        },
      ],
      _meta: expect.any(Object),
    })
  })

  it('records a subtree delete node by node, a restore, a batch under one requestId, and every iteration action', async () => {
    const p = await project()
    const batch = await ok({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
        { action: 'add', node: { type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
      ],
    })
    expect(batch.success).toBe(true)
    const added = (await history(p)).body.changes
    expect(added.map((c: any) => [c.action, c.target.id])).toEqual([
      ['add', 'approach-1'],
      ['add', 'need-1'],
      ['add', 'goal-1'],
    ])
    expect(new Set(added.map((c: any) => c.requestId)).size).toBe(1)
    await ok({ action: 'delete', projectId: p, nodeId: 'goal-1' })
    await ok({ action: 'restore', projectId: p, nodeId: 'goal-1' })
    await ok({ action: 'addIteration', projectId: p, iteration: { name: 'S1' } })
    await ok({ action: 'updateIteration', projectId: p, iterationName: 'S1', data: { name: 'Sprint 1' } })
    const order = (await srv.call('GET', `/api/v1/iterations?projectId=${p}`)).body.iterations.map((i: any) => i.name)
    expect(order).toEqual(['Later', 'Sprint 1'])
    await ok({ action: 'reorderIterations', projectId: p, order: ['Sprint 1', 'Later'] })
    await ok({ action: 'deleteIteration', projectId: p, iterationName: 'Sprint 1' })
    const all = (await history(p)).body.changes
    expect(all.slice(0, 9).map((c: any) => [c.action, c.target.kind, c.target.id, c.fields])).toEqual([
      ['deleteIteration', 'iteration', 'Sprint 1', ['name', 'status', 'sortOrder', 'gitTags']],
      ['reorderIterations', 'iteration', 'Later', ['sortOrder']],
      ['reorderIterations', 'iteration', 'Sprint 1', ['sortOrder']],
      ['updateIteration', 'iteration', 'Sprint 1', ['name']],
      ['addIteration', 'iteration', 'S1', ['name', 'status', 'sortOrder', 'gitTags']],
      ['restore', 'node', 'goal-1', ['parentId', 'label']],
      // the delete: the named node and each descendant, the deepest recorded first
      ['delete', 'node', 'goal-1', ['parentId', 'label']],
      ['delete', 'node', 'need-1', ['parentId', 'label']],
      ['delete', 'node', 'approach-1', ['parentId', 'label']],
    ])
    // a node that no longer exists keeps its history
    const gone = await history(p, '&nodeId=approach-1')
    expect(gone.body.changes.map((c: any) => c.action)).toEqual(['delete', 'add'])
  })

  it("names in a write's answer the changes it recorded when asked (Prefer: change-ids), as GET /history shows them", async () => {
    const p = await project()
    const PREFER = { prefer: 'change-ids' }
    // not asked: the answer is api.md's as it was
    const plain = await mutate({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'F' } } })
    expect(plain.body.changeIds).toBeUndefined()
    expect(plain.headers.get('preference-applied')).toBeNull()
    const added = await mutate({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'G' } } }, PREFER)
    expect(added.headers.get('preference-applied')).toBe('change-ids')
    const mine = (await history(p, '&nodeId=goal-2')).body.changes
    expect(added.body.changeIds).toEqual([mine[0].changeId])
    await ok({ action: 'add', projectId: p, node: { type: 'need', parentId: 'goal-2', data: { label: 'N' } } })
    const key = { ...PREFER, 'idempotency-key': `del-${p}` }
    const deleted = (await mutate({ action: 'batch', projectId: p, mutations: [{ action: 'delete', nodeId: 'goal-2' }] }, key)).body
    const request = (await history(p, '&limit=1')).body.changes[0].requestId
    const ofRequest = (await history(p, `&requestId=${request}`)).body.changes.map((c: any) => c.changeId)
    expect(ofRequest).toHaveLength(2) // the goal and the need beneath it
    expect(deleted.changeIds).toEqual([...ofRequest].sort((a: string, b: string) => Number(a) - Number(b)))
    // a replay names the same changes
    const again = await mutate({ action: 'batch', projectId: p, mutations: [{ action: 'delete', nodeId: 'goal-2' }] }, key)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body.changeIds).toEqual(deleted.changeIds)
    // taking them back with those ids: the revert's own answer names its new changes
    const back = await ok({ action: 'revert', projectId: p, changeIds: deleted.changeIds })
    expect(back.reverted).toBe(2)
    expect(back.changeIds).toHaveLength(2)
    expect(back.changeIds.some((id: string) => deleted.changeIds.includes(id))).toBe(false)
  })

  it("names the claim's agent on a write that carries its token, and leaves claims out of history", async () => {
    const p = await project()
    await ok({ action: 'add', projectId: p, node: { type: 'task', data: { label: 'Fix the login bug now' } } })
    // the classifier's kind is Arbor's own change
    await srv.until(async () => (await history(p, '&nodeId=task-1')).body.changes.length === 2, 10_000, 'classified')
    const claim = await ok({ action: 'claim', projectId: p, agent: 'worker-7', nodeIds: ['task-1'] })
    await ok({ action: 'update', projectId: p, nodeId: 'task-1', claimToken: claim.claims[0].claimToken, data: { status: 'done' } })
    const changes = (await history(p, '&nodeId=task-1')).body.changes
    expect(changes.map((c: any) => [c.action, c.actor.agent ?? null, c.actor.userName])).toEqual([
      ['update', 'worker-7', 'owner'],
      ['update', null, 'Arbor'], // the classifier's kind
      ['add', null, 'owner'],
    ])
  })

  it("names the claim's agent on a batch whose entry carries its token, for every change of the batch", async () => {
    const p = await project()
    await ok({ action: 'add', projectId: p, node: { type: 'task', data: { label: 'Fix the login bug now' } } })
    await srv.until(async () => (await history(p, '&nodeId=task-1')).body.changes.length === 2, 10_000, 'classified')
    const claim = await ok({ action: 'claim', projectId: p, agent: 'worker-8', nodeIds: ['task-1'] })
    const token = claim.claims[0].claimToken
    await ok({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'add', node: { type: 'goal', data: { label: 'G' } } },
        { action: 'update', nodeId: 'task-1', claimToken: token, data: { status: 'done' } },
      ],
    })
    const latest = async (nodeId: string) => (await history(p, `&nodeId=${nodeId}`)).body.changes[0]
    expect([await latest('goal-1'), await latest('task-1')].map((c: any) => [c.action, c.actor.agent ?? null])).toEqual([
      ['add', 'worker-8'],
      ['update', 'worker-8'],
    ])
  })

  it('gives events and webhooks the actor, without the key id', async () => {
    const p = await project()
    await ok({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'G' } } }, AGENT)
    const events = await srv.until(async () => {
      const res = await srv.call('GET', `/api/v1/events?projectId=${p}`)
      return res.body.events?.length ? res.body.events : null
    })
    expect(events[0].actor).toEqual({ userId: expect.stringMatching(/^usr_/), userName: 'owner', agent: 'claude-code@laptop', via: 'mcp' })
  })
})

describe('GET /history', () => {
  it('is described in the guide and the OpenAPI document, with revert among the actions', async () => {
    const guide = (await srv.call('GET', '/api/v1/guide', { key: null })).body
    expect(guide.endpoints).toContainEqual(expect.objectContaining({ method: 'GET', path: '/api/v1/history' }))
    expect(guide.actions.revert.body.action).toBe('revert')
    expect(guide.history.request).toStartWith('GET /api/v1/history?projectId&nodeId?')
    const openapi = (await srv.call('GET', '/openapi.json', { key: null })).body
    expect(openapi.paths['/api/v1/history'].get.parameters.map((x: any) => x.name)).toEqual([
      'projectId',
      'nodeId',
      'userId',
      'agent',
      'via',
      'requestId',
      'since',
      'until',
      'after',
      'limit',
    ])
  })

  it('filters by user, agent, via, requestId and time, and refuses bad parameters by name', async () => {
    const p = await project()
    await ok({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'A' } } }, AGENT)
    const b = await ok({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'B' } } })
    const all = (await history(p)).body.changes
    const labels = (res: any) => res.body.changes.map((c: any) => c.after.data.label)
    expect(labels(await history(p, '&agent=claude-code@laptop'))).toEqual(['A'])
    expect(labels(await history(p, '&via=api'))).toEqual(['B'])
    expect(labels(await history(p, `&userId=${all[0].actor.userId}`))).toEqual(['B', 'A'])
    expect(labels(await history(p, `&requestId=${all[0].requestId}`))).toEqual(['B'])
    expect(labels(await history(p, `&since=${encodeURIComponent(all[0].at)}&via=api`))).toEqual(['B'])
    expect(labels(await history(p, '&until=2000-01-01T00:00:00Z'))).toEqual([])
    expect(b.node.id).toBe('goal-2')
    for (const [query, message] of [
      ['&limit=0', 'limit must be an integer from 1 to 200'],
      ['&limit=201', 'limit must be an integer from 1 to 200'],
      ['&via=phone', 'via must be one of api, mcp, app, workflow, cli'],
      ['&since=yesterday', 'since must be an ISO 8601 date-time, e.g. 2026-01-31T09:00:00Z'],
      ['&after=xyz', 'after must be the next cursor of a previous page of GET /history'],
      ['&after=12.9:5:', 'after must be the next cursor of a previous page of GET /history'],
    ]) {
      const res = await history(p, query!)
      expect({ query, status: res.status, errors: res.body.errors }).toEqual({ query, status: 400, errors: [message] })
    }
  })

  it('never shows changes or actors on a share view or in the OKF export', async () => {
    const p = await project()
    await ok({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Shared' } } }, { 'x-agent-id': 'secret-agent' })
    const exported = await srv.call('GET', `/api/v1/export-okf?projectId=${p}`)
    expect(exported.status).toBe(200)
    const link = await srv.call('POST', '/api/v1/share', { body: { projectId: p } })
    const view = await srv.call('GET', `/api/v1/public/share/${link.body.token}`, { key: null })
    expect(view.status).toBe(200)
    for (const body of [exported.body, view.body]) expect(JSON.stringify(body)).not.toMatch(/secret-agent|changeId|"actor"/)
  })

  it('answers 403 project_access_denied to a user who is not a member', async () => {
    const p = await project()
    const user = await srv.call('POST', '/admin/v1/users', { key: ADMIN_TOKEN, body: { name: 'stranger', tier: 'team' } })
    const res = await history(p, '', user.body.apiKey)
    expect(res.status).toBe(403)
    expect(res.body.error).toBe('project_access_denied')
  })

  it('pages newest first with a cursor that neither skips nor repeats while others write', async () => {
    const p = await project()
    await ok({
      action: 'batch',
      projectId: p,
      mutations: Array.from({ length: 30 }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `g${i}` } } })),
    })
    const before = (await history(p, '&limit=200')).body.changes.map((c: any) => c.changeId)
    // writers keep adding while the pages are read
    let writing = true
    const writers = Array.from({ length: 3 }, async (_, w) => {
      for (let i = 0; writing; i++) await ok({ action: 'add', projectId: p, node: { type: 'goal', data: { label: `w${w}-${i}` } } })
    })
    const seen: string[] = []
    let cursor = ''
    for (let page = 0; page < 100; page++) {
      const res = await history(p, `&limit=4${cursor ? `&after=${cursor}` : ''}`)
      expect(res.status).toBe(200)
      seen.push(...res.body.changes.map((c: any) => c.changeId))
      if (!res.body.next) break
      cursor = res.body.next
    }
    writing = false
    await Promise.all(writers)
    expect(new Set(seen).size).toBe(seen.length)
    // every change there was when paging began is seen, in order, after whatever came first
    expect(seen.filter((id) => before.includes(id))).toEqual(before)
    const numbers = seen.map(Number)
    expect(numbers).toEqual([...numbers].sort((a, b) => b - a))
  })
})

describe('revert', () => {
  it('takes back what one agent did, newest first, and a revert of the revert brings it back', async () => {
    const p = await project()
    await ok({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Mine' } } })
    await ok(
      {
        action: 'batch',
        projectId: p,
        mutations: [
          { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'goal-1', data: { label: 'N' } } },
          { action: 'add', node: { type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
        ],
      },
      AGENT,
    )
    await ok({ action: 'update', projectId: p, nodeId: 'goal-1', data: { label: 'Renamed', goalStatus: 'focus' } }, AGENT)
    const dry = await ok({ action: 'revert', projectId: p, filter: { agent: 'claude-code@laptop' }, dryRun: true })
    const res = await mutate({ action: 'revert', projectId: p, filter: { agent: 'claude-code@laptop' } })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, reverted: 3, changeIds: expect.any(Array), _meta: expect.any(Object) })
    const tree = await srv.call('GET', `/api/v1/nodes?projectId=${p}`)
    expect(tree.body.nodes.map((x: any) => [x.id, x.data])).toEqual([['goal-1', { label: 'Mine' }]])
    // the dry run said exactly what the real run did
    const made = (await history(p, `&requestId=${(await history(p, '&limit=1')).body.changes[0].requestId}`)).body.changes
    expect(made.every((c: any) => c.action === 'revert' && c.revertOf)).toBe(true)
    expect(dry).toEqual({ success: true, dryRun: true, changes: [...made].reverse().map(brief), conflicts: [], _meta: expect.any(Object) })
    expect(res.body.changeIds).toEqual([...made].reverse().map((c: any) => c.changeId))
    // and the revert itself can be taken back
    await ok({ action: 'revert', projectId: p, changeIds: res.body.changeIds })
    const again = await srv.call('GET', `/api/v1/nodes?projectId=${p}`)
    expect(again.body.nodes.map((x: any) => [x.id, x.data])).toEqual([
      ['goal-1', { label: 'Renamed', goalStatus: 'focus' }],
      ['need-1', { label: 'N' }],
      ['approach-1', { label: 'A' }],
    ])
  })

  it('refuses with 409 revert_conflict naming each conflict, writes nothing, and goes ahead with force', async () => {
    const p = await project()
    await ok({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'G' } } }, AGENT)
    await ok({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'H' } } }, AGENT)
    await ok({ action: 'update', projectId: p, nodeId: 'goal-2', data: { label: 'H by agent' } }, AGENT)
    // people change things after the agent
    await ok({ action: 'add', projectId: p, node: { type: 'need', parentId: 'goal-1', data: { label: 'child' } } })
    await ok({ action: 'update', projectId: p, nodeId: 'goal-2', data: { label: 'H by person' } })
    const ids = (await history(p)).body.changes.map((c: any) => c.changeId) // newest first
    const res = await mutate({ action: 'revert', projectId: p, filter: { agent: 'claude-code@laptop' } })
    expect(res.status).toBe(409)
    expect(res.body).toEqual({
      error: 'revert_conflict',
      conflicts: [
        {
          changeId: ids[2],
          target: { kind: 'node', id: 'goal-2', type: 'goal' },
          field: 'label',
          laterChangeId: ids[0],
          reason: 'changed_later',
        },
        {
          changeId: ids[3],
          target: { kind: 'node', id: 'goal-2', type: 'goal' },
          field: 'label',
          laterChangeId: ids[0],
          reason: 'changed_later',
        },
        { changeId: ids[4], target: { kind: 'node', id: 'goal-1', type: 'goal' }, laterChangeId: ids[1], reason: 'has_children' },
      ],
      _meta: { _tip: expect.stringContaining('force:true') },
    })
    expect((await history(p)).body.changes.length).toBe(5)
    // a change whose target is gone
    await ok({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'X' } } }, AGENT)
    await ok({ action: 'update', projectId: p, nodeId: 'goal-3', data: { label: 'X2' } }, AGENT)
    await ok({ action: 'delete', projectId: p, nodeId: 'goal-3' })
    const latest = (await history(p, '&limit=3')).body.changes.map((c: any) => c.changeId)
    const gone = await mutate({ action: 'revert', projectId: p, changeIds: [latest[1]] })
    expect(gone.body.conflicts).toEqual([
      { changeId: latest[1], target: { kind: 'node', id: 'goal-3', type: 'goal' }, laterChangeId: latest[0], reason: 'gone' },
    ])
    // force: reverted values win, later children go with their parent
    const forced = await mutate({ action: 'revert', projectId: p, changeIds: ids.slice(2), force: true })
    expect(forced.status).toBe(200)
    const nodes = (await srv.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes
    expect(nodes.map((x: any) => x.id)).toEqual([])
  })

  it('replays with the same Idempotency-Key, answers 400 with a _tip past 1,000 changes, and needs changeIds or filter', async () => {
    const p = await project()
    await ok({
      action: 'batch',
      projectId: p,
      mutations: Array.from({ length: 1000 }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `g${i}` } } })),
    })
    await ok({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'last' } } })
    const many = await mutate({ action: 'revert', projectId: p, filter: { via: 'api' } })
    expect(many.status).toBe(400)
    expect(many.body.errors).toEqual(['filter selects more than 1000 changes; a revert takes back at most 1000'])
    expect(many.body._meta._tip).toContain('Narrow the filter')
    expect((await mutate({ action: 'revert', projectId: p })).body.errors).toEqual(['changeIds or filter is required'])
    expect((await mutate({ action: 'revert', projectId: p, filter: {} })).body.errors).toEqual([
      'filter must name at least one of userId, agent, via, requestId, since, until',
    ])
    for (const [body, message] of [
      [{ changeIds: ['abc'] }, 'changeIds must be an array of 1 to 1000 change ids'],
      [{ changeIds: [] }, 'changeIds must be an array of 1 to 1000 change ids'],
      [{ changeIds: ['1'], filter: { agent: 'x' } }, 'Send changeIds or filter, not both'],
      [{ filter: { via: 'phone' } }, 'via must be one of api, mcp, app, workflow, cli'],
      [{ filter: { who: 'x' } }, 'filter may hold only userId, agent, via, requestId, since and until'],
      [{ filter: 'agent' }, 'filter must be an object of userId, agent, via, requestId, since and until'],
      [{ changeIds: ['1'], dryRun: 'yes' }, 'dryRun must be true or false'],
    ] as const) {
      const res = await mutate({ action: 'revert', projectId: p, ...body })
      expect({ body, status: res.status, errors: res.body.errors }).toEqual({ body, status: 400, errors: [message] })
    }
    expect((await mutate({ action: 'revert', projectId: p, changeIds: ['999999999'] })).status).toBe(404)
    const last = (await history(p, '&limit=1')).body.changes[0].changeId
    const headers = { 'idempotency-key': `rv-${p}` }
    const first = await mutate({ action: 'revert', projectId: p, changeIds: [last] }, headers)
    const second = await mutate({ action: 'revert', projectId: p, changeIds: [last] }, headers)
    expect(first.status).toBe(200)
    expect(second.headers.get('idempotent-replayed')).toBe('true')
    expect(second.body).toEqual(first.body)
    expect((await history(p, '&limit=2')).body.changes.map((c: any) => c.action)).toEqual(['revert', 'add'])
  })

  it('brings back a deleted subtree with its ids, parents first, and takes back iteration changes', async () => {
    const p = await project()
    await ok({
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
    const before = (await srv.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes
    await ok({ action: 'delete', projectId: p, nodeId: 'goal-1' }, AGENT)
    await ok({ action: 'updateIteration', projectId: p, iterationName: 'S1', data: { name: 'Sprint one' } }, AGENT)
    await ok({ action: 'reorderIterations', projectId: p, order: ['Sprint one', 'Later'] }, AGENT)
    const res = await ok({ action: 'revert', projectId: p, filter: { agent: 'claude-code@laptop' } })
    expect(res.reverted).toBe(7) // 4 nodes, a rename, 2 places
    const back = (await srv.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes
    // as they were, each with a new rev: coming back is a change (live.md, 1)
    expect(back).toEqual(before.map((n: any) => ({ ...n, rev: expect.any(String) })))
    for (const [i, n] of back.entries()) expect(n.rev).not.toBe(before[i].rev)
    const iterations = (await srv.call('GET', `/api/v1/iterations?projectId=${p}`)).body.iterations
    expect(iterations.map((i: any) => i.name)).toEqual(['Later', 'S1'])
  })

  it('answers _meta.unblocked and sends events with the actor, as an ordinary write does', async () => {
    const p = await project()
    await ok({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
        { action: 'add', node: { id: 'draft-a1', type: 'approach', parentId: 'draft-n', data: { label: 'First' } } },
        {
          action: 'add',
          node: { id: 'draft-a2', type: 'approach', parentId: 'draft-n', data: { label: 'Then', blockedBy: ['draft-a1'] } },
        },
        { action: 'add', node: { type: 'job', parentId: 'draft-a1', data: { label: 'Do first', status: 'done' } } },
        { action: 'add', node: { type: 'job', parentId: 'draft-a2', data: { label: 'Do then' } } },
      ],
    })
    // an agent reopens the first job, which blocks the second again; taking that back unblocks it
    await ok({ action: 'update', projectId: p, nodeId: 'job-1', data: { status: 'open' } }, AGENT)
    const res = await ok({ action: 'revert', projectId: p, filter: { agent: 'claude-code@laptop' } }, { 'x-arbor-via': 'app' })
    expect(res._meta.unblocked).toEqual(['job-2'])
    const events = await srv.until(async () => {
      const all = (await srv.call('GET', `/api/v1/events?projectId=${p}&limit=500`)).body.events ?? []
      return all.length >= 8 ? all : null
    })
    expect(events.at(-1)).toMatchObject({ event: 'node.updated', node: { id: 'job-1', data: { status: 'done' } }, actor: { via: 'app' } })
    // a revert's events say so (the app's Activity reads "reverted"); an ordinary write's do not
    expect(events.at(-1).revert).toBe(true)
    expect(events.at(-2).revert).toBeUndefined()
  })

  it('never leaves a half-reverted plan while others write the same nodes', async () => {
    const p = await project()
    await ok(
      {
        action: 'batch',
        projectId: p,
        mutations: Array.from({ length: 20 }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `a${i}` } } })),
      },
      AGENT,
    )
    const edits = Array.from({ length: 20 }, (_, i) =>
      mutate({ action: 'update', projectId: p, nodeId: `goal-${i + 1}`, data: { label: `edited ${i}` } }),
    )
    const [rev] = await Promise.all([mutate({ action: 'revert', projectId: p, filter: { agent: 'claude-code@laptop' } }), ...edits])
    const left = (await srv.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes.length
    // either the revert came first (every node gone, the edits found none) or an edit came first (409, nothing reverted)
    expect([rev!.status, left]).toEqual(rev!.status === 200 ? [200, 0] : [409, 20])
  })
})

describe("a revert refused by a node's rule", () => {
  it('names the change it could not take back, as a batch names its entry, with the way out', async () => {
    const p = await project()
    await ok({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'G' } } })
    await ok({ action: 'add', projectId: p, node: { type: 'need', parentId: 'goal-1', data: { label: 'N' } } })
    await ok({ action: 'add', projectId: p, node: { type: 'approach', parentId: 'need-1', data: { label: 'A1' } } })
    await ok({ action: 'add', projectId: p, node: { type: 'approach', parentId: 'need-1', data: { label: 'A2' } } })
    await ok({ action: 'update', projectId: p, nodeId: 'approach-1', data: { blockedBy: ['approach-2'] } })
    const cleared = await ok({ action: 'update', projectId: p, nodeId: 'approach-1', data: { blockedBy: null } }, { Prefer: 'change-ids' })
    const change = cleared.changeIds[0]
    await ok({ action: 'delete', projectId: p, nodeId: 'approach-2' })
    // setting approach-1's blockedBy back would name a node deleted since: its rule refuses
    const res = await mutate({ action: 'revert', projectId: p, changeIds: [change] })
    expect(res.status).toBe(400)
    expect(res.body.errors).toEqual([`change ${change}: blockedBy names approach-2, which is not an existing approach`])
    expect(res.body._meta._tip).toBe(`Leave change ${change} out of the revert, or first change what refuses it and revert again.`)
    const nodes = (await srv.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes
    expect(nodes.find((n: { id: string }) => n.id === 'approach-1').data.blockedBy).toBeUndefined()
  })
})
