import { afterAll, describe, expect, it } from 'bun:test'
import { shareExpiryLoop } from '../src/share/loop'
import { ADMIN_TOKEN, startApp } from './helpers'

// api.md Share links (POST/GET/DELETE, rules 1-6), the Share token record, and self-hosting.md
// (the page at $PUBLIC_BASE_URL/s/<token> and GET /api/v1/public/share/<token>).
const app = await startApp()
afterAll(() => app.close())

let t = Date.now()
app.deps.now = () => new Date(t)
const DAY = 86_400_000

const mutate = (body: unknown) => app.call('POST', '/api/v1/mutate', { body })
const mint = (body: unknown, key?: string) => app.call('POST', '/api/v1/share', { body, key })
const tokens = (projectId: string, key?: string) => app.call('GET', `/api/v1/share?projectId=${projectId}`, { key })
const revoke = (projectId: string, token: string, key?: string) =>
  app.call('DELETE', `/api/v1/share?projectId=${projectId}&token=${encodeURIComponent(token)}`, { key })
const publicJson = (token: string) => app.call('GET', `/api/v1/public/share/${token}`, { key: null })
const page = (token: string) => app.call('GET', `/s/${token}`, { key: null })

/** A project named with markup, two goals, the full hierarchy under the first, notes on the bet and the job, and a task. */
async function seeded() {
  const id = `share-${Math.random().toString(36).slice(2, 8)}`
  expect((await mutate({ action: 'addProject', project: { name: 'Launch <plan> & "co"', id } })).status).toBe(200)
  const add = async (node: unknown) => {
    const res = await mutate({ action: 'add', projectId: id, node })
    if (res.status !== 200) throw new Error(JSON.stringify(res.body))
    return res.body.node
  }
  await add({ type: 'goal', data: { label: '<script>alert("x")</script> Grow', description: 'More teams', goalStatus: 'focus' } })
  await add({ type: 'need', parentId: 'goal-1', data: { label: 'Teams share plans' } })
  await add({
    type: 'approach',
    parentId: 'need-1',
    data: { label: 'Workspaces', notes: 'SECRET bet notes', approachStatus: 'validation' },
  })
  await add({ type: 'job', parentId: 'approach-1', data: { label: 'Two editors', notes: 'SECRET job notes' } })
  await mutate({ action: 'update', projectId: id, nodeId: 'job-1', data: { status: 'done' } })
  await add({ type: 'goal', data: { label: 'Retain' } })
  await add({ type: 'need', parentId: 'goal-2', data: { label: 'Come back weekly' } })
  return id
}

describe('mint (POST)', () => {
  it('mints a link that never expires, with at least 128 random bits in the token', async () => {
    const p = await app.project()
    const res = await mint({ projectId: p })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      token: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/), // 32 base64url characters: 192 bits
      url: `http://arbor.test/s/${res.body.token}`,
      expiresAt: null,
      _meta: { _tip: 'Anyone with the URL can read the shared tree until you revoke it (DELETE /share).' },
    })
    const more = await Promise.all([1, 2, 3, 4].map(() => mint({ projectId: p })))
    expect(new Set([res.body.token, ...more.map((r) => r.body.token)]).size).toBe(5)
  })

  it('sets expiresAt from a positive expiresInDays and ignores anything else', async () => {
    const p = await app.project()
    expect((await mint({ projectId: p, expiresInDays: 7 })).body.expiresAt).toBe(new Date(t + 7 * DAY).toISOString())
    expect((await mint({ projectId: p, expiresInDays: 0.5 })).body.expiresAt).toBe(new Date(t + DAY / 2).toISOString())
    for (const expiresInDays of [0, -3, '7', 'soon', true, {}]) {
      const res = await mint({ projectId: p, expiresInDays })
      expect(res.status).toBe(201)
      expect(res.body.expiresAt).toBeNull()
      expect(res.body._meta._tip).toContain('expiresInDays was not a positive number, so it was ignored')
    }
    expect((await mint({ projectId: p, expiresInDays: null })).body.expiresAt).toBeNull()
  })

  it('still mints when no includedGoalIds is a goal, with an empty view and a tip', async () => {
    const p = await seeded()
    const res = await mint({ projectId: p, settings: { includedGoalIds: ['need-1', 'goal-99'] } })
    expect(res.status).toBe(201)
    expect(res.body._meta._tip).toStartWith('None of includedGoalIds is a goal of this project, so the link shows an empty view.')
    expect((await publicJson(res.body.token)).body).toEqual({ project: { name: 'Launch <plan> & "co"' }, nodes: [] })
  })

  it('rejects settings that are not {includedGoalIds: [ids]}', async () => {
    const p = await app.project()
    expect((await mint({ projectId: p, settings: { includedGoalIds: 'goal-1' } })).body).toEqual({
      error: 'settings.includedGoalIds must be an array of goal ids',
    })
    expect((await mint({ projectId: p, settings: [] })).body).toEqual({ error: 'settings must be an object: {includedGoalIds?}' })
  })

  it('answers a project the caller cannot share before a bad settings value (404 before 400)', async () => {
    const res = await mint({ projectId: 'no-such-project', settings: 5 })
    expect([res.status, res.body]).toEqual([
      404,
      { error: 'Project no-such-project not found', message: 'No project has that id; GET /projects lists yours.' },
    ])
  })
})

