import { afterAll, describe, expect, it } from 'bun:test'
import { startApp } from './helpers'

// api.md Limits, free-tier node cap rules 1-3, as self-hosting.md reads them: counted over
// every project the free user owns; the add or batch that crosses the cap succeeds with an advisory
const CAP = 3
const app = await startApp({ FREE_TIER_NODE_CAP: String(CAP) })
afterAll(() => app.close())

const GUIDE = 'http://arbor.test/api/v1/guide'
const mutate = (body: unknown, key: string) => app.call('POST', '/api/v1/mutate', { body, key })
const addGoal = (projectId: string, key: string, label = 'G') =>
  mutate({ action: 'add', projectId, node: { type: 'goal', data: { label } } }, key)
const goals = (n: number) => Array.from({ length: n }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `G${i}` } } }))
const capTip = `You have reached the free plan's ${CAP}-node cap: further adds are refused until you delete nodes.`
const refusal = (current: number) => ({
  error: 'node_cap_reached',
  message: `The free plan holds ${CAP} nodes across your projects; delete ${current - CAP + 1} to add more`,
  current,
  node_cap: CAP,
  delete_to_resume: current - CAP + 1,
  _meta: { guide: GUIDE },
})

async function freeUser() {
  const user = await app.user({ tier: 'free' })
  const projectId = await app.project(undefined, user.key)
  return { ...user, projectId }
}

describe('free-tier node cap', () => {
  it('is what tier-status reports as limits.node_cap', async () => {
    const { key } = await freeUser()
    expect((await app.call('GET', '/api/v1/tier-status', { key })).body.limits.node_cap).toBe(CAP)
  })

  it('lets the add that reaches the cap succeed, with the node_cap_reached advisory', async () => {
    const { key, projectId } = await freeUser()
    expect((await addGoal(projectId, key)).body._meta.advisory).toBeUndefined()
    expect((await addGoal(projectId, key)).body._meta.advisory).toBeUndefined()
    const crossing = await addGoal(projectId, key)
    expect(crossing.status).toBe(200)
    expect(crossing.body).toEqual({
      success: true,
      node: { id: 'goal-3', rev: expect.any(String), type: 'goal', parentId: null, data: { label: 'G' } },
      _meta: {
        _tip: capTip,
        advisory: { type: 'node_cap_reached', current: CAP, node_cap: CAP },
        focus: { nodeId: 'goal-3', viewCommand: { projectId, command: { type: 'selectNode', nodeId: 'goal-3' } } },
      },
    })
  })

  it('refuses the next add and batch with 403 node_cap_reached', async () => {
    const { key, projectId } = await freeUser()
    await mutate({ action: 'batch', projectId, mutations: goals(CAP) }, key)
    const add = await addGoal(projectId, key)
    expect(add.status).toBe(403)
    expect(add.body).toEqual(refusal(CAP))
    const batch = await mutate({ action: 'batch', projectId, mutations: goals(1) }, key)
    expect(batch.status).toBe(403)
    expect(batch.body).toEqual(refusal(CAP))
    expect((await app.call('GET', `/api/v1/nodes?projectId=${projectId}`, { key })).body.nodes).toHaveLength(CAP)
  })

  it('is a soft ceiling: a batch that starts under the cap may overshoot it, never half-written', async () => {
    const { key, projectId } = await freeUser()
    await addGoal(projectId, key)
    const res = await mutate({ action: 'batch', projectId, mutations: goals(4) }, key)
    expect(res.status).toBe(200)
    expect(res.body.results).toHaveLength(4)
    expect(res.body._meta.advisory).toEqual({ type: 'node_cap_reached', current: 5, node_cap: CAP })
    expect(res.body._meta._tip).toBe(`Applied 4 mutation(s). ${capTip}`)
    expect((await addGoal(projectId, key)).body).toEqual(refusal(5))
  })

  it('never gates update, delete, or a batch without adds', async () => {
    const { key, projectId } = await freeUser()
    await mutate({ action: 'batch', projectId, mutations: goals(CAP + 1) }, key)
    expect((await mutate({ action: 'update', projectId, nodeId: 'goal-1', data: { label: 'Renamed' } }, key)).status).toBe(200)
    const batch = await mutate(
      {
        action: 'batch',
        projectId,
        mutations: [
          { action: 'update', nodeId: 'goal-2', data: { goalStatus: 'focus' } },
          { action: 'delete', nodeId: 'goal-3' },
        ],
      },
      key,
    )
    expect(batch.status).toBe(200)
    expect((await addGoal(projectId, key)).status).toBe(403) // still at the cap: 3 nodes
    expect((await mutate({ action: 'delete', projectId, nodeId: 'goal-4' }, key)).status).toBe(200)
    expect((await addGoal(projectId, key)).status).toBe(200) // 2 nodes: under the cap again
  })

  it('counts the nodes of every project the user owns', async () => {
    const { key, projectId } = await freeUser()
    const second = await app.project(undefined, key)
    await mutate({ action: 'batch', projectId, mutations: goals(2) }, key)
    const crossing = await addGoal(second, key)
    expect(crossing.body._meta.advisory).toEqual({ type: 'node_cap_reached', current: CAP, node_cap: CAP })
    expect((await addGoal(second, key)).body).toEqual(refusal(CAP))
    expect((await addGoal(projectId, key)).body).toEqual(refusal(CAP))
  })

  it('caps a lapsed paid plan as free, and never a team or builder plan', async () => {
    const lapsed = await app.user({ tier: 'builder', lapsed: true })
    const p = await app.project(undefined, lapsed.key)
    await mutate({ action: 'batch', projectId: p, mutations: goals(CAP) }, lapsed.key)
    expect((await addGoal(p, lapsed.key)).status).toBe(403)
    const builder = await app.user({ tier: 'builder' })
    const q = await app.project(undefined, builder.key)
    const res = await mutate({ action: 'batch', projectId: q, mutations: goals(CAP + 2) }, builder.key)
    expect(res.body._meta.advisory).toBeUndefined()
    expect((await addGoal(q, builder.key)).status).toBe(200)
  })
})
