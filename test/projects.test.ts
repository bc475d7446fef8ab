import { afterAll, describe, expect, it } from 'bun:test'
import { startApp } from './helpers'

// api.md GET/PATCH /projects, the addProject and renameProject actions of POST /mutate
const app = await startApp({ FREE_TIER_MAX_PROJECTS: '1' })
afterAll(() => app.close())

const GUIDE = 'http://arbor.test/api/v1/guide'
const mutate = (body: unknown, key?: string) => app.call('POST', '/api/v1/mutate', { body, key })
const addProject = (project: unknown, key?: string) => mutate({ action: 'addProject', project }, key)
const archive = (projectId: string, archived: unknown, key?: string) =>
  app.call('PATCH', '/api/v1/projects', { key, body: { projectId, archived } })
const list = async (key: string, query = '') => (await app.call('GET', `/api/v1/projects${query}`, { key })).body.projects
const addMember = (projectId: string, userId: string, key?: string) =>
  app.call('POST', '/api/v1/members', { key, body: { projectId, userId } })

describe('GET /projects', () => {
  it('lists owned projects first, then member projects, each with its role', async () => {
    const me = await app.user()
    const other = await app.user()
    // created before my own projects, still listed after them
    const theirs = await app.project('theirs-early', other.key)
    await addMember(theirs, me.id, other.key)
    const mine1 = await app.project('mine-first', me.key)
    const mine2 = await app.project('mine-second', me.key)
    expect(await list(me.key)).toEqual([
      { id: mine1, name: mine1, archived: false, role: 'owner' },
      { id: mine2, name: mine2, archived: false, role: 'owner' },
      { id: theirs, name: theirs, archived: false, role: 'member' },
    ])
  })

  it('hides archived projects unless includeArchived=true', async () => {
    const me = await app.user()
    const kept = await app.project(undefined, me.key)
    const gone = await app.project(undefined, me.key)
    expect((await archive(gone, true, me.key)).status).toBe(200)
    expect(await list(me.key)).toEqual([{ id: kept, name: kept, archived: false, role: 'owner' }])
    expect(await list(me.key, '?includeArchived=false')).toEqual([{ id: kept, name: kept, archived: false, role: 'owner' }])
    expect(await list(me.key, '?includeArchived=true')).toEqual([
      { id: kept, name: kept, archived: false, role: 'owner' },
      { id: gone, name: gone, archived: true, role: 'owner' },
    ])
  })

  it('hides a member project its owner archived', async () => {
    const me = await app.user()
    const id = await app.project()
    await addMember(id, me.id)
    await archive(id, true)
    expect(await list(me.key)).toEqual([])
    expect(await list(me.key, '?includeArchived=true')).toEqual([{ id, name: id, archived: true, role: 'member' }])
  })

  it('answers on /api/projects like /api/v1 with Deprecation: true and a Link to its successor', async () => {
    const legacy = await app.call('GET', '/api/projects')
    expect(legacy.status).toBe(200)
    expect(legacy.body).toEqual((await app.call('GET', '/api/v1/projects')).body)
    expect(legacy.headers.get('deprecation')).toBe('true')
    expect(legacy.headers.get('link')).toBe('<http://arbor.test/api/v1/projects>; rel="successor-version"')
  })
})

describe('PATCH /projects', () => {
  it('archives and unarchives, answering {project, _meta} with the hint as both _tip and tip', async () => {
    const id = await app.project()
    const archived = await archive(id, true)
    expect(archived.status).toBe(200)
    expect(archived.body).toEqual({
      project: { id, name: id, archived: true, role: 'owner' },
      _meta: { _tip: expect.any(String), tip: expect.any(String) },
    })
    expect(archived.body._meta.tip).toBe(archived.body._meta._tip)
    const back = await archive(id, false)
    expect(back.body.project).toEqual({ id, name: id, archived: false, role: 'owner' })
    expect(back.body._meta.tip).toBe(back.body._meta._tip)
  })

  it.each([
    ['the string "true"', 'true'],
    ['a number', 1],
    ['null', null],
  ])('answers 400 when archived is %s', async (_name, value) => {
    const id = await app.project()
    const res = await archive(id, value)
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ success: false, errors: ['archived must be a boolean (true or false)'] })
  })

  it('answers 400 when archived is missing', async () => {
    const res = await app.call('PATCH', '/api/v1/projects', { body: { projectId: await app.project() } })
    expect(res.status).toBe(400)
    expect(res.body.success).toBe(false)
  })

  it('answers a body that is no JSON object, or lacks projectId, with the plain messages of a route schema', async () => {
    const list = await app.call('PATCH', '/api/v1/projects', { body: [] })
    expect([list.status, list.body.errors]).toEqual([400, ['Request body must be a JSON object (Content-Type: application/json)']])
    const noId = await app.call('PATCH', '/api/v1/projects', { body: { archived: true } })
    expect([noId.status, noId.body.errors]).toEqual([400, ['projectId is required']])
  })

  it('answers 404 to a member and to an unknown id: only owners archive', async () => {
    const member = await app.user()
    const id = await app.project()
    await addMember(id, member.id)
    for (const [projectId, key] of [
      [id, member.key],
      ['no-such-project', app.ownerKey],
    ] as const) {
      // 404 before any 400 about the body (docs/validation.md): archived:'yes' is not looked at
      for (const archived of [true, 'yes']) {
        const res = await archive(projectId, archived, key)
        expect([projectId, archived, res.status, res.body]).toEqual([
          projectId,
          archived,
          404,
          { error: `Project ${projectId} not found (you can only archive projects you own)` },
        ])
      }
    }
  })

  it('changes only the listing: an archived project keeps working', async () => {
    const id = await app.project()
    await archive(id, true)
    expect((await mutate({ action: 'renameProject', projectId: id, name: 'Still here' })).status).toBe(200)
    expect((await app.call('GET', `/api/v1/members?projectId=${id}`)).status).toBe(200)
  })
})

