import { afterAll, describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN, startApp } from './helpers'

// live.md §6: scoped keys
const app = await startApp()
afterAll(() => app.close())

const mint = async (key: string, scope?: unknown, label?: string) =>
  app.call('POST', '/api/v1/keys', { key, body: { ...(label ? { label } : {}), ...(scope ? { scope } : {}) } })

async function owner() {
  const u = await app.user({ tier: 'team' })
  const p1 = await app.project(undefined, u.key)
  const p2 = await app.project(undefined, u.key)
  return { ...u, p1, p2 }
}

describe('minting and listing scoped keys', () => {
  it('POST /keys takes a scope; GET /keys shows each key’s scope, {role:"write"} by default', async () => {
    const u = await owner()
    const read = await mint(u.key, { role: 'read' }, 'reader')
    expect(read.status).toBe(201)
    const work = await mint(u.key, { role: 'work', projects: [u.p1, u.p1] })
    expect(work.status).toBe(201)
    const keys = (await app.call('GET', '/api/v1/keys', { key: u.key })).body.keys
    expect(keys.map((k: any) => k.scope)).toEqual([{ role: 'write' }, { role: 'read' }, { role: 'work', projects: [u.p1] }])
  })

  it('a bad scope is a 400: unknown role, no projects, more than 50, a field of its own', async () => {
    const u = await owner()
    for (const scope of [
      { role: 'admin' },
      { role: 'read', projects: [] },
      { role: 'read', projects: Array.from({ length: 51 }, (_, i) => `p${i}`) },
      { role: 'read', extra: 1 },
      { projects: [u.p1] },
      'read',
    ]) {
      const res = await app.call('POST', '/api/v1/keys', { key: u.key, body: { scope } })
      expect({ scope, status: res.status }).toEqual({ scope, status: 400 })
    }
    expect((await app.call('GET', '/api/v1/keys', { key: u.key })).body.keys).toHaveLength(1)
  })

  it('a key whose role is not write, or that has projects, cannot create, list or revoke keys: 403 key_scope', async () => {
    const u = await owner()
    const other = (await mint(u.key, { role: 'write' })).body
    for (const scope of [{ role: 'read' }, { role: 'propose' }, { role: 'work' }, { role: 'write', projects: [u.p1] }]) {
      const k = (await mint(u.key, scope)).body.apiKey
      for (const [method, path, body] of [
        ['GET', '/api/v1/keys', undefined],
        ['POST', '/api/v1/keys', { label: 'x' }],
        ['DELETE', `/api/v1/keys?keyId=${other.keyId}`, undefined],
      ] as const) {
        const res = await app.call(method, path, { key: k, body })
        expect({ scope, method, status: res.status, error: res.body.error }).toEqual({ scope, method, status: 403, error: 'key_scope' })
        expect(res.body.message).toContain(scope.role)
        expect(res.body._meta._tip).toContain('POST /api/v1/keys')
      }
    }
    expect((await app.call('GET', '/api/v1/keys', { key: u.key })).body.keys.some((k: any) => k.keyId === other.keyId)).toBe(true)
  })
})

