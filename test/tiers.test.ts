import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN, startApp } from './helpers'

// api.md Authentication 6 (tier gating) and GET /tier-status; self-hosting.md (tiers, contributor)
const app = await startApp({ FREE_TIER_MAX_PROJECTS: '1', FREE_TIER_NODE_CAP: '40' })
afterAll(() => app.close())

const GUIDE = 'http://arbor.test/api/v1/guide'
const TIER_REQUIRED = 'REST API access requires Builder or Team tier'
const SHARED_NEEDS_TEAM = 'Shared-project API access requires the project owner to be on the Team tier'
const tierRequired = { error: TIER_REQUIRED, message: TIER_REQUIRED }
const sharedNeedsTeam = { error: SHARED_NEEDS_TEAM, message: SHARED_NEEDS_TEAM }

const NOW = new Date('2026-03-15T12:00:00Z')
const PERIOD = { start: '2026-03-01T00:00:00.000Z', end: '2026-04-01T00:00:00.000Z' }
beforeAll(() => {
  app.deps.now = () => NOW // tier-status reads its period from the app clock
})

const status = async (key: string) => (await app.call('GET', '/api/v1/tier-status', { key })).body
const addMember = (projectId: string, userId: string, key?: string) =>
  app.call('POST', '/api/v1/members', { key, body: { projectId, userId } })

describe('GET /tier-status', () => {
  const base = {
    status: 'active',
    lapsed: false,
    builderTrial: false,
    trialExpiresAt: null,
    credits: { used: 0, limit: null, remaining: null },
    period: PERIOD,
  }
  const unlimited = { max_projects: null, max_seats: null, node_cap: null }

  it('reports the free tier with API access, capped by the configured limits', async () => {
    const u = await app.user({ tier: 'free' })
    expect(await status(u.key)).toEqual({
      ...base,
      tier: 'free',
      api_access: true,
      has_realtime: false,
      has_share_management: false,
      limits: { max_projects: 1, max_seats: 1, node_cap: 40 },
    })
  })

  it('reports the strategist tier without API access', async () => {
    const u = await app.user({ tier: 'strategist' })
    expect(await status(u.key)).toEqual({
      ...base,
      tier: 'strategist',
      api_access: false,
      has_realtime: false,
      has_share_management: true,
      limits: { max_projects: null, max_seats: 1, node_cap: null },
    })
  })

  it.each(['builder', 'team'])('reports the %s tier as unlimited, with realtime and share management', async (tier) => {
    const u = await app.user({ tier })
    expect(await status(u.key)).toEqual({
      ...base,
      tier,
      api_access: true,
      has_realtime: true,
      has_share_management: true,
      limits: unlimited,
    })
  })

  it('reports a lapsed paid plan as free, lapsed, and capped as free', async () => {
    const u = await app.user({ tier: 'team', lapsed: true })
    expect(await status(u.key)).toEqual({
      ...base,
      tier: 'free',
      lapsed: true,
      api_access: true,
      has_realtime: false,
      has_share_management: false,
      limits: { max_projects: 1, max_seats: 1, node_cap: 40 },
    })
  })

  it('reports the guest contributor identity as strategist, is_contributor, no API access, no projects, no period', async () => {
    const u = await app.user({ contributor: true })
    expect(await status(u.key)).toEqual({
      ...base,
      tier: 'strategist',
      is_contributor: true,
      api_access: false,
      has_realtime: false,
      has_share_management: false,
      limits: { max_projects: 0, max_seats: 1, node_cap: null },
      period: null,
    })
  })

  it('reports the plan status as the operator set it', async () => {
    const u = await app.user({ tier: 'builder', status: 'past_due' })
    expect((await status(u.key)).status).toBe('past_due')
  })

  it('reports credits from the user’s credit limit', async () => {
    const u = await app.user({ tier: 'builder' })
    await app.call('PATCH', `/admin/v1/users/${u.id}`, { key: ADMIN_TOKEN, body: { creditsLimit: 100 } })
    expect((await status(u.key)).credits).toEqual({ used: 0, limit: 100, remaining: 100 })
  })

  it('needs no projectId and answers on the unversioned path without deprecation headers', async () => {
    const res = await app.call('GET', '/api/tier-status')
    expect(res.status).toBe(200)
    expect(res.body).toEqual(await status(app.ownerKey))
    expect(res.headers.get('deprecation')).toBeNull()
    expect(res.headers.get('link')).toBeNull()
  })
})