describe('addProject', () => {
  it('creates the project with its Later system iteration and answers {success, project, iterations}', async () => {
    const res = await addProject({ name: 'Launch plan', id: 'launch-plan' })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      success: true,
      project: { id: 'launch-plan', name: 'Launch plan' },
      iterations: [{ name: 'Later', status: 'active', system: true }],
      _meta: { _tip: expect.any(String) },
    })
    const rows = await app.db.query('select name, status, system from iterations where project_id = $1', ['launch-plan'])
    expect(rows).toEqual([{ name: 'Later', status: 'active', system: true }])
  })

  it.each([
    ['Hello World', 'hello-world'],
    ['  Q3   Roadmap  ', 'q3-roadmap'],
    ['Tabs\tand\nlines', 'tabs-and-lines'],
  ])('derives the default id of %j as %s', async (name, id) => {
    const res = await addProject({ name })
    expect(res.body.project).toEqual({ id, name: name.trim() })
  })

  it('keeps punctuation in the default id, which then fails validation', async () => {
    const res = await addProject({ name: 'Q3: Plan!' })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({
      success: false,
      errors: ['Invalid project id "q3:-plan!": use 2 to 63 lowercase letters, digits and dashes, starting with a letter or digit'],
      _meta: { _tip: 'Names with punctuation need an explicit project.id, for example "q3-plan".', guide: GUIDE },
    })
  })

  it.each(['a', 'x'.repeat(64), 'Upper', '-dash-first', 'under_score', 'dot.ted', 'sp ace'])('refuses the id %j', async (id) => {
    const res = await addProject({ name: 'Plan', id })
    expect(res.status).toBe(400)
    expect(res.body.errors[0]).toStartWith(`Invalid project id "${id}"`)
  })

  it.each(['ab', '9lives', 'z'.repeat(63), 'a--b'])('accepts the id %j', async (id) => {
    expect((await addProject({ name: 'Plan', id })).body.project).toEqual({ id, name: 'Plan' })
  })

  it('refuses an id already taken, by anyone', async () => {
    const other = await app.user()
    await app.project('taken-id', other.key)
    const res = await addProject({ name: 'Mine', id: 'taken-id' })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({
      success: false,
      errors: ['Project id taken-id is already taken; choose another id'],
      _meta: { _tip: 'Pass project.id to choose the id.', guide: GUIDE },
    })
  })

  it.each([
    ['project is missing', { action: 'addProject' }],
    ['name is missing', { action: 'addProject', project: { id: 'no-name' } }],
    ['name is blank', { action: 'addProject', project: { name: '   ', id: 'blank-name' } }],
    ['name is over 100 characters', { action: 'addProject', project: { name: 'n'.repeat(101), id: 'long-name' } }],
    ['id is not a string', { action: 'addProject', project: { name: 'x', id: 7 } }],
  ])('answers 400 with the guide when %s', async (_rule, body) => {
    const res = await mutate(body)
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ success: false, errors: [expect.any(String)], _meta: { guide: GUIDE } })
  })

  it('trims the name and takes exactly 100 characters', async () => {
    const name = 'n'.repeat(100)
    expect((await addProject({ name: `  ${name}  `, id: 'hundred' })).body.project).toEqual({ id: 'hundred', name })
  })

  it('answers 403 project_limit past the free tier’s FREE_TIER_MAX_PROJECTS, archived projects counting', async () => {
    const free = await app.user({ tier: 'free' })
    const first = await app.project(undefined, free.key)
    await archive(first, true, free.key)
    const res = await addProject({ name: 'Second', id: 'free-second' }, free.key)
    expect(res.status).toBe(403)
    expect(res.body).toEqual({
      error: 'project_limit',
      message: 'Your plan allows 1 project; archiving one does not free a slot',
      limit: 1,
      _meta: { guide: GUIDE },
    })
  })

  it('lets builder and team plans create without a project limit', async () => {
    const builder = await app.user({ tier: 'builder' })
    for (let i = 0; i < 3; i++) await app.project(undefined, builder.key)
    expect((await list(builder.key)).length).toBe(3)
  })
})

describe('renameProject', () => {
  it('renames, trims the name and keeps the id', async () => {
    const id = await app.project()
    const res = await mutate({ action: 'renameProject', projectId: id, name: '  Better name  ' })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, project: { id, name: 'Better name' }, _meta: { _tip: expect.any(String) } })
    expect((await list(app.ownerKey)).find((p: any) => p.id === id)).toEqual({ id, name: 'Better name', archived: false, role: 'owner' })
  })

  it('is owner only: a member gets 403 project_access_denied with its own message', async () => {
    const member = await app.user()
    const id = await app.project()
    await addMember(id, member.id)
    const res = await mutate({ action: 'renameProject', projectId: id, name: 'Hijack' }, member.key)
    expect(res.status).toBe(403)
    expect(res.body).toEqual({
      error: 'project_access_denied',
      message: 'Only the project owner can rename a project',
      _meta: { guide: GUIDE },
    })
  })

  it.each([
    ['name is missing', undefined],
    ['name is blank', '  '],
    ['name is over 100 characters', 'n'.repeat(101)],
  ])('answers 400 when %s', async (_rule, name) => {
    const id = await app.project()
    const res = await mutate({ action: 'renameProject', projectId: id, name })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ success: false, errors: [expect.any(String)], _meta: { guide: GUIDE } })
  })
})
