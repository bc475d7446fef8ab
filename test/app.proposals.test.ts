import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Page } from 'playwright-core'
import { holdableLive } from './app.hold'
import { type AppEnv, addProject, focused, haveChromium, openApp, shots, startApp } from './app.lib'
import { until } from './receiver'

// live.md §5: the app's Proposals view, in real Chromium against the real server, by keyboard
// only: an agent proposes twenty jobs; a person reads the difference in the plan's words and
// applies it, then takes it back with Review; a second proposal, made stale by a later edit, shows its conflict in words and is
// rejected.
if (!haveChromium) console.warn('app.proposals.test.ts: skipped, /usr/bin/chromium is not installed')
const P = 'proposals-app'

/** Tab (at most 60 times) until the element matching `selector` has the focus. */
async function tabTo(page: Page, selector: string) {
  for (let i = 0; i < 60; i++) {
    if (await page.evaluate((s) => (globalThis as any).document.activeElement?.matches(s) ?? false, selector)) return
    await page.keyboard.press('Tab')
  }
  throw new Error(`Tab never reached ${selector}; focus is on ${JSON.stringify(await focused(page))}`)
}

describe.skipIf(!haveChromium)('the app: proposals', () => {
  let env: AppEnv
  let page: Page
  const call = (body: unknown, headers: Record<string, string> = {}) => env.server.call('POST', '/api/v1/mutate', { body, headers })
  beforeAll(async () => {
    env = await startApp()
    await addProject(env.server, P, 'Proposals')
    await call({
      action: 'batch',
      projectId: P,
      mutations: [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Launch the beta' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Testers can sign up' } } },
        { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A sign-up page' } } },
      ],
    })
    const jobs = Array.from({ length: 20 }, (_, i) => ({
      action: 'add',
      node: { type: 'job', parentId: 'approach-1', data: { label: `Job ${i + 1}`, iteration: 'Later' } },
    }))
    const made = await call(
      { action: 'propose', projectId: P, title: 'Twenty jobs for the sign-up page', note: 'drafted by the planner', mutations: jobs },
      { 'x-agent-id': 'planner' },
    )
    expect(made.status).toBe(200)
    page = await openApp(env, P)
  }, 90_000)
  afterAll(async () => {
    await env?.browser.close()
    await env?.server.close()
  })

  it('shows the open count, the difference in the plan’s words, and applies it', async () => {
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#open-proposals')?.textContent === 'Proposals (1)', null, {
      timeout: 15_000,
    })
    await tabTo(page, '#open-proposals')
    await page.keyboard.press('Enter')
    await page.waitForSelector('#proposals .proposal-open')
    expect(await focused(page)).toMatchObject({})
    await tabTo(page, '#proposals .proposal-open')
    await page.keyboard.press('Enter')
    await page.waitForSelector('#proposals .proposal-diff li')
    const lines = await page.$$eval('#proposals .proposal-diff li', (lis) => lis.map((li) => li.textContent))
    expect(lines).toHaveLength(20)
    expect(lines[0]).toBe('Add job “Job 1” under bet “A sign-up page”')
    expect(await page.textContent('#proposals [data-proposal] .sub')).toContain('planner')
    await shots(page, 'proposals-review')
    // Review… leaves the focus on Apply
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe('Apply')
    await page.keyboard.press('Enter')
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#open-proposals')?.textContent === 'Proposals (0)', null, {
      timeout: 15_000,
    })
    const nodes = (await env.server.call('GET', `/api/v1/nodes?projectId=${P}`)).body.nodes
    expect(nodes.filter((n: any) => n.type === 'job')).toHaveLength(20)
    const history = (await env.server.call('GET', `/api/v1/history?projectId=${P}&limit=1`)).body.changes[0]
    expect(history.proposal.actor.agent).toBe('planner')
  }, 90_000)

  it('takes the applied proposal back with Review, by keyboard', async () => {
    await tabTo(page, '#proposals-close')
    await page.keyboard.press('Enter')
    await tabTo(page, '#open-review')
    await page.keyboard.press('Enter')
    await page.waitForSelector('#review .review-groups > li')
    const groups = await page.$$eval('#review .review-groups > li strong', (s) => s.map((x) => x.textContent))
    // Review lists people's changes too (the owner's seed of the plan): the proposal's is its own group
    const at = groups.indexOf('proposal by planner (owner): 20 changes')
    expect(at).toBeGreaterThanOrEqual(0)
    await tabTo(page, `#review .review-groups > li:nth-child(${at + 1}) .review-revert`)
    await page.keyboard.press('Enter')
    await page.waitForSelector('#review .review-plan')
    expect(await page.textContent('#review .review-plan')).toContain('Taking these back would make 20 changes')
    await shots(page, 'proposals-taken-back')
    await tabTo(page, '#review .review-confirm')
    await page.keyboard.press('Enter')
    await until(async () => {
      const nodes = (await env.server.call('GET', `/api/v1/nodes?projectId=${P}`)).body.nodes
      return nodes.every((n: any) => n.type !== 'job')
    }, 'the twenty jobs taken back')
    // Review drawn again (its dry run gone) before its Close is reached: a redraw would drop the focus
    await page.waitForFunction(() => !(globalThis as any).document.querySelector('#review .review-plan'), null, { timeout: 30_000 })
    await tabTo(page, '#review-close')
    await page.keyboard.press('Enter')
  }, 90_000)

  it('says in words what changed since, and rejects it', async () => {
    const made = await call(
      {
        action: 'propose',
        projectId: P,
        title: 'Sharper goal',
        mutations: [{ action: 'update', nodeId: 'goal-1', data: { label: 'Launch the beta in May' } }],
      },
      { 'x-agent-id': 'planner' },
    )
    expect(made.status).toBe(200)
    await call({ action: 'update', projectId: P, nodeId: 'goal-1', data: { label: 'Launch the beta in June' } })
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#open-proposals')?.textContent === 'Proposals (1)', null, {
      timeout: 15_000,
    })
    await tabTo(page, '#open-proposals')
    await page.keyboard.press('Enter')
    await page.waitForSelector('#proposals .proposal-open')
    await tabTo(page, '#proposals .proposal-open')
    await page.keyboard.press('Enter')
    await page.waitForSelector('#proposals [role=alert] li')
    expect(await page.textContent('#proposals .proposal-diff')).toBe(
      '“Launch the beta in June”: label “Launch the beta in June” → “Launch the beta in May”',
    )
    expect(await page.textContent('#proposals [role=alert] li')).toMatch(
      /^goal “Launch the beta in June”: label was changed by .+ at .+ to “Launch the beta in June”; this proposal sets “Launch the beta in May”$/,
    )
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe(
      'Apply anyway (their changes are overwritten)',
    )
    await shots(page, 'proposals-conflict')
    await tabTo(page, '#proposals .proposal-reject')
    await page.keyboard.press('Enter')
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#open-proposals')?.textContent === 'Proposals (0)', null, {
      timeout: 15_000,
    })
    const all = (await env.server.call('GET', `/api/v1/proposals?projectId=${P}`)).body.proposals
    expect(all.map((p: any) => p.status)).toEqual(['rejected', 'applied'])
    const goal = (await env.server.call('GET', `/api/v1/nodes?projectId=${P}`)).body.nodes.find((n: any) => n.id === 'goal-1')
    expect(goal.data.label).toBe('Launch the beta in June')
  }, 90_000)

  it("shows the applied proposal in the tree when the live stream's word comes after the answer", async () => {
    // applying reads the plan again; the stream's refresh that follows finds that plan unchanged,
    // so the Proposals view must draw the tree itself (else the new goal is not shown)
    const L = 'proposals-app-late'
    await addProject(env.server, L, 'Proposals, late word')
    // a tree already drawn (an empty plan's first goal draws the whole page anyway)
    expect((await call({ action: 'add', projectId: L, node: { type: 'goal', data: { label: 'First goal' } } })).status).toBe(200)
    const made = await call(
      {
        action: 'propose',
        projectId: L,
        title: 'A goal',
        mutations: [{ action: 'add', node: { type: 'goal', data: { label: 'Late goal' } } }],
      },
      { 'x-agent-id': 'planner' },
    )
    expect(made.status).toBe(200)
    const late = await openApp(env, L)
    const live = await holdableLive(late)
    await late.waitForFunction(() => (globalThis as any).document.querySelector('#open-proposals')?.textContent === 'Proposals (1)', null, {
      timeout: 30_000,
    })
    await late.click('#open-proposals')
    await late.click('#proposals .proposal-open')
    await late.waitForSelector('#proposals .proposal-apply')
    await live.hold()
    await late.click('#proposals .proposal-apply')
    // applied, and the plan read again (each load counts the open proposals)
    await late.waitForFunction(() => (globalThis as any).document.querySelector('#open-proposals')?.textContent === 'Proposals (0)', null, {
      timeout: 30_000,
    })
    const goal = (await env.server.call('GET', `/api/v1/nodes?projectId=${L}`)).body.nodes.find((n: any) => n.data.label === 'Late goal')
    expect(goal).toBeDefined()
    await live.release() // the stream's word of the apply, late
    await late.waitForSelector(`#tree [data-id="${goal.id}"]`, { timeout: 30_000 })
    await late.close()
  }, 120_000)

  it('keeps the keyboard focus on its button when a live change draws the view again', async () => {
    const L = 'proposals-app-focus'
    await addProject(env.server, L, 'Proposals, focus')
    const made = await call(
      {
        action: 'propose',
        projectId: L,
        title: 'A goal',
        mutations: [{ action: 'add', node: { type: 'goal', data: { label: 'Proposed goal' } } }],
      },
      { 'x-agent-id': 'planner' },
    )
    expect(made.status).toBe(200)
    const other = await openApp(env, L)
    await other.waitForFunction(
      () => (globalThis as any).document.querySelector('#open-proposals')?.textContent === 'Proposals (1)',
      null,
      {
        timeout: 30_000,
      },
    )
    await other.click('#open-proposals')
    await other.focus('#proposals .proposal-open')
    await other.evaluate(() => ((globalThis as any).document.activeElement.dataset.drawnBefore = 'yes'))
    // someone else's write: the page reads the plan again, and with it the open proposals
    expect((await call({ action: 'add', projectId: L, node: { type: 'goal', data: { label: 'Another goal' } } })).status).toBe(200)
    await other.waitForFunction(() => !(globalThis as any).document.querySelector('#proposals [data-drawn-before]'), null, {
      timeout: 30_000,
    })
    expect(await other.evaluate(() => (globalThis as any).document.activeElement?.matches('#proposals .proposal-open') ?? false)).toBe(true)
    await other.close()
  }, 120_000)
})