describe('tier gating', () => {
  it.each([
    ['strategist', { tier: 'strategist' }],
    ['contributor', { contributor: true }],
  ])('refuses a %s key on every REST endpoint with 403 and the tier message', async (_name, opts) => {
    const u = await app.user(opts)
    expect(await app.call('GET', '/api/v1/projects', { key: u.key })).toMatchObject({ status: 403, body: tierRequired })
    expect(await app.call('PATCH', '/api/v1/projects', { key: u.key, body: { projectId: 'x', archived: true } })).toMatchObject({
      status: 403,
      body: tierRequired,
    })
    const add = await app.call('POST', '/api/v1/mutate', { key: u.key, body: { action: 'addProject', project: { name: 'Mine' } } })
    expect(add.status).toBe(403)
    expect(add.body).toEqual({ ...tierRequired, _meta: { guide: GUIDE } })
  })

  it('refuses a strategist on its own project even if it owned one before a downgrade', async () => {
    const u = await app.user({ tier: 'builder' })
    const id = await app.project(undefined, u.key)
    await app.call('PATCH', `/admin/v1/users/${u.id}`, { key: ADMIN_TOKEN, body: { tier: 'strategist' } })
    expect(await app.call('GET', `/api/v1/members?projectId=${id}`, { key: u.key })).toMatchObject({ status: 403, body: tierRequired })
  })

  it.each([
    ['strategist', { tier: 'strategist' }],
    ['contributor', { contributor: true }],
  ])('lets a %s key that is a member of a team-owned project use that project and list it', async (_name, opts) => {
    const u = await app.user(opts)
    const id = await app.project()
    expect((await addMember(id, u.id)).status).toBe(201)
    expect((await app.call('GET', `/api/v1/members?projectId=${id}`, { key: u.key })).status).toBe(200)
    const list = await app.call('GET', '/api/v1/projects', { key: u.key })
    expect(list).toMatchObject({ status: 200, body: { projects: [{ id, name: id, archived: false, role: 'member' }] } })
  })

  it('does not list to a strategist the member projects of owners not on team', async () => {
    const owner = await app.user({ tier: 'builder' })
    const u = await app.user({ tier: 'strategist' })
    const id = await app.project(undefined, owner.key)
    expect((await addMember(id, u.id, owner.key)).status).toBe(201)
    expect(await app.call('GET', '/api/v1/projects', { key: u.key })).toMatchObject({ status: 403, body: tierRequired })
    expect(await app.call('GET', `/api/v1/members?projectId=${id}`, { key: u.key })).toMatchObject({ status: 403, body: sharedNeedsTeam })
  })

  it('still lets strategist and contributor keys read tier-status and send feedback', async () => {
    for (const opts of [{ tier: 'strategist' }, { contributor: true }]) {
      const u = await app.user(opts)
      expect((await app.call('GET', '/api/v1/tier-status', { key: u.key })).status).toBe(200)
      expect((await app.call('POST', '/api/v1/feedback', { key: u.key, body: { kind: 'note', summary: 'hi' } })).status).toBe(200)
    }
  })

  it('refuses a member on a project whose owner is not on team with the shared-project 403', async () => {
    const owner = await app.user({ tier: 'builder' })
    const member = await app.user({ tier: 'team' })
    const id = await app.project(undefined, owner.key)
    expect((await addMember(id, member.id, owner.key)).status).toBe(201)
    expect(await app.call('GET', `/api/v1/members?projectId=${id}`, { key: member.key })).toMatchObject({
      status: 403,
      body: sharedNeedsTeam,
    })
    const rename = await app.call('POST', '/api/v1/mutate', {
      key: member.key,
      body: { action: 'renameProject', projectId: id, name: 'x' },
    })
    expect(rename.status).toBe(403)
    expect(rename.body).toEqual({ ...sharedNeedsTeam, _meta: { guide: GUIDE } })
    // the owner itself is unaffected
    expect((await app.call('GET', `/api/v1/members?projectId=${id}`, { key: owner.key })).status).toBe(200)
  })

  it('cuts members off as soon as a team owner’s plan lapses, and lets them back when it is restored', async () => {
    const owner = await app.user({ tier: 'team' })
    const member = await app.user({ tier: 'builder' })
    const id = await app.project(undefined, owner.key)
    await addMember(id, member.id, owner.key)
    const members = () => app.call('GET', `/api/v1/members?projectId=${id}`, { key: member.key })
    expect((await members()).status).toBe(200)
    await app.call('PATCH', `/admin/v1/users/${owner.id}`, { key: ADMIN_TOKEN, body: { lapsed: true } })
    expect(await members()).toMatchObject({ status: 403, body: sharedNeedsTeam })
    await app.call('PATCH', `/admin/v1/users/${owner.id}`, { key: ADMIN_TOKEN, body: { lapsed: false } })
    expect((await members()).status).toBe(200)
  })

  it('caps a lapsed paid plan as free: its project limit applies', async () => {
    const u = await app.user({ tier: 'builder', lapsed: true })
    expect(
      (
        await app.call('POST', '/api/v1/mutate', {
          key: u.key,
          body: { action: 'addProject', project: { name: 'One', id: `one-${u.id.toLowerCase().slice(4)}` } },
        })
      ).status,
    ).toBe(200)
    const second = await app.call('POST', '/api/v1/mutate', {
      key: u.key,
      body: { action: 'addProject', project: { name: 'Two', id: `two-${u.id.toLowerCase().slice(4)}` } },
    })
    expect(second.status).toBe(403)
    expect(second.body.error).toBe('project_limit')
  })
})
