import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { authenticate } from '../src/accounts/service'
import { listProjects } from '../src/projects/service'
import { ADMIN_TOKEN, startApp, type TestApp } from './helpers'

const admin = (app: TestApp, method: string, path: string, body?: unknown) =>
  app.call(method, `/admin/v1${path}`, { body, key: null, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })

describe('the auth cache (src/accounts/auth-cache.ts)', () => {
  let app: TestApp
  beforeAll(async () => {
    app = await startApp()
    await app.deps.auth.ready
    // PostgreSQL: the cache answers from memory only while this replica holds its lease, as a server does once it listens
    const lease = app.deps.replicas
    if (lease) {
      await lease.start()
      const deadline = Date.now() + 30_000
      while (!lease.trusted() && Date.now() < deadline) await Bun.sleep(10)
    }
  })
  afterAll(async () => {
    await app.deps.replicas?.stop()
    await app.close()
  })

  it('answers a repeated read from memory: a row changed behind its back is not seen until a write through the API', async () => {
    await app.project('cached')
    await Bun.sleep(100) // the write's own notification comes back after its commit (PostgreSQL) and empties the cache once more
    expect((await app.call('GET', '/api/v1/projects')).body.projects).toEqual([
      { id: 'cached', name: 'cached', archived: false, role: 'owner' },
    ])
    // behind the app's back: no write of ours, so nothing tells the cache
    await app.db.query("update projects set name = 'renamed in SQL' where id = 'cached'")
    expect((await app.call('GET', '/api/v1/projects')).body.projects).toEqual([
      { id: 'cached', name: 'cached', archived: false, role: 'owner' },
    ])
    // any write through the API that touches projects empties it
    await app.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'other', id: 'other' } } })
    expect((await app.call('GET', '/api/v1/projects')).body.projects).toEqual([
      { id: 'cached', name: 'renamed in SQL', archived: false, role: 'owner' },
      { id: 'other', name: 'other', archived: false, role: 'owner' },
    ])
  })

  it('refuses a revoked key on the very next request, after it was cached', async () => {
    const u = await app.user({ tier: 'team' })
    expect((await app.call('GET', '/api/v1/projects', { key: u.key })).status).toBe(200)
    const minted = await admin(app, 'POST', `/users/${u.id}/api-keys`, {})
    expect((await app.call('GET', '/api/v1/projects', { key: minted.body.apiKey })).status).toBe(200)
    await admin(app, 'DELETE', `/api-keys/${minted.body.keyId}`)
    expect((await app.call('GET', '/api/v1/projects', { key: minted.body.apiKey })).status).toBe(401)
    expect((await app.call('GET', '/api/v1/projects', { key: u.key })).status).toBe(200)
  })

  it('applies a tier change, a new member and a removed member on the very next request', async () => {
    const owner = await app.user({ tier: 'team' })
    const member = await app.user({ tier: 'strategist' })
    const projectId = await app.project('shared-cache', owner.key)
    const listed = async () => (await app.call('GET', '/api/v1/projects', { key: member.key })).body
    const nodes = async () => (await app.call('GET', `/api/v1/nodes?projectId=${projectId}`, { key: member.key })).status
    expect(await nodes()).toBe(403)
    expect((await listed()).error).toBe('REST API access requires Builder or Team tier')
    await app.call('POST', '/api/v1/members', { key: owner.key, body: { projectId, userId: member.id } })
    expect(await listed()).toEqual({ projects: [{ id: projectId, name: projectId, archived: false, role: 'member' }] })
    expect(await nodes()).toBe(200)
    await admin(app, 'PATCH', `/users/${owner.id}`, { lapsed: true })
    expect(await nodes()).toBe(403)
    await admin(app, 'PATCH', `/users/${owner.id}`, { lapsed: false })
    expect(await nodes()).toBe(200)
    await app.call('DELETE', `/api/v1/members?projectId=${projectId}&userId=${member.id}`, { key: owner.key })
    expect(await nodes()).toBe(403)
  })

  it('hands a hit out as it is (no promise), its objects frozen, and every /projects answer a list of its own', async () => {
    const cache = app.deps.auth
    const first = await cache.get('test', 'k', async () => [{ n: 1 }])
    const hit = cache.get('test', 'k', async () => [{ n: 2 }])
    expect(hit).not.toBeInstanceOf(Promise)
    expect(hit).toBe(first)
    expect(Object.isFrozen(first[0])).toBe(true)

    const owner = await app.user({ tier: 'team' })
    await app.project('own-list', owner.key)
    const user = await authenticate(app.deps, `Bearer ${owner.key}`)
    const answer = await listProjects(app.deps, user, false)
    answer.projects.pop() // what a handler does with its answer stays in its answer
    expect((await listProjects(app.deps, user, false)).projects.map((p) => p.id)).toEqual(['own-list'])
  })

  it('is told about every statement that writes users, api_keys, projects or project_members', () => {
    // Each of these files' callers calls authChanged after its commit. A new writer fails this
    // test until it is added here, with its authChanged call.
    const sqlDir = join(import.meta.dir, '..', 'sql')
    const writers: string[] = []
    for (const dir of readdirSync(sqlDir))
      if (dir !== 'migrations')
        for (const file of readdirSync(join(sqlDir, dir))) {
          const text = readFileSync(join(sqlDir, dir, file), 'utf8').replace(/--.*$/gm, '')
          if (/\b(insert\s+into|update|delete\s+from)\s+(users|api_keys|projects|project_members)\b/i.test(text))
            writers.push(`${dir}/${file}`)
        }
    // touch-api-key.sql writes only last_used_at, which no cached read returns: it needs no authChanged
    expect(writers).toContain('accounts/touch-api-key.sql')
    writers.splice(writers.indexOf('accounts/touch-api-key.sql'), 1)
    expect(writers.sort()).toEqual([
      'accounts/insert-api-key.sql',
      'accounts/insert-user.sql',
      'accounts/revoke-api-key.sql',
      'accounts/set-key-scope.sql',
      'accounts/update-user.sql',
      // an import's own project (src/projects/importing.ts): authChanged once the import ends or is removed
      'projects/begin-import.sql',
      'projects/delete-import.sql',
      'projects/delete-member.sql',
      'projects/insert-member.sql',
      'projects/insert-project.sql',
      'projects/rename.sql',
      'projects/set-archived.sql',
      'projects/set-import-lease.sql',
    ])
  })
})
