import { afterAll, describe, expect, it } from 'bun:test'
import { startApp } from './helpers'

// Issue 28, items 2 and 3: the free plan's caps under real concurrent requests. api.md's node cap
// is a soft ceiling (an add or batch that starts under it may overshoot), counted over every
// project the free user owns (self-hosting.md); the project limit is a hard one.
const app = await startApp({ FREE_TIER_NODE_CAP: '250', FREE_TIER_MAX_PROJECTS: '3' })
afterAll(() => app.close())

const mutate = (body: unknown, key: string) => app.call('POST', '/api/v1/mutate', { body, key })
const goals = (n: number, tag = '') =>
  Array.from({ length: n }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `G${tag}${i}` } } }))
const stored = async (key: string, projectIds: string[]) => {
  let total = 0
  for (const projectId of projectIds) total += (await app.call('GET', `/api/v1/nodes?projectId=${projectId}`, { key })).body.nodes.length
  return total
}
const tally = (statuses: number[]) => statuses.reduce<Record<number, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {})

describe('free-tier node cap under concurrency', () => {
  it('10 concurrent 1,000-node batches from 0 nodes: exactly one lands, nine are refused 403 node_cap_reached', async () => {
    const user = await app.user({ tier: 'free' })
    const projectIds = [await app.project(undefined, user.key), await app.project(undefined, user.key)]
    // the batches go to two projects of the same owner: the cap counts across them
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        mutate({ action: 'batch', projectId: projectIds[i % 2], mutations: goals(1000, `b${i}-`) }, user.key),
      ),
    )
    expect(tally(answers.map((r) => r.status))).toEqual({ 200: 1, 403: 9 })
    for (const r of answers.filter((a) => a.status === 403))
      expect(r.body).toEqual({
        error: 'node_cap_reached',
        message: 'The free plan holds 250 nodes across your projects; delete 751 to add more',
        current: 1000,
        node_cap: 250,
        delete_to_resume: 751,
        _meta: { guide: 'http://arbor.test/api/v1/guide' },
      })
    expect(await stored(user.key, projectIds)).toBe(1000)
  })

  it('30 concurrent single adds at 249 of 250: 250 stored, the others 403 node_cap_reached', async () => {
    const user = await app.user({ tier: 'free' })
    const projectIds = [await app.project(undefined, user.key), await app.project(undefined, user.key)]
    expect((await mutate({ action: 'batch', projectId: projectIds[0], mutations: goals(249) }, user.key)).status).toBe(200)
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        mutate({ action: 'add', projectId: projectIds[i % 2], node: { type: 'goal', data: { label: `late ${i}` } } }, user.key),
      ),
    )
    expect(tally(answers.map((r) => r.status))).toEqual({ 200: 1, 403: 29 })
    expect(answers.filter((r) => r.status === 403).map((r) => r.body.current)).toEqual(Array(29).fill(250))
    expect(await stored(user.key, projectIds)).toBe(250)
  })
})

describe('free project limit under concurrency', () => {
  it('20 concurrent addProject from a free user with none: 3 created, 17 refused 403 project_limit', async () => {
    const user = await app.user({ tier: 'free' })
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        mutate({ action: 'addProject', project: { name: `P${i}`, id: `race-${user.id.slice(4).toLowerCase()}-${i}` } }, user.key),
      ),
    )
    expect(tally(answers.map((r) => r.status))).toEqual({ 200: 3, 403: 17 })
    for (const r of answers.filter((a) => a.status === 403))
      expect(r.body).toEqual({
        error: 'project_limit',
        message: 'Your plan allows 3 projects; archiving one does not free a slot',
        limit: 3,
        _meta: expect.any(Object),
      })
    expect((await app.call('GET', '/api/v1/projects', { key: user.key })).body.projects).toHaveLength(3)
  })
})
