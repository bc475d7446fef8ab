import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN } from './helpers'
import { type ServerProcess, startServer } from './process'

/**
 * No secret readable at rest (issue 46, item 6): after a claim and a renewal sent with an
 * Idempotency-Key, a key minted with POST /keys, a user and a key minted by the admin API and a
 * webhook registered, the backup (every row of every table) holds no claim token and no API key;
 * the webhook's secret is only in its own row (it signs every delivery), in no stored answer,
 * event or delivery. The idempotent replay of the claim still answers its tokens.
 */
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }

describe('secrets in stored answers', () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServer({ WEBHOOK_ALLOW_INSECURE: '1' })
  })
  afterAll(() => server.close())

  async function backup(): Promise<string> {
    const res = await fetch(`${server.url}/admin/v1/backup`, { headers: admin })
    expect(res.status).toBe(200)
    return await res.text()
  }

  it('keeps no claim token, API key or webhook secret readable in any stored answer, and still replays the claim', async () => {
    await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Vault', id: 'vault' } } })
    await server.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: 'vault',
        mutations: [
          { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
          { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
          { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
          { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'J1' } } },
          { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'J2' } } },
        ],
      },
    })
    const claimBody = { action: 'claim', projectId: 'vault', agent: 'agent-1', count: 2 }
    const claimed = await server.call('POST', '/api/v1/mutate', { headers: { 'idempotency-key': 'claim-1' }, body: claimBody })
    expect(claimed.status).toBe(200)
    const tokens: string[] = claimed.body.claims.map((c: { claimToken: string }) => c.claimToken)
    expect(tokens.length).toBe(2)
    const renewBody = { action: 'renewClaim', projectId: 'vault', claimToken: tokens[0] }
    const renewed = await server.call('POST', '/api/v1/mutate', { headers: { 'idempotency-key': 'renew-1' }, body: renewBody })
    expect(renewed.status).toBe(200)

    const own = await server.call('POST', '/api/v1/keys', { body: { label: 'second' } })
    expect(own.status).toBe(201)
    const user = await server.call('POST', '/admin/v1/users', { key: null, headers: admin, body: { name: 'u', tier: 'team' } })
    const minted = await server.call('POST', `/admin/v1/users/${user.body.user.id}/api-keys`, { key: null, headers: admin, body: {} })
    const hook = await server.call('POST', '/api/v1/webhooks', { body: { projectId: 'vault', url: 'http://127.0.0.1:9/hook' } })
    expect(hook.status).toBe(201)
    const apiKeys = [server.ownerKey, own.body.apiKey, user.body.apiKey, minted.body.apiKey]
    expect(apiKeys.every((k) => typeof k === 'string' && k.startsWith('arb_'))).toBe(true)

    const dump = await backup()
    // the dump holds the stored answers: the claim's and the renewal's records are there, sealed
    expect(dump).toContain('claim-1')
    expect(dump).toContain('renew-1')
    for (const secret of [...tokens, ...apiKeys]) expect(dump.includes(secret)).toBe(false)
    const linesWithHookSecret = dump.split('\n').filter((line) => line.includes(hook.body.webhook.secret))
    expect(linesWithHookSecret.length).toBe(1)
    expect(linesWithHookSecret[0]).toContain(hook.body.webhook.id)

    // the same request with the same key answers the same tokens, once more, to its caller
    const replay = await server.call('POST', '/api/v1/mutate', { headers: { 'idempotency-key': 'claim-1' }, body: claimBody })
    expect(replay.status).toBe(200)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.body).toEqual(claimed.body)
    const renewReplay = await server.call('POST', '/api/v1/mutate', { headers: { 'idempotency-key': 'renew-1' }, body: renewBody })
    expect(renewReplay.body).toEqual(renewed.body)
  })

  it('refuses, with the reason, to replay a sealed answer the server can no longer open', async () => {
    const body = { action: 'claim', projectId: 'vault', agent: 'agent-2', count: 1 }
    await server.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId: 'vault', node: { type: 'task', data: { label: 'call the bank' } } },
    })
    const first = await server.call('POST', '/api/v1/mutate', { headers: { 'idempotency-key': 'claim-2' }, body })
    expect(first.status).toBe(200)
    // the same database under another secret (a restart with REPLAY_SECRET changed)
    await server.stop()
    server = await startServer({ WEBHOOK_ALLOW_INSECURE: '1', REPLAY_SECRET: 'another-secret-another-secret' }, server)
    const replay = await server.call('POST', '/api/v1/mutate', { headers: { 'idempotency-key': 'claim-2' }, body })
    expect(replay.status).toBe(409)
    expect(replay.body.errors).toEqual([
      'The answer to this Idempotency-Key carried secrets (claim tokens) and this server cannot replay it',
    ])
  })
})
