import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN } from './helpers'
import { type ServerProcess, startServer } from './process'

// Issue 28, items 2 and 3, through the real server: concurrent requests over real sockets
let server: ServerProcess
beforeAll(async () => {
  server = await startServer({ FREE_TIER_NODE_CAP: '250', FREE_TIER_MAX_PROJECTS: '3' })
})
afterAll(() => server.close())

const freeUser = async () => {
  const res = await server.call('POST', '/admin/v1/users', {
    key: null,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    body: { name: 'free', tier: 'free' },
  })
  return res.body.apiKey as string
}
const mutate = (body: unknown, key: string) => server.call('POST', '/api/v1/mutate', { body, key })
const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length

describe('free plan caps under concurrent requests to the real server', () => {
  it('30 concurrent adds at 249 of 250 nodes: 250 stored', async () => {
    const key = await freeUser()
    await mutate({ action: 'addProject', project: { name: 'Capped', id: 'capped' } }, key)
    const goals = Array.from({ length: 249 }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `G${i}` } } }))
    expect((await mutate({ action: 'batch', projectId: 'capped', mutations: goals }, key)).status).toBe(200)
    const statuses = (
      await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          mutate({ action: 'add', projectId: 'capped', node: { type: 'goal', data: { label: `L${i}` } } }, key),
        ),
      )
    ).map((r) => r.status)
    expect({ ok: count(statuses, 200), refused: count(statuses, 403) }).toEqual({ ok: 1, refused: 29 })
    expect((await server.call('GET', '/api/v1/nodes?projectId=capped', { key })).body.nodes).toHaveLength(250)
  })

  it('20 concurrent addProject: 3 projects', async () => {
    const key = await freeUser()
    const statuses = (
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => mutate({ action: 'addProject', project: { name: `P${i}`, id: `proc-race-${i}` } }, key)),
      )
    ).map((r) => r.status)
    expect({ ok: count(statuses, 200), refused: count(statuses, 403) }).toEqual({ ok: 3, refused: 17 })
    expect((await server.call('GET', '/api/v1/projects', { key })).body.projects).toHaveLength(3)
  })
})
