import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type ServerProcess, startServer } from './process'

// Issue 50, item 3: on PGlite one write may hold the one database session for at most
// PGLITE_WRITE_BUDGET_MS (150 by default) of estimated time (src/mutate/cost-limit.ts); over it a
// batch or a revert is refused with 413 and a _tip, and nothing of it is written. PostgreSQL has
// no such limit: the same requests are applied. The real server, its default budget.
const onPostgres = !!process.env.TEST_DATABASE_URL
let server: ServerProcess
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const mutate = (body: unknown, headers?: Record<string, string>) => server.call('POST', '/api/v1/mutate', { body, headers })
const nodes = async (projectId: string) =>
  new Map<string, any>((await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes.map((n: any) => [n.id, n]))
const changes = async (projectId: string) => (await server.call('GET', `/api/v1/history?projectId=${projectId}&limit=200`)).body.changes

/** A project with a goal, a need and `n` approaches (approach-1 … approach-n), each with a job. */
async function approaches(projectId: string, n: number) {
  expect((await mutate({ action: 'addProject', project: { name: projectId, id: projectId } })).status).toBe(200)
  const mutations: unknown[] = [
    { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Goal' } } },
    { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Need' } } },
  ]
  for (let i = 0; i < n; i++) {
    mutations.push({ action: 'add', node: { id: `draft-a${i}`, type: 'approach', parentId: 'draft-n', data: { label: `A${i}` } } })
    mutations.push({ action: 'add', node: { type: 'job', parentId: `draft-a${i}`, data: { label: `J${i}` } } })
  }
  expect((await mutate({ action: 'batch', projectId, mutations })).status).toBe(200)
  return Array.from({ length: n }, (_, i) => `approach-${i + 1}`)
}
/** The first `count` approaches each blocked by the next 50: 0.5 ms + 50 × 0.05 ms = 3 ms each in the estimate. */
const chain = (ids: string[], count: number) =>
  Array.from({ length: count }, (_, i) => ({ action: 'update', nodeId: ids[i], data: { blockedBy: ids.slice(i + 1, i + 51) } }))

describe('the cost limit of one write (PGLITE_WRITE_BUDGET_MS)', () => {
  it('a batch over the budget: 413 with a _tip on PGlite and nothing written; applied on PostgreSQL', async () => {
    const ids = await approaches('over', 101)
    const before = (await changes('over')).length
    const res = await mutate({ action: 'batch', projectId: 'over', mutations: chain(ids, 51) }) // 153 ms estimated
    const stored = await nodes('over')
    if (onPostgres) {
      expect(res.status).toBe(200)
      expect(stored.get('approach-1').data.blockedBy).toEqual(ids.slice(1, 51))
      return
    }
    expect(res.status).toBe(413)
    expect(res.body).toMatchObject({ error: 'write_too_costly', estimatedMs: 153, limitMs: 150, perRequestMax: 50 })
    expect(res.body.message).toContain('about 153 ms')
    expect(res.body._meta._tip).toContain('Send at most 50 entries per batch')
    expect(res.body._meta._tip).toContain('PGLITE_WRITE_BUDGET_MS')
    // nothing written: no blockedBy, no change recorded, every job still ready
    for (const id of ids.slice(0, 51)) expect(stored.get(id).data.blockedBy).toBeUndefined()
    expect((await changes('over')).length).toBe(before)
    expect((await server.call('GET', '/api/v1/ready?projectId=over&limit=100')).body._meta.total).toBe(101)
    // a body that is also invalid, or a project out of reach, gets its own answer first
    const invalidToo = await mutate({ action: 'batch', projectId: 'over', mutations: [...chain(ids, 51), { action: 'bogus' }] })
    expect(invalidToo.status).toBe(400)
    expect(invalidToo.body.errors[0]).toStartWith('mutations[51]: ')
    expect((await mutate({ action: 'batch', projectId: 'no-such-project', mutations: chain(ids, 51) })).status).toBe(403)
    // a proposal of the same entries is refused as the batch would be
    const proposal = await mutate({ action: 'propose', projectId: 'over', title: 'Block them all', mutations: chain(ids, 51) })
    expect(proposal.status).toBe(413)
    expect(proposal.body._meta._tip).toContain('Send at most 50 entries per proposal')
    // a mix: perRequestMax fits any run of that many entries (here 300 updates), not the average
    const mixed = [
      ...Array.from({ length: 600 }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `G${i}` } } })),
      ...ids.slice(0, 100).map((id) => ({ action: 'update', nodeId: id, data: { label: `L ${id}` } })),
      ...ids.slice(0, 100).map((id) => ({ action: 'update', nodeId: id, data: { label: `M ${id}` } })),
    ]
    const mix = await mutate({ action: 'batch', projectId: 'over', mutations: mixed }) // 60 + 100 ms estimated
    expect(mix.status).toBe(413)
    expect(mix.body).toMatchObject({ estimatedMs: 160, perRequestMax: 300 })
    // the split the tip gives is applied: 50, then the one left
    expect((await mutate({ action: 'batch', projectId: 'over', mutations: chain(ids, 51).slice(0, 50) })).status).toBe(200)
    expect((await mutate({ action: 'batch', projectId: 'over', mutations: chain(ids, 51).slice(50) })).status).toBe(200)
    expect((await nodes('over')).get('approach-51').data.blockedBy).toEqual(ids.slice(51, 101))
  })

  it('a batch at the budget, 1,000 plain adds and 100 plain updates are applied on both databases', async () => {
    const ids = await approaches('under', 100)
    const at = await mutate({ action: 'batch', projectId: 'under', mutations: chain(ids, 50) }) // 150 ms estimated: at the budget
    expect(at.status).toBe(200)
    expect((await nodes('under')).get('approach-50').data.blockedBy).toEqual(ids.slice(50, 100))
    const adds = Array.from({ length: 1000 }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `G${i}` } } }))
    expect((await mutate({ action: 'batch', projectId: 'under', mutations: adds })).status).toBe(200)
    const updates = ids.map((id, i) => ({ action: 'update', nodeId: id, data: { label: `Renamed ${i}` } }))
    expect((await mutate({ action: 'batch', projectId: 'under', mutations: updates })).status).toBe(200)
    expect((await nodes('under')).get('approach-100').data.label).toBe('Renamed 99')
  })

  it('a revert over the budget (and its dry run): 413 on PGlite and nothing taken back; one at the budget is applied', async () => {
    const ids = await approaches('revert', 301)
    const changeIds: string[] = []
    for (const part of [ids.slice(0, 150), ids.slice(150)]) {
      const res = await mutate(
        {
          action: 'batch',
          projectId: 'revert',
          mutations: part.map((id) => ({ action: 'update', nodeId: id, data: { label: `New ${id}` } })),
        },
        { prefer: 'change-ids' },
      )
      expect(res.status).toBe(200)
      changeIds.push(...res.body.changeIds)
    }
    expect(changeIds).toHaveLength(301)
    const before = (await changes('revert')).length
    for (const dryRun of [true, false]) {
      const res = await mutate({ action: 'revert', projectId: 'revert', changeIds, dryRun }) // 301 × 0.5 ms
      if (onPostgres) {
        expect(res.status).toBe(200)
        continue
      }
      expect(res.status).toBe(413)
      expect(res.body).toMatchObject({ error: 'write_too_costly', estimatedMs: 151, limitMs: 150, perRequestMax: 300 })
      expect(res.body._meta._tip).toContain('Revert in windows of at most 300 changes')
    }
    if (onPostgres) {
      expect((await nodes('revert')).get('approach-1').data.label).toBe('A0')
      return
    }
    expect((await changes('revert')).length).toBe(before)
    expect((await nodes('revert')).get('approach-1').data.label).toBe('New approach-1')
    // the windows the tip gives are applied, newest first
    const newest = changeIds.map(Number).sort((a, b) => b - a)
    for (const window of [newest.slice(0, 300), newest.slice(300)])
      expect((await mutate({ action: 'revert', projectId: 'revert', changeIds: window.map(String) })).status).toBe(200)
    const stored = await nodes('revert')
    expect(ids.every((id, i) => stored.get(id).data.label === `A${i}`)).toBe(true)
  })

  it('a revert of a 1,000-node batch is applied on both databases', async () => {
    expect((await mutate({ action: 'addProject', project: { name: 'Big', id: 'big' } })).status).toBe(200)
    const adds = Array.from({ length: 1000 }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `G${i}` } } }))
    const added = await mutate({ action: 'batch', projectId: 'big', mutations: adds }, { prefer: 'change-ids' })
    expect(added.status).toBe(200)
    const res = await mutate({ action: 'revert', projectId: 'big', changeIds: added.body.changeIds })
    expect(res.status).toBe(200)
    expect(res.body.reverted).toBe(1000)
    expect((await nodes('big')).size).toBe(0)
  })
})
