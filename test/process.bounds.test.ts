import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type ServerProcess, startServer } from './process'

/**
 * Arrays a client sends have bounds (issue 46, item 4): blockedBy like serves (at most 50
 * distinct ids of existing approaches, never the approach itself, no cycle), webhook events,
 * a share link's includedGoalIds and a focusGoals command's goalIds. Each refusal names its rule.
 */
const TIP =
  'blockedBy is an array of at most 50 distinct ids of existing approaches, never the approach itself, and no approach may end up blocking itself through others'

/** PUBLIC_BASE_URL's default with PORT=0 (the test server's) */
const GUIDE = 'http://localhost:0/api/v1/guide'

describe('bounded arrays', () => {
  let server: ServerProcess
  let approaches: string[] = []
  beforeAll(async () => {
    server = await startServer({ WEBHOOK_ALLOW_INSECURE: '1' })
    await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Bounds', id: 'bounds' } } })
    const made = await server.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: 'bounds',
        mutations: [
          { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
          { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
          ...Array.from({ length: 52 }, (_, i) => ({
            action: 'add',
            node: { type: 'approach', parentId: 'draft-n', data: { label: `A${i}` } },
          })),
        ],
      },
    })
    expect(made.status).toBe(200)
    const listed = await server.call('GET', '/api/v1/nodes?projectId=bounds&type=approach')
    approaches = listed.body.nodes.map((n: { id: string }) => n.id)
    expect(approaches.length).toBe(52)
  })
  afterAll(() => server.close())

  const setBlockedBy = (nodeId: string, blockedBy: unknown) =>
    server.call('POST', '/api/v1/mutate', { body: { action: 'update', projectId: 'bounds', nodeId, data: { blockedBy } } })
  const refused = (message: string) => ({ success: false, errors: [message], _meta: { _tip: TIP, guide: GUIDE } })

  it('refuses more than 50 ids, 60,000 repeats included, and repeats, and takes 50 distinct approaches', async () => {
    const [first, ...others] = approaches as [string, ...string[]]
    const flood = await setBlockedBy(first, Array(60_000).fill(others[0]))
    expect({ status: flood.status, body: flood.body }).toEqual({
      status: 400,
      body: refused('blockedBy has 60000 ids; at most 50 are allowed'),
    })
    expect((await setBlockedBy(first, others.slice(0, 51))).body).toEqual(refused('blockedBy has 51 ids; at most 50 are allowed'))
    expect((await setBlockedBy(first, [others[0], others[0]])).body).toEqual(refused('blockedBy must not repeat an id'))
    expect((await setBlockedBy(first, [first])).body).toEqual(refused('blockedBy must not name the approach itself'))
    const fifty = await setBlockedBy(first, others.slice(0, 50))
    expect(fifty.status).toBe(200)
    expect(fifty.body.node.data.blockedBy).toEqual(others.slice(0, 50))
    await setBlockedBy(first, null)
  })

  it('refuses a blockedBy that closes a cycle, across stored approaches and inside one batch', async () => {
    const [a, b, c, x, y] = approaches.slice(-5) as [string, string, string, string, string]
    expect((await setBlockedBy(a, [b])).status).toBe(200)
    expect((await setBlockedBy(b, [c])).status).toBe(200)
    expect((await setBlockedBy(c, [a])).body).toEqual(
      refused(`blockedBy would make a cycle (each blocked by the next): ${c} → ${a} → ${b} → ${c}`),
    )
    const batch = await server.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: 'bounds',
        mutations: [
          { action: 'update', nodeId: x, data: { blockedBy: [y] } },
          { action: 'update', nodeId: y, data: { blockedBy: [x] } },
        ],
      },
    })
    expect(batch.status).toBe(400)
    expect(batch.body.errors).toEqual([`mutations[1]: blockedBy would make a cycle (each blocked by the next): ${y} → ${x} → ${y}`])
    expect(batch.body._meta._tip).toBe(TIP)
    // nothing of the refused batch was written
    const stored = await server.call('GET', '/api/v1/nodes?projectId=bounds&type=approach')
    expect(stored.body.nodes.find((n: { id: string }) => n.id === x).data.blockedBy).toBeUndefined()
  })

  it('bounds webhook events, share goal ids and focusGoals goal ids', async () => {
    const hook = await server.call('POST', '/api/v1/webhooks', {
      body: { projectId: 'bounds', url: 'http://127.0.0.1:9/hook', events: Array(13).fill('node.added') },
    })
    expect(hook.status).toBe(400)
    expect(hook.body.error).toBe(
      'Invalid events: 13 entries; at most 12, each event name once. Valid: node.added, node.updated, node.deleted, iteration.added, iteration.updated, iteration.deleted',
    )
    const ids = Array.from({ length: 1001 }, (_, i) => `goal-${i + 1}`)
    const share = await server.call('POST', '/api/v1/share', { body: { projectId: 'bounds', settings: { includedGoalIds: ids } } })
    expect({ status: share.status, error: share.body.error }).toEqual({
      status: 400,
      error: 'settings.includedGoalIds has 1001 distinct ids; at most 1000 are allowed',
    })
    const focus = await server.call('POST', '/api/v1/view-command', {
      body: { projectId: 'bounds', command: { type: 'focusGoals', goalIds: ids } },
    })
    expect(focus.status).toBe(200)
    expect(focus.body.success).toBe(false)
    expect(focus.body._meta._tip).toBe('focusGoals takes at most 1000 distinct goal ids; 1001 were sent.')
  })
})