describe('list (GET) and revoke (DELETE)', () => {
  it('lists share token records newest first', async () => {
    const p = await app.project()
    const first = (await mint({ projectId: p })).body
    t += 1000
    const second = (await mint({ projectId: p, expiresInDays: 2, settings: { includedGoalIds: ['goal-1'] } })).body
    const third = (await mint({ projectId: p })).body // same instant as the second: insertion order decides
    const res = await tokens(p)
    expect(res.status).toBe(200)
    const record = (x: any, createdAt: number, extra = {}) => ({
      token: x.token,
      url: x.url,
      settings: {},
      createdAt: new Date(createdAt).toISOString(),
      expiresAt: x.expiresAt,
      revokedAt: null,
      active: true,
      ...extra,
    })
    expect(res.body).toEqual({
      tokens: [record(third, t), record(second, t, { settings: { includedGoalIds: ['goal-1'] } }), record(first, t - 1000)],
      _meta: { _tip: 'Newest first. Revoke with DELETE /share?projectId&token.' },
    })
  })

  it('revokes at once: the view and the page answer 404 and the record reads inactive', async () => {
    const p = await seeded()
    const { token } = (await mint({ projectId: p })).body
    expect((await publicJson(token)).status).toBe(200)
    const res = await revoke(p, token)
    expect(res.body).toEqual({ success: true, revoked: token, _meta: { _tip: 'Revoked: the link stopped serving now.' } })
    expect((await publicJson(token)).status).toBe(404)
    expect((await page(token)).status).toBe(404)
    expect((await tokens(p)).body.tokens[0]).toMatchObject({ token, active: false, revokedAt: new Date(t).toISOString() })
  })

  it('answers 200 revoked:null for an already revoked, expired, unknown or foreign token', async () => {
    const p = await app.project()
    const other = await app.project()
    const revoked = (await mint({ projectId: p })).body.token
    await revoke(p, revoked)
    const expiring = (await mint({ projectId: p, expiresInDays: 1 })).body.token
    const foreign = (await mint({ projectId: other })).body.token
    t += DAY + 1
    for (const token of [revoked, expiring, 'never-minted-token-xyz', foreign]) {
      const res = await revoke(p, token)
      expect(res.status).toBe(200)
      expect(res.body).toEqual({
        success: true,
        revoked: null,
        _meta: { _tip: 'Nothing to revoke: the token is unknown here, already revoked or expired.' },
      })
    }
    expect((await publicJson(foreign)).status).toBe(200)
    expect((await revoke(p, '')).body).toEqual({ error: 'token is required' })
  })
})

describe('expiry', () => {
  it('stops serving after expiresAt on read, and the loop marks the record inactive', async () => {
    const p = await seeded()
    const { token, expiresAt } = (await mint({ projectId: p, expiresInDays: 1 })).body
    t += DAY - 1
    expect((await publicJson(token)).status).toBe(200)
    t += 1
    expect((await publicJson(token)).status).toBe(404)
    expect((await tokens(p)).body.tokens[0]).toEqual(expect.objectContaining({ token, expiresAt, revokedAt: null, active: false }))
    expect(await shareExpiryLoop.tick(app.deps, new Date(t))).toBeGreaterThanOrEqual(1)
    expect(await shareExpiryLoop.tick(app.deps, new Date(t))).toBe(0)
    expect((await tokens(p)).body.tokens[0].active).toBe(false)
  })
})

