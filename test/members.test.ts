import { afterAll, describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN, startApp } from './helpers'

// self-hosting.md Members (/api/members, also /api/v1/members); api.md Limits (seats)
const app = await startApp()
afterAll(() => app.close())

const OWNER_ONLY = { error: 'project_access_denied', message: 'Only the project owner can manage members' }
const DENIED = { error: 'project_access_denied', message: 'API key does not have access to this project' }

const members = (projectId: string, key?: string, base = '/api/v1') => app.call('GET', `${base}/members?projectId=${projectId}`, { key })
const add = (projectId: string, userId: string, key?: string, base = '/api/v1') =>
  app.call('POST', `${base}/members`, { key, body: { projectId, userId } })
const remove = (projectId: string, userId: string, key?: string, base = '/api/v1') =>
  app.call('DELETE', `${base}/members?projectId=${projectId}&userId=${userId}`, { key })
const ownerId = async () =>
  (await app.call('GET', '/admin/v1/users', { key: ADMIN_TOKEN })).body.users.find((u: any) => u.name === 'owner').id

describe('GET /members', () => {
  it('lists the owner first, then members in the order they joined', async () => {
    const a = await app.user({ name: 'Zoe' })
    const b = await app.user({ name: 'Adam' })
    const id = await app.project()
    await add(id, a.id)
    await add(id, b.id)
    const res = await members(id)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      members: [
        { userId: await ownerId(), name: 'owner', role: 'owner' },
        { userId: a.id, name: 'Zoe', role: 'member' },
        { userId: b.id, name: 'Adam', role: 'member' },
      ],
    })
    // members may read the list too
    expect((await members(id, a.key)).body).toEqual(res.body)
  })

  it('answers on /api/members exactly as on /api/v1/members, without deprecation headers', async () => {
    const id = await app.project()
    const legacy = await members(id, undefined, '/api')
    expect(legacy.status).toBe(200)
    expect(legacy.body).toEqual((await members(id)).body)
    expect(legacy.headers.get('deprecation')).toBeNull()
    expect(legacy.headers.get('link')).toBeNull()
  })

  it('answers 403 project_access_denied to a stranger', async () => {
    const stranger = await app.user()
    const id = await app.project()
    expect(await members(id, stranger.key)).toMatchObject({ status: 403, body: DENIED })
  })

  it('answers 400 without projectId', async () => {
    const res = await app.call('GET', '/api/v1/members')
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ success: false, errors: ['projectId is required'] })
  })
})

describe('POST /members', () => {
  it('adds a member: 201 {member}, and the member reaches the project at once', async () => {
    const u = await app.user({ name: 'Mia' })
    const id = await app.project()
    expect((await members(id, u.key)).status).toBe(403)
    const res = await add(id, u.id)
    expect(res.status).toBe(201)
    expect(res.body).toEqual({ member: { userId: u.id, name: 'Mia', role: 'member' } })
    expect((await members(id, u.key)).status).toBe(200)
  })

  it('works on /api/members too', async () => {
    const u = await app.user()
    const id = await app.project()
    expect((await add(id, u.id, undefined, '/api')).status).toBe(201)
    expect((await remove(id, u.id, undefined, '/api')).body).toEqual({ success: true })
  })

  it('answers 404 for an unknown user', async () => {
    const id = await app.project()
    const res = await add(id, 'usr_nobody')
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ error: 'user_not_found', message: 'User usr_nobody not found' })
  })

  it('answers 409 for someone already on the project, the owner included', async () => {
    const u = await app.user()
    const id = await app.project()
    await add(id, u.id)
    const again = await add(id, u.id)
    expect(again.status).toBe(409)
    expect(again.body).toEqual({ error: 'already_member', message: `User ${u.id} is already a member of ${id}` })
    const self = await add(id, await ownerId())
    expect(self.status).toBe(409)
    expect(self.body).toEqual({ error: 'already_member', message: 'The owner is already on the project' })
  })

  it('is owner only: a member and a stranger get 403 project_access_denied', async () => {
    const member = await app.user()
    const stranger = await app.user()
    const id = await app.project()
    await add(id, member.id)
    expect(await add(id, stranger.id, member.key)).toMatchObject({ status: 403, body: OWNER_ONLY })
    expect(await add(id, stranger.id, stranger.key)).toMatchObject({ status: 403, body: DENIED })
  })

  it('answers 403 seat_limit past limits.max_seats (free: one seat, the owner)', async () => {
    const free = await app.user({ tier: 'free' })
    const u = await app.user()
    const id = await app.project(undefined, free.key)
    const res = await add(id, u.id, free.key)
    expect(res.status).toBe(403)
    expect(res.body).toEqual({
      error: 'seat_limit',
      message: 'Your plan allows 1 seat across your projects, the owner included',
      max_seats: 1,
    })
    expect((await members(id, free.key)).body.members).toHaveLength(1)
  })

  it('caps a lapsed team owner’s seats as free', async () => {
    const owner = await app.user({ tier: 'team', lapsed: true })
    const u = await app.user()
    const id = await app.project(undefined, owner.key)
    expect(await add(id, u.id, owner.key)).toMatchObject({ status: 403, body: { error: 'seat_limit' } })
  })

  it('counts seats as distinct people: team plans have no limit', async () => {
    const id = await app.project()
    for (let i = 0; i < 4; i++) expect((await add(id, (await app.user()).id)).status).toBe(201)
    expect((await members(id)).body.members).toHaveLength(5)
  })
})

describe('DELETE /members', () => {
  it('removes a member, who loses access at once', async () => {
    const u = await app.user()
    const id = await app.project()
    await add(id, u.id)
    const res = await remove(id, u.id)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true })
    expect(await members(id, u.key)).toMatchObject({ status: 403, body: DENIED })
    expect((await members(id)).body.members).toHaveLength(1)
  })

  it('never removes the owner', async () => {
    const id = await app.project()
    const res = await remove(id, await ownerId())
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ success: false, errors: ['The project owner cannot be removed'] })
    expect((await members(id)).body.members).toEqual([{ userId: await ownerId(), name: 'owner', role: 'owner' }])
  })

  it('answers 404 for someone who is not a member', async () => {
    const u = await app.user()
    const id = await app.project()
    const res = await remove(id, u.id)
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ error: 'member_not_found', message: `User ${u.id} is not a member of ${id}` })
  })

  it('is owner only: a member cannot remove anyone, itself included', async () => {
    const a = await app.user()
    const b = await app.user()
    const id = await app.project()
    await add(id, a.id)
    await add(id, b.id)
    expect(await remove(id, b.id, a.key)).toMatchObject({ status: 403, body: OWNER_ONLY })
    expect(await remove(id, a.id, a.key)).toMatchObject({ status: 403, body: OWNER_ONLY })
  })
})
