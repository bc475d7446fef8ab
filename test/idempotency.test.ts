import { afterAll, describe, expect, it } from 'bun:test'
import { deleteExpiredKeys, requestHash } from '../src/http/idempotency'
import { loops } from '../src/scheduler'
import { startApp } from './helpers'

// api.md POST /mutate, Idempotency rules 1–6
const app = await startApp()
afterAll(() => app.close())

const GUIDE = 'http://arbor.test/api/v1/guide'
const DIFFERENT = { success: false, errors: ['Idempotency-Key already used with a different request body'] }
const rename = (projectId: string, name: string, idempotencyKey?: string, key?: string) =>
  app.call('POST', '/api/v1/mutate', {
    key,
    body: { action: 'renameProject', projectId, name },
    headers: idempotencyKey ? { 'idempotency-key': idempotencyKey } : {},
  })
const nameOf = async (projectId: string) =>
  (await app.call('GET', '/api/v1/projects')).body.projects.find((p: any) => p.id === projectId).name
let n = 0
const freshKey = () => `key-${++n}-${crypto.randomUUID()}`

describe('Idempotency-Key on POST /mutate', () => {
  it('does not replay to a caller who lost access to the project since (403, as a fresh request)', async () => {
    const owner = await app.user({ tier: 'team' })
    const member = await app.user({ tier: 'builder' })
    const projectId = await app.project(undefined, owner.key)
    await app.call('POST', '/api/v1/members', { key: owner.key, body: { projectId, userId: member.id } })
    const key = freshKey()
    const add = () =>
      app.call('POST', '/api/v1/mutate', {
        key: member.key,
        body: { action: 'add', projectId, node: { type: 'goal', data: { label: 'Secret plan' } } },
        headers: { 'idempotency-key': key },
      })
    expect((await add()).status).toBe(200)
    expect((await add()).headers.get('idempotent-replayed')).toBe('true')
    await app.call('DELETE', `/api/v1/members?projectId=${projectId}&userId=${member.id}`, { key: owner.key })
    const after = await add()
    expect({ status: after.status, body: after.body, replayed: after.headers.get('idempotent-replayed') }).toEqual({
      status: 403,
      body: {
        error: 'project_access_denied',
        message: 'API key does not have access to this project',
        _meta: {
          guide: GUIDE,
          _tip: `projectId "${projectId}" names no project this key can see (a typo, or a project it is not a member of); GET /api/v1/projects lists the ids this key can use.`,
        },
      },
      replayed: null,
    })
  })

  it('keeps no answer for a caller without access: once let in, the same key runs the write', async () => {
    const owner = await app.user({ tier: 'team' })
    const member = await app.user({ tier: 'builder' })
    const projectId = await app.project(undefined, owner.key)
    const key = freshKey()
    const add = () =>
      app.call('POST', '/api/v1/mutate', {
        key: member.key,
        body: { action: 'add', projectId, node: { type: 'goal', data: { label: 'Let in later' } } },
        headers: { 'idempotency-key': key },
      })
    const refused = await add()
    expect([refused.status, refused.body.error]).toEqual([403, 'project_access_denied'])
    await app.call('POST', '/api/v1/members', { key: owner.key, body: { projectId, userId: member.id } })
    const after = await add()
    expect({ status: after.status, label: after.body.node?.data?.label, replayed: after.headers.get('idempotent-replayed') }).toEqual({
      status: 200,
      label: 'Let in later',
      replayed: null,
    })
  })

  it('replays the original response for the same key and body, with Idempotent-Replayed: true, without writing again', async () => {
    const id = await app.project()
    const key = freshKey()
    const first = await rename(id, 'First', key)
    expect(first.status).toBe(200)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    // someone else renames in between; a replay must not undo that
    await rename(id, 'Meanwhile')
    const again = await rename(id, 'First', key)
    expect(again.status).toBe(200)
    expect(again.body).toEqual(first.body)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(await nameOf(id)).toBe('Meanwhile')
  })

  it('treats the same fields in another order as the same body', async () => {
    const id = await app.project()
    const key = freshKey()
    await rename(id, 'Ordered', key)
    const reordered = await app.call('POST', '/api/v1/mutate', {
      body: { name: 'Ordered', projectId: id, action: 'renameProject' },
      headers: { 'idempotency-key': key },
    })
    expect(reordered.headers.get('idempotent-replayed')).toBe('true')
  })

  it('answers 409 when the key comes back with a different body, and changes nothing', async () => {
    const id = await app.project()
    const key = freshKey()
    await rename(id, 'Original', key)
    const res = await rename(id, 'Different', key)
    expect(res.status).toBe(409)
    expect(res.body).toEqual(DIFFERENT)
    expect(await nameOf(id)).toBe('Original')
  })

  it('replays a refusal unchanged as well', async () => {
    const id = await app.project()
    const key = freshKey()
    const first = await rename(id, 'n'.repeat(101), key)
    expect(first.status).toBe(400)
    expect(first.body._meta.guide).toBe(GUIDE)
    const again = await rename(id, 'n'.repeat(101), key)
    expect(again.status).toBe(400)
    expect(again.body).toEqual(first.body)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
  })

  it('answers 409 while the first request with the key is still running', async () => {
    const id = await app.project()
    const key = freshKey()
    const owner = (await app.db.query<{ id: string }>("select id from users where name = 'owner'"))[0]!.id
    // the first request has claimed the key and not answered yet (another replica, mid-write)
    const hash = requestHash({ action: 'renameProject', projectId: id, name: 'Slow' })
    await app.db.query('insert into idempotency_keys (user_id, key, request_hash) values ($1, $2, $3)', [owner, key, hash])
    const res = await rename(id, 'Slow', key)
    expect(res.status).toBe(409)
    expect(res.body).toEqual({
      success: false,
      errors: ['A request with this Idempotency-Key is still in progress; retry shortly'],
      _meta: { _tip: 'The first request with this key has not finished. Retry the same request in a few seconds.' },
    })
    expect(await nameOf(id)).toBe(id)
  })

  it('runs the write at once when the first request with the key died mid-write (its record unanswered, nobody holding it)', async () => {
    const id = await app.project()
    const key = freshKey()
    const owner = (await app.db.query<{ id: string }>("select id from users where name = 'owner'"))[0]!.id
    // what a replica killed with -9 leaves: the key claimed and held by a transaction that rolled back
    const hash = requestHash({ action: 'renameProject', projectId: id, name: 'Retried' })
    await app.db.query('insert into idempotency_keys (user_id, key, request_hash, held) values ($1, $2, $3, true)', [owner, key, hash])
    const res = await rename(id, 'Retried', key)
    expect(res.status).toBe(200)
    expect(await nameOf(id)).toBe('Retried')
    const again = await rename(id, 'Retried', key)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body).toEqual(res.body)
  })

  it('scopes keys per user: another user’s identical key is a fresh request', async () => {
    const other = await app.user()
    const mine = await app.project()
    const theirs = await app.project(undefined, other.key)
    const key = freshKey()
    expect((await rename(mine, 'Mine', key)).status).toBe(200)
    const res = await rename(theirs, 'Theirs', key, other.key)
    expect(res.status).toBe(200)
    expect(res.headers.get('idempotent-replayed')).toBeNull()
    expect(res.body.project).toEqual({ id: theirs, name: 'Theirs' })
  })

  it('takes the key from the body field idempotencyKey just like the header', async () => {
    const id = await app.project()
    const key = freshKey()
    const send = (name: string) =>
      app.call('POST', '/api/v1/mutate', { body: { action: 'renameProject', projectId: id, name, idempotencyKey: key } })
    expect((await send('Body key')).status).toBe(200)
    const again = await send('Body key')
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(await send('Other name')).toMatchObject({ status: 409, body: DIFFERENT })
    // the header and the body field name the same key
    expect((await rename(id, 'Body key', key)).headers.get('idempotent-replayed')).toBe('true')
  })

  it('checks the body field idempotencyKey where the run starts: after the 403s, before the body (docs/validation.md)', async () => {
    const id = await app.project()
    const long = 'k'.repeat(256)
    const KEY = ['Idempotency-Key must be 1 to 255 characters']
    const send = (body: Record<string, unknown>, key?: string) => app.call('POST', '/api/v1/mutate', { key, body })
    // a blank name alone is the body's refusal; with a key too long, the key's comes first
    const blank = await send({ action: 'renameProject', projectId: id, name: '   ', idempotencyKey: freshKey() })
    expect([blank.status, blank.body.errors]).toEqual([400, ['name is required: a non-empty string']])
    const both = await send({ action: 'renameProject', projectId: id, name: '   ', idempotencyKey: long })
    expect([both.status, both.body.errors]).toEqual([400, KEY])
    // a caller without access to the project hears its 403 first
    const stranger = await app.user({ tier: 'team' })
    const denied = await send({ action: 'renameProject', projectId: id, name: '   ', idempotencyKey: long }, stranger.key)
    expect(denied.status).toBe(403)
    // the action that keeps no key (addProject) has it checked with its body, by the envelope
    const added = await send({ action: 'addProject', project: { name: '   ' }, idempotencyKey: long })
    expect([added.status, added.body.errors]).toEqual([400, KEY])
  })

  it('does not deduplicate without a key', async () => {
    const id = await app.project()
    for (let i = 0; i < 2; i++) {
      const res = await rename(id, 'Twice')
      expect(res.status).toBe(200)
      expect(res.headers.get('idempotent-replayed')).toBeNull()
    }
  })

  it('is ignored by addProject: a repeat fails on the existing project instead', async () => {
    const key = freshKey()
    const add = (id: string) =>
      app.call('POST', '/api/v1/mutate', {
        body: { action: 'addProject', project: { name: 'Keyed', id } },
        headers: { 'idempotency-key': key },
      })
    expect((await add('keyed-one')).status).toBe(200)
    const repeat = await add('keyed-one')
    expect(repeat.status).toBe(400)
    expect(repeat.headers.get('idempotent-replayed')).toBeNull()
    expect(repeat.body.errors).toEqual(['Project id keyed-one is already taken; choose another id'])
    // a different body under the same key is not a 409 either
    expect((await add('keyed-two')).status).toBe(200)
  })

  it('answers 400 to a key longer than 255 characters', async () => {
    const id = await app.project()
    const res = await rename(id, 'x', 'k'.repeat(256))
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ success: false, errors: ['Idempotency-Key must be 1 to 255 characters'], _meta: { guide: GUIDE } })
  })
})

describe('key expiry', () => {
  it('forgets keys after 24 hours, so the same key then starts a new request', async () => {
    const id = await app.project()
    const key = freshKey()
    await rename(id, 'Day one', key)
    expect(await deleteExpiredKeys(app.db, new Date())).toBe(0)
    expect((await rename(id, 'Day one', key)).headers.get('idempotent-replayed')).toBe('true')

    expect(await deleteExpiredKeys(app.db, new Date(Date.now() + 24 * 3600_000 + 60_000))).toBeGreaterThanOrEqual(1)
    const fresh = await rename(id, 'Day two', key)
    expect(fresh.status).toBe(200)
    expect(fresh.headers.get('idempotent-replayed')).toBeNull()
    expect(await nameOf(id)).toBe('Day two')
  })

  it('is the work of a scheduler loop', async () => {
    const loop = loops.find((l) => l.name === 'idempotency-cleanup')!
    const id = await app.project()
    const key = freshKey()
    await rename(id, 'Looped', key)
    await loop.tick(app.deps, new Date(Date.now() + 25 * 3600_000))
    expect((await rename(id, 'Looped again', key)).status).toBe(200)
  })
})
