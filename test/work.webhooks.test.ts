import { afterAll, describe, expect, it } from 'bun:test'
import { startApp } from './helpers'
import { startReceiver, until } from './receiver'

// node.claimed and node.released reach a webhook only when it lists them by name (agents-and-app.md, 2).
const app = await startApp({ WEBHOOK_ALLOW_INSECURE: 'true' }, { loops: true })
const rx = startReceiver()
afterAll(async () => {
  await app.close()
  rx.close()
})

const mutate = (body: Record<string, unknown>) => app.call('POST', '/api/v1/mutate', { body })

describe('claim events on webhooks', () => {
  it('are sent to a webhook that lists them, never to one registered for all six', async () => {
    const p = await app.project()
    const all = await app.call('POST', '/api/v1/webhooks', { body: { projectId: p, url: rx.url('/all') } })
    expect(all.body.webhook.events).toEqual([
      'node.added',
      'node.updated',
      'node.deleted',
      'iteration.added',
      'iteration.updated',
      'iteration.deleted',
    ])
    const listed = await app.call('POST', '/api/v1/webhooks', {
      body: { projectId: p, url: rx.url('/claims'), events: ['node.released', 'node.updated', 'node.claimed'] },
    })
    expect(listed.status).toBe(201)
    expect(listed.body.webhook.events).toEqual(['node.updated', 'node.claimed', 'node.released'])
    await mutate({ action: 'add', projectId: p, node: { type: 'task', data: { label: 'Ship it' } } })
    await mutate({ action: 'update', projectId: p, nodeId: 'task-1', data: { kind: 'do-it' } })
    const [c] = (await mutate({ action: 'claim', projectId: p, agent: 'bot', count: 1 })).body.claims
    await mutate({ action: 'releaseClaim', projectId: p, claimToken: c.claimToken })
    await mutate({ action: 'update', projectId: p, nodeId: 'task-1', data: { description: 'last' } })
    const last = (path: string) => rx.on(path).some((r) => r.json?.node?.data?.description === 'last')
    await until(() => last('/all') && last('/claims'), 'the last update on both webhooks', 20_000)
    // (the classifier may add an update of its own)
    expect(new Set(rx.on('/all').map((r) => r.json.event))).toEqual(new Set(['node.added', 'node.updated']))
    // deliveries sent together travel side by side: they may arrive in either order (docs/api-guide.md)
    const claimEvents = rx.on('/claims').filter((r) => r.json.event !== 'node.updated')
    expect(claimEvents.map((r) => r.json.event).sort()).toEqual(['node.claimed', 'node.released'])
    const claimed = claimEvents.find((r) => r.json.event === 'node.claimed')!
    expect(claimed.headers['x-arbor-event']).toBe('node.claimed')
    expect(claimed.json).toEqual({
      event: 'node.claimed',
      project_id: p,
      timestamp: expect.any(String),
      nodeId: 'task-1',
      agent: 'bot',
      expiresAt: c.expiresAt,
      // history.md, 4: the claim's agent is the actor's
      actor: { userId: expect.stringMatching(/^usr_/), userName: 'owner', agent: 'bot', via: 'api' },
    })
  })
})