describe('roles', () => {
  it('a read key reads and sends feedback, and is refused every write with a message naming what it may', async () => {
    const u = await owner()
    const read = (await mint(u.key, { role: 'read' })).body.apiKey
    expect((await app.call('GET', `/api/v1/nodes?projectId=${u.p1}`, { key: read })).status).toBe(200)
    expect((await app.call('GET', `/api/v1/outline?projectId=${u.p1}`, { key: read })).status).toBe(200)
    expect(
      (await app.call('POST', '/api/v1/feedback', { key: read, body: { kind: 'note', summary: 'hello from a reader' } })).status,
    ).toBeLessThan(300)
    const add = await app.call('POST', '/api/v1/mutate', {
      key: read,
      body: { action: 'add', projectId: u.p1, node: { type: 'goal', data: { label: 'No' } } },
    })
    expect(add.status).toBe(403)
    expect(add.body.error).toBe('key_scope')
    expect(add.body.message).toBe(
      'This key has role read, which allows every read (GET), the stream, presence without a field, and POST /feedback; nothing else. The action add needs a key with role write.',
    )
    expect(add.body._meta._tip).toContain('arbor key mint')
    const hook = await app.call('POST', '/api/v1/webhooks', { key: read, body: { projectId: u.p1, url: 'https://example.com/h' } })
    expect([hook.status, hook.body.error]).toEqual([403, 'key_scope'])
    expect((await app.call('GET', `/api/v1/nodes?projectId=${u.p1}`, { key: u.key })).body.nodes).toEqual([])
  })

  it('a propose key may not claim; a work key claims, updates the node it holds (with the token), and nothing else', async () => {
    const u = await owner()
    const seeded = await app.call('POST', '/api/v1/mutate', {
      key: u.key,
      body: {
        action: 'batch',
        projectId: u.p1,
        mutations: [
          { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
          { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
          { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
          { action: 'add', node: { id: 'draft-j1', type: 'job', parentId: 'draft-a', data: { label: 'J1' } } },
          { action: 'add', node: { id: 'draft-j2', type: 'job', parentId: 'draft-a', data: { label: 'J2' } } },
        ],
      },
    })
    expect(seeded.status).toBe(200)
    const [j1, j2] = seeded.body.results.slice(3).map((r: any) => r.node.id)
    const propose = (await mint(u.key, { role: 'propose' })).body.apiKey
    const claimBody = (nodeIds: string[]) => ({ action: 'claim', projectId: u.p1, nodeIds, agent: 'bot/1' })
    const refused = await app.call('POST', '/api/v1/mutate', { key: propose, body: claimBody([j1]) })
    expect([refused.status, refused.body.error]).toEqual([403, 'key_scope'])
    expect(refused.body.message).toContain('propose')

    const work = (await mint(u.key, { role: 'work' })).body.apiKey
    const claimed = await app.call('POST', '/api/v1/mutate', { key: work, body: claimBody([j1]) })
    expect(claimed.status).toBe(200)
    const token = claimed.body.claims[0].claimToken
    const update = (nodeId: string, claimToken?: string, key = work) =>
      app.call('POST', '/api/v1/mutate', {
        key,
        body: { action: 'update', projectId: u.p1, nodeId, ...(claimToken ? { claimToken } : {}), data: { status: 'done' } },
      })
    // without the token, on another node, or with the token but another key (of the same user): refused
    expect((await update(j1)).body.error).toBe('key_scope')
    expect((await update(j2, token)).body.error).toBe('key_scope')
    const work2 = (await mint(u.key, { role: 'work' })).body.apiKey
    expect((await update(j1, token, work2)).body.error).toBe('key_scope')
    const del = await app.call('POST', '/api/v1/mutate', {
      key: work,
      body: { action: 'delete', projectId: u.p1, nodeId: j1, claimToken: token },
    })
    expect([del.status, del.body.error]).toEqual([403, 'key_scope'])
    // with its own live claim and token: the update lands
    const done = await update(j1, token)
    expect(done.status).toBe(200)
    expect(done.body.node.data.status).toBe('done')
    // a released claim no longer lets it write
    const again = await app.call('POST', '/api/v1/mutate', { key: work, body: claimBody([j2]) })
    const t2 = again.body.claims[0].claimToken
    expect(
      (await app.call('POST', '/api/v1/mutate', { key: work, body: { action: 'releaseClaim', projectId: u.p1, claimToken: t2 } })).status,
    ).toBe(200)
    expect((await update(j2, t2)).body.error).toBe('key_scope')
  })
})

describe('projects', () => {
  it('a key with projects works on those only: 403 key_scope elsewhere, GET /projects lists only those', async () => {
    const u = await owner()
    const k = (await mint(u.key, { role: 'write', projects: [u.p1] })).body.apiKey
    const listed = await app.call('GET', '/api/v1/projects', { key: k })
    expect(listed.body.projects.map((p: any) => p.id)).toEqual([u.p1])
    // again (the fast lane answers a plain GET /projects from the cache)
    expect((await app.call('GET', '/api/v1/projects', { key: k })).body.projects.map((p: any) => p.id)).toEqual([u.p1])
    expect((await app.call('GET', '/api/v1/projects?includeArchived=true', { key: k })).body.projects).toHaveLength(1)
    expect((await app.call('GET', `/api/v1/nodes?projectId=${u.p1}`, { key: k })).status).toBe(200)
    for (const path of [`/api/v1/nodes?projectId=${u.p2}`, `/api/v1/iterations?projectId=${u.p2}`, `/api/v1/events?projectId=${u.p2}`]) {
      const res = await app.call('GET', path, { key: k })
      expect({ path, status: res.status, error: res.body.error }).toEqual({ path, status: 403, error: 'key_scope' })
      expect(res.body.message).toContain(u.p2)
    }
    const add = await app.call('POST', '/api/v1/mutate', {
      key: k,
      body: { action: 'add', projectId: u.p2, node: { type: 'goal', data: { label: 'No' } } },
    })
    expect([add.status, add.body.error]).toEqual([403, 'key_scope'])
    // a project-limited key cannot make a new project either
    const created = await app.call('POST', '/api/v1/mutate', { key: k, body: { action: 'addProject', project: { name: 'new' } } })
    expect([created.status, created.body.error]).toEqual([403, 'key_scope'])
    // the owner's key still sees both
    expect((await app.call('GET', '/api/v1/projects', { key: u.key })).body.projects).toHaveLength(2)
  })
})

describe('the operator', () => {
  it('mints scoped keys through the admin API and re-scopes a live key; the change holds at once', async () => {
    const u = await owner()
    const minted = await app.call('POST', `/admin/v1/users/${u.id}/api-keys`, {
      key: ADMIN_TOKEN,
      body: { label: 'agent', scope: { role: 'read', projects: [u.p1] } },
    })
    expect(minted.status).toBe(201)
    const k = minted.body.apiKey
    const add = { action: 'add', projectId: u.p1, node: { type: 'goal', data: { label: 'G' } } }
    // read once, so the key's scope is in the auth cache
    expect((await app.call('GET', `/api/v1/nodes?projectId=${u.p1}`, { key: k })).status).toBe(200)
    expect((await app.call('POST', '/api/v1/mutate', { key: k, body: add })).status).toBe(403)
    const rescoped = await app.call('PATCH', `/admin/v1/api-keys/${minted.body.keyId}`, {
      key: ADMIN_TOKEN,
      body: { scope: { role: 'write' } },
    })
    expect(rescoped.body).toEqual({ keyId: minted.body.keyId, scope: { role: 'write' } })
    expect((await app.call('POST', '/api/v1/mutate', { key: k, body: add })).status).toBe(200)
    expect((await app.call('GET', `/api/v1/nodes?projectId=${u.p2}`, { key: k })).status).toBe(200)
    await app.call('PATCH', `/admin/v1/api-keys/${minted.body.keyId}`, {
      key: ADMIN_TOKEN,
      body: { scope: { role: 'read', projects: [u.p2] } },
    })
    expect((await app.call('GET', `/api/v1/nodes?projectId=${u.p1}`, { key: k })).body.error).toBe('key_scope')
    expect(
      (await app.call('PATCH', `/admin/v1/api-keys/${minted.body.keyId}`, { key: ADMIN_TOKEN, body: { scope: { role: 'boss' } } })).status,
    ).toBe(400)
    expect((await app.call('PATCH', '/admin/v1/api-keys/key_nope', { key: ADMIN_TOKEN, body: { scope: { role: 'read' } } })).status).toBe(
      404,
    )
  })
})

describe('/mcp', () => {
  async function rpc(key: string, message: unknown) {
    const res = await app.handle(
      new Request('http://arbor.test/mcp', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify(message),
      }),
    )
    return res.json() as Promise<any>
  }
  const tools = async (key: string) => (await rpc(key, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })).result.tools

  it('offers a read key only the tools that change nothing, and tells a propose or work key what it may', async () => {
    const u = await owner()
    const all = await tools(u.key)
    const readTools = await tools((await mint(u.key, { role: 'read' })).body.apiKey)
    expect(readTools.length).toBeGreaterThan(3)
    expect(readTools.length).toBeLessThan(all.length)
    expect(readTools.every((t: any) => t.annotations.readOnlyHint)).toBe(true)
    const work = (await mint(u.key, { role: 'work' })).body.apiKey
    const workTools = await tools(work)
    expect(
      workTools
        .filter((t: any) => !t.annotations.readOnlyHint)
        .map((t: any) => t.name)
        .sort(),
    ).toEqual(['claim_work', 'mutate', 'release_work'])
    expect(workTools.find((t: any) => t.name === 'mutate').description).toContain('This key has role work: it may')
    const proposeTools = await tools((await mint(u.key, { role: 'propose' })).body.apiKey)
    expect(proposeTools.filter((t: any) => !t.annotations.readOnlyHint).map((t: any) => t.name)).toEqual(['mutate'])
    expect(proposeTools.find((t: any) => t.name === 'mutate').description).toContain('withdrawProposal')
    // a write key's descriptions say nothing of roles
    expect(all.find((t: any) => t.name === 'mutate').description).not.toContain('role')
    // a work key's call of a tool it is not offered: a tool error, nothing written
    const call = await rpc(work, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'submit_feedback', arguments: { kind: 'note', summary: 'x' } },
    })
    expect(call.result.isError).toBe(true)
    expect(call.result.content[0].text).toContain('key_scope')
  })
})