describe('the public view', () => {
  it('serves the whole tree as JSON without notes and without a key', async () => {
    const p = await seeded()
    const { token } = (await mint({ projectId: p })).body
    const res = await publicJson(token)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      project: { name: 'Launch <plan> & "co"' },
      nodes: [
        {
          id: 'goal-1',
          type: 'goal',
          parentId: null,
          data: { label: '<script>alert("x")</script> Grow', description: 'More teams', goalStatus: 'focus' },
        },
        { id: 'need-1', type: 'need', parentId: 'goal-1', data: { label: 'Teams share plans' } },
        { id: 'approach-1', type: 'approach', parentId: 'need-1', data: { label: 'Workspaces', approachStatus: 'validation' } },
        {
          id: 'job-1',
          type: 'job',
          parentId: 'approach-1',
          data: { label: 'Two editors', iteration: 'Later', status: 'done', completedAt: expect.any(String) },
        },
        { id: 'goal-2', type: 'goal', parentId: null, data: { label: 'Retain' } },
        { id: 'need-2', type: 'need', parentId: 'goal-2', data: { label: 'Come back weekly' } },
      ],
    })
    expect(JSON.stringify(res.body)).not.toContain('SECRET')
  })

  it('shows only the included goals and what is beneath them', async () => {
    const p = await seeded()
    const { token } = (await mint({ projectId: p, settings: { includedGoalIds: ['goal-2', 'need-1'] } })).body
    expect((await publicJson(token)).body.nodes.map((n: any) => n.id)).toEqual(['goal-2', 'need-2'])
  })

  it('renders a readable HTML page with everything escaped and no notes', async () => {
    const p = await seeded()
    const { token } = (await mint({ projectId: p })).body
    const res = await page(token)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('referrer-policy')).toBe('no-referrer')
    expect(res.headers.get('content-security-policy')).toStartWith("default-src 'none'")
    const html: string = res.body
    expect(html).toContain('<h1>Launch &lt;plan&gt; &amp; &quot;co&quot;</h1>')
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; Grow')
    expect(html).not.toContain('<script')
    expect(html).toContain('<p class="desc">More teams</p>')
    expect(html).toContain('<span class="chip">focus</span>')
    expect(html).toContain('<span class="chip">validation</span>')
    expect(html).toContain('<span class="chip done">done</span>')
    expect(html).not.toContain('SECRET')
    // structure: the job sits inside the bet, inside the need, inside the goal
    const order = ['Grow', 'Teams share plans', 'Workspaces', 'Two editors', 'Retain'].map((s) => html.indexOf(s))
    expect(order).toEqual([...order].sort((a, b) => a - b))
    expect(html.match(/<ul>/g)!.length).toBe(5)
  })

  it('answers 404 for an unknown token, as JSON under /api and as a page under /s', async () => {
    expect((await publicJson('AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).body).toEqual({
      error: 'share_not_found',
      message: 'This share link does not exist, was revoked or has expired',
    })
    const res = await page('not-a-token')
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(res.body).toContain('Share link not found')
  })
})

describe('access', () => {
  it("refuses another user's project with 403 Not your project, and an unknown project with 404", async () => {
    const p = await app.project()
    const { token } = (await mint({ projectId: p })).body
    const stranger = await app.user()
    for (const res of [await mint({ projectId: p }, stranger.key), await tokens(p, stranger.key), await revoke(p, token, stranger.key)]) {
      expect(res.status).toBe(403)
      expect(res.body).toEqual({ error: 'Not your project' })
    }
    const unknown = await tokens('no-such-project')
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toBe('Project no-such-project not found')
  })

  it('lets members mint, list and revoke', async () => {
    const p = await app.project()
    const member = await app.user({ tier: 'builder' })
    await app.call('POST', '/api/v1/members', { body: { projectId: p, userId: member.id } })
    const { token } = (await mint({ projectId: p }, member.key)).body
    expect((await tokens(p, member.key)).body.tokens.map((x: any) => x.token)).toEqual([token])
    expect((await revoke(p, token, member.key)).body.revoked).toBe(token)
  })

  it('lets a free plan list and revoke the links it minted (whoever can mint a link can take it back)', async () => {
    const free = await app.user({ tier: 'free' })
    const p = await app.project(undefined, free.key)
    const { token } = (await mint({ projectId: p }, free.key)).body
    expect(token).toBeString()
    const listed = await tokens(p, free.key)
    expect(listed.status).toBe(200)
    expect(listed.body.tokens.map((x: any) => [x.token, x.active])).toEqual([[token, true]])
    expect(listed.body._meta._tip).toBe(
      'Newest first. Revoke with DELETE /share?projectId&token. Your plan lists the links you minted yourself.',
    )
    expect((await revoke(p, token, free.key)).body).toEqual({
      success: true,
      revoked: token,
      _meta: { _tip: 'Revoked: the link stopped serving now.' },
    })
    expect((await publicJson(token)).status).toBe(404)
    expect((await revoke(p, token, free.key)).body.revoked).toBeNull()
  })

  it('without has_share_management, another member’s link is neither listed nor revocable (403)', async () => {
    // a team owner's member mints a link; the owner's plan lapses to free
    const owner = await app.user({ tier: 'team' })
    const member = await app.user({ tier: 'builder' })
    const p = await app.project(undefined, owner.key)
    await app.call('POST', '/api/v1/members', { body: { projectId: p, userId: member.id }, key: owner.key })
    const theirs = (await mint({ projectId: p }, member.key)).body.token
    const mine = (await mint({ projectId: p }, owner.key)).body.token
    await app.call('PATCH', `/admin/v1/users/${owner.id}`, { key: ADMIN_TOKEN, body: { lapsed: true } })
    expect((await tokens(p, owner.key)).body.tokens.map((x: any) => x.token)).toEqual([mine])
    const refused = await revoke(p, theirs, owner.key)
    expect(refused.status).toBe(403)
    expect(refused.body).toEqual({
      error: 'share_management_unavailable',
      message: 'Listing and revoking share links needs a paid plan (has_share_management in GET /tier-status)',
      _meta: { _tip: 'Without it you list and revoke the links you minted yourself; this one was minted by someone else.' },
    })
    expect((await publicJson(theirs)).status).toBe(200)
    expect((await revoke(p, mine, owner.key)).body.revoked).toBe(mine)
    expect((await revoke(p, 'no-such-token-aaaaaaaa', owner.key)).body.revoked).toBeNull()
  })
})
