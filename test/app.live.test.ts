import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Page } from 'playwright-core'
import { type AppEnv, addProject, haveChromium, openApp, shots, startApp } from './app.lib'
import { ADMIN_TOKEN } from './helpers'

// live.md 2–4 in the app, in real Chromium against the real server: two people and two agents on
// one plan. Each page sees the others on the rows and in the details panel, keeps itself current
// from the stream (a Review revert included), and a field a person edits holds an agent's write.
if (!haveChromium) console.warn('app.live.test.ts: skipped, /usr/bin/chromium is not installed')
const P = 'live-app'
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }

describe.skipIf(!haveChromium)('the app, live: presence, edit intents and the stream', () => {
  let env: AppEnv
  let owner: Page
  let ada: Page
  let adaKey: string
  const ids: Record<string, string> = {}
  const call = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    env.server.call('POST', '/api/v1/mutate', { body: { projectId: P, ...body }, headers })
  const row = (id: string) => `#tree [data-id="${id}"] > .row`

  beforeAll(async () => {
    env = await startApp()
    await addProject(env.server, P, 'Launch plan')
    const plan = await call({
      action: 'batch',
      mutations: [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Launch the beta' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Teams can try it' } } },
        { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Invite-only beta' } } },
        { action: 'add', node: { id: 'draft-j1', type: 'job', parentId: 'draft-a', data: { label: 'Write the invite email' } } },
        { action: 'add', node: { id: 'draft-j2', type: 'job', parentId: 'draft-a', data: { label: 'Build the waitlist page' } } },
        { action: 'add', node: { id: 'draft-j3', type: 'job', parentId: 'draft-a', data: { label: 'Set up analytics' } } },
      ],
    })
    expect(plan.status).toBe(200)
    Object.assign(ids, plan.body.idMap)
    const user = await env.server.call('POST', '/admin/v1/users', {
      key: null,
      headers: admin,
      body: { name: 'Ada Lovelace', tier: 'team' },
    })
    const key = await env.server.call('POST', `/admin/v1/users/${user.body.user.id}/api-keys`, { key: null, headers: admin, body: {} })
    adaKey = key.body.apiKey
    await env.server.call('POST', '/api/v1/members', { body: { projectId: P, userId: user.body.user.id } })
    owner = await openApp(env, P)
    ada = await openApp(env, P, { key: adaKey })
    for (const page of [owner, ada]) {
      for (const id of [ids['draft-g'], ids['draft-n'], ids['draft-a']]) {
        const li = await page.waitForSelector(`#tree [data-id="${id}"]`)
        if ((await li.getAttribute('aria-expanded')) === 'false') await page.click(`${row(id!)} .toggle`)
      }
      await page.waitForSelector(row(ids['draft-j3']!))
    }
  }, 120_000)
  afterAll(async () => {
    await env?.browser.close()
    await env?.server.close()
  })

  it('shows each person the others and the agents on their rows, and in the details panel', async () => {
    // two agents: one says where it works, one holds a claim
    const posted = await env.server.call('POST', '/api/v1/presence', {
      headers: { 'x-agent-id': 'planner-bot' },
      body: { projectId: P, nodeId: ids['draft-j2'], note: 'drafting the page copy' },
    })
    expect(posted.status).toBe(200)
    expect((await call({ action: 'claim', agent: 'worker-7', nodeIds: [ids['draft-j3']] })).status).toBe(200)
    // each person selects a row
    await owner.click(`${row(ids['draft-a']!)} .label`)
    await ada.click(`${row(ids['draft-j1']!)} .label`)
    // the owner sees Ada (AL) on job 1, and the agents with their mark and name
    await owner.waitForSelector(`${row(ids['draft-j1']!)} .who.person:text("AL")`, { timeout: 15_000 })
    expect(await owner.textContent(`${row(ids['draft-j2']!)} .who.agent`)).toBe('◆planner-bot')
    expect(await owner.textContent(`${row(ids['draft-j3']!)} .who.agent`)).toBe('◆worker-7')
    // Ada sees the owner (O) on the bet, and the same agents
    await ada.waitForSelector(`${row(ids['draft-a']!)} .who.person:text("O")`, { timeout: 15_000 })
    await ada.waitForSelector(`${row(ids['draft-j2']!)} .who.agent`, { timeout: 15_000 })
    // neither page shows its own person
    expect(await owner.$(`${row(ids['draft-a']!)} .who`)).toBeNull()
    expect(await ada.$(`${row(ids['draft-j1']!)} .who`)).toBeNull()
    // the details panel says who is here
    await owner.click(`${row(ids['draft-j2']!)} .label`)
    await owner.waitForSelector('#panel .presence-list li')
    expect(await owner.textContent('#panel .presence-list')).toContain(
      'planner-bot (agent of owner) is looking at it — drafting the page copy',
    )
    await owner.click(`${row(ids['draft-a']!)} .label`)
    // an agent with a long name: its mark is cut with "…" (the title has it whole), and on a phone
    // the row's marks stay inside the row instead of running past the screen's edge
    const long = 'research-assistant-with-a-very-long-name'
    const here = await env.server.call('POST', '/api/v1/presence', {
      headers: { 'x-agent-id': long },
      body: { projectId: P, nodeId: ids['draft-j2'] },
    })
    expect(here.status).toBe(200)
    const mark = `${row(ids['draft-j2']!)} .who.agent[title^="${long}"]`
    await owner.waitForSelector(mark, { timeout: 15_000 })
    const fits = () =>
      owner.$eval(mark, (m) => {
        const name = m.querySelector('.name') as any
        const r = m.getBoundingClientRect()
        const rowBox = m.closest('.row')!.getBoundingClientRect()
        return { cut: name.scrollWidth > name.clientWidth, inside: r.right <= rowBox.right + 0.5 && r.left >= rowBox.left - 0.5 }
      })
    expect(await fits()).toEqual({ cut: true, inside: true })
    await owner.setViewportSize({ width: 390, height: 844 })
    expect(await fits()).toEqual({ cut: true, inside: true })
    await owner.setViewportSize({ width: 1280, height: 800 })
    await env.server.call('DELETE', `/api/v1/presence?projectId=${P}`, { headers: { 'x-agent-id': long } })
    await owner.waitForSelector(mark, { state: 'detached', timeout: 15_000 })
  }, 60_000)

  it('holds an agent’s write of the field a person edits until the person leaves it, and says so to the other person', async () => {
    const job = ids['draft-j1']!
    await owner.click(`${row(job)} .label`)
    await owner.focus('#f-description')
    // the owner's page posted its edit intent on the description
    await env.server.until(
      async () => {
        const list = (await env.server.call('GET', `/api/v1/presence?projectId=${P}`)).body.presence
        return list.some((p: any) => p.actor.via === 'app' && p.actor.userName === 'owner' && p.nodeId === job && p.field === 'description')
      },
      15_000,
      'the edit intent posted',
    )
    const agentWrite = () =>
      call({ action: 'update', nodeId: job, data: { description: 'From the agent' } }, { 'x-agent-id': 'planner-bot' })
    const refused = await agentWrite()
    expect({ status: refused.status, error: refused.body.error, field: refused.body.field, by: refused.body.by.actor.userName }).toEqual({
      status: 409,
      error: 'being_edited',
      field: 'description',
      by: 'owner',
    })
    // Ada, on the same job, reads that the owner edits that field
    await ada.click(`${row(job)} .label`)
    await ada.waitForSelector('#panel .presence-list li')
    // the intent reaches Ada's page on its stream, after the server has it: on a loaded machine, later
    await ada.waitForFunction(
      () => {
        const d = (globalThis as any).document
        return (
          d.querySelector('#panel .presence-list')?.textContent.includes('owner is editing Description') &&
          d.querySelector('#panel .f-area .editing-by')
        )
      },
      null,
      { timeout: 30_000 },
    )
    expect(await ada.textContent('#panel .presence-list')).toContain('owner is editing Description')
    expect(await ada.textContent('#panel .f-area .editing-by')).toBe('owner is editing this field.')
    await ada.waitForSelector(`${row(job)} .who.person.editing`)
    await shots(ada, 'live-presence')
    await shots(owner, 'live-editing')
    // Ada types there: asked first; she goes ahead, and her save overrules (force)
    const asked: string[] = []
    ada.once('dialog', (d) => {
      asked.push(d.message())
      void d.accept()
    })
    await ada.click('#f-description')
    await ada.keyboard.type('Ada was here')
    await ada.keyboard.press('Tab')
    expect(asked[0]).toContain('owner is editing Description of this item right now')
    await env.server.until(
      async () => {
        const nodes = (await env.server.call('GET', `/api/v1/nodes?projectId=${P}`)).body.nodes
        return nodes.find((n: any) => n.id === job)?.data.description === 'Ada was here'
      },
      15_000,
      'Ada’s forced save',
    )
    // the owner leaves the field: the agent's write goes through
    await owner.click(`${row(ids['draft-g']!)} .label`)
    await env.server.until(async () => (await agentWrite()).status === 200, 15_000, 'the agent’s write once the owner left')
  }, 90_000)

  it('keeps itself current from the stream: an agent’s add, and the page’s own Review revert, show at once', async () => {
    const added = await call(
      { action: 'add', node: { type: 'job', parentId: ids['draft-a'], data: { label: 'Agent job to take back' } } },
      { 'x-agent-id': 'bulk-bot' },
    )
    expect(added.status).toBe(200)
    const id = added.body.node.id
    for (const page of [owner, ada]) await page.waitForSelector(row(id), { timeout: 15_000 })
    await owner.click('#open-review')
    await owner.waitForSelector('#review .review-groups > li')
    const groups = await owner.$$eval('#review .review-groups > li strong', (s) => s.map((x) => x.textContent))
    const at = groups.findIndex((g) => g?.startsWith('bulk-bot'))
    expect(at).toBeGreaterThanOrEqual(0)
    await owner.click(`#review .review-groups > li:nth-child(${at + 1}) .review-revert`)
    await owner.waitForSelector('#review .review-confirm')
    await owner.click('#review .review-confirm')
    // gone on both pages, without a reload
    for (const page of [owner, ada])
      await page.waitForFunction((sel) => !(globalThis as any).document.querySelector(sel), `#tree [data-id="${id}"]`, { timeout: 15_000 })
    expect((await env.server.call('GET', `/api/v1/nodes?projectId=${P}`)).body.nodes.some((n: any) => n.id === id)).toBe(false)
    expect(await owner.textContent('#live-text')).toBe('Live')
  }, 60_000)
})
