import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startFakeMeili } from './meili-fake'
import { type ServerProcess, startServer } from './process'
import { startReceiver } from './receiver'

/**
 * Every background behaviour a user relies on, seen through HTTP alone from a real server
 * process with its loops on (test/process.ts): nothing here calls a `tick`. The loops' logic
 * is tested with an explicit clock in their own files.
 */
describe('background work in the server process', () => {
  let server: ServerProcess
  const receiver = startReceiver()
  beforeAll(async () => {
    server = await startServer({ WEBHOOK_ALLOW_INSECURE: '1', WEBHOOK_BACKOFF_SCALE: '0.001' })
    await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Loops', id: 'loops' } } })
  }, 60_000)
  afterAll(async () => {
    await server.close()
    receiver.close()
  })

  it('retries a failed webhook delivery until the receiver takes it, with one delivery id', async () => {
    receiver.plan('/retry', 500, 503)
    const hook = await server.call('POST', '/api/v1/webhooks', {
      body: { projectId: 'loops', url: receiver.url('/retry'), events: ['node.added'] },
    })
    expect(hook.status).toBe(201)
    await server.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId: 'loops', node: { type: 'goal', data: { label: 'Retried' } } },
    })
    await server.until(async () => receiver.on('/retry').length >= 3, 30_000, 'three attempts')
    const attempts = receiver.on('/retry')
    expect(new Set(attempts.map((r) => r.headers['x-arbor-delivery'])).size).toBe(1)
    expect(attempts.map((r) => r.json.node.data.label)).toEqual(['Retried', 'Retried', 'Retried'])
    const listed = await server.until(async () => {
      const res = await server.call('GET', '/api/v1/webhooks?projectId=loops')
      return res.body.webhooks[0].lastStatus === 200 ? res.body.webhooks[0] : null
    })
    expect(listed.lastDeliveryAt).toEqual(expect.any(String))
  }, 60_000)

  it('classifies a task added without a kind within 5 seconds', async () => {
    const added = await server.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId: 'loops', node: { type: 'task', data: { label: 'Prod checkout is down for EU users - fix now' } } },
    })
    const id = added.body.node.id
    expect(added.body.node.data.kind).toBeUndefined()
    const started = Date.now()
    const node = await server.until(async () => {
      const res = await server.call('GET', '/api/v1/nodes?projectId=loops&type=task')
      return res.body.nodes.find((n: any) => n.id === id && n.data.kind)
    }, 5_000)
    expect({ kind: node.data.kind, urgent: node.data.urgent }).toEqual({ kind: 'do-it', urgent: true })
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it('stops serving a share link once it has expired, and lists it inactive', async () => {
    const minted = await server.call('POST', '/api/v1/share', { body: { projectId: 'loops', expiresInDays: 1 / 86_400 } })
    expect(minted.status).toBe(201)
    expect((await server.call('GET', `/api/v1/public/share/${minted.body.token}`, { key: null })).status).toBe(200)
    await Bun.sleep(Math.max(0, Date.parse(minted.body.expiresAt) - Date.now()) + 300)
    expect((await server.call('GET', `/api/v1/public/share/${minted.body.token}`, { key: null })).status).toBe(404)
    expect((await server.call('GET', `/s/${minted.body.token}`, { key: null })).status).toBe(404)
    const listed = await server.call('GET', '/api/v1/share?projectId=loops')
    expect(listed.body.tokens.find((t: any) => t.token === minted.body.token).active).toBe(false)
  })
})

describe('Meilisearch in the server process', () => {
  const meili = startFakeMeili({ masterKey: 'test-master-key' })
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServer({ MEILI_URL: meili.url, MEILI_API_KEY: 'test-master-key' })
    await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Meili', id: 'meili' } } })
  }, 60_000)
  afterAll(async () => {
    await server.close()
    meili.stop()
  })

  it('receives every write without anyone calling tick, and search answers from it', async () => {
    const added = await server.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: 'meili',
        mutations: [
          { action: 'add', node: { id: 'draft-a', type: 'task', data: { label: 'Renew the TLS certificate of the marketing site' } } },
          { action: 'add', node: { id: 'draft-b', type: 'task', data: { label: 'Invoices can be produced in German or Dutch' } } },
        ],
      },
    })
    const tls = added.body.idMap['draft-a']
    const found = await server.until(async () => {
      const res = await server.call('GET', '/api/v1/search?projectId=meili&q=certificate&mode=keyword')
      return res.body.results?.some((r: any) => r.node.id === tls) ? res : null
    }, 30_000)
    expect(found.body._meta.search.backend).toBe('meilisearch')
    await server.call('POST', '/api/v1/mutate', { body: { action: 'delete', projectId: 'meili', nodeId: tls } })
    await server.until(async () => {
      const res = await server.call('GET', '/api/v1/search?projectId=meili&q=certificate&mode=keyword')
      return res.body.results && !res.body.results.some((r: any) => r.node.id === tls)
    }, 30_000)
  }, 60_000)
})

describe.skipIf(!process.env.TEST_DATABASE_URL)('Meilisearch behind two replicas on one PostgreSQL', () => {
  const meili = startFakeMeili({ masterKey: 'test-master-key' })
  const env = { MEILI_URL: meili.url, MEILI_API_KEY: 'test-master-key' }
  let a: ServerProcess
  let b: ServerProcess
  beforeAll(async () => {
    a = await startServer(env)
    b = await startServer(env, a)
    await a.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Two', id: 'two' } } })
  }, 60_000)
  afterAll(async () => {
    await b?.stop()
    await a?.close()
    meili.stop()
  })

  it('ends with exactly the live nodes in the index, whichever replica took each write', async () => {
    const live = new Set<string>()
    for (let i = 0; i < 12; i++) {
      const via = i % 2 ? b : a
      const added = await via.call('POST', '/api/v1/mutate', {
        body: { action: 'add', projectId: 'two', node: { type: 'task', data: { label: `Chore number ${i}` } } },
      })
      live.add(added.body.node.id)
      if (i % 3 === 2) {
        // delete it through the other replica right away: the add and the delete race to the index
        await (via === a ? b : a).call('POST', '/api/v1/mutate', {
          body: { action: 'delete', projectId: 'two', nodeId: added.body.node.id },
        })
        live.delete(added.body.node.id)
      }
    }
    const indexed = () =>
      [...meili.documents('arbor_nodes').values()]
        .filter((d) => d.projectId === 'two')
        .map((d) => d.id as string)
        .sort()
    await a.until(async () => JSON.stringify(indexed()) === JSON.stringify([...live].sort()), 30_000, 'the index to hold the live nodes')
    await Bun.sleep(1500) // and it stays so: no replica pushes a stale add afterwards
    expect(indexed()).toEqual([...live].sort())
  }, 60_000)
})
