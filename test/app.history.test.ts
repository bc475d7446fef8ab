import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Page } from 'playwright-core'
import { holdableLive } from './app.hold'
import { type AppEnv, addProject, haveChromium, openApp, shots, startApp } from './app.lib'

// history.md, 5: the details panel's History section, in real Chromium against the real server.
if (!haveChromium) console.warn('app.history.test.ts: skipped, /usr/bin/chromium is not installed')
const P = 'history-app'

describe.skipIf(!haveChromium)('the app: a node’s history', () => {
  let env: AppEnv
  let page: Page
  beforeAll(async () => {
    env = await startApp()
    await addProject(env.server, P, 'History')
    const call = (body: unknown, headers: Record<string, string> = {}) => env.server.call('POST', '/api/v1/mutate', { body, headers })
    await call({ action: 'add', projectId: P, node: { type: 'goal', data: { label: 'Grow revenue' } } })
    await call({ action: 'update', projectId: P, nodeId: 'goal-1', data: { label: 'Grow revenue 20%' } }, { 'x-agent-id': 'claude-code' })
    page = await openApp(env, P)
  }, 90_000)
  afterAll(async () => {
    await env?.browser.close()
    await env?.server.close()
  })

  it('shows who changed the node, when and what, newest first', async () => {
    await page.click('#tree [data-id="goal-1"] .label')
    const item = await page.waitForSelector('#panel section.history li', { timeout: 15_000 })
    expect(await item.textContent()).toMatch(/^just nowclaude-code \(owner\) label: Grow revenue → Grow revenue 20% Revert…$/)
    const all = await page.$$eval('#panel section.history li', (lis) => lis.map((li) => li.textContent))
    expect(all).toEqual([expect.stringContaining('claude-code (owner) label'), expect.stringContaining('owner added it')])
    await shots(page, 'history-panel')
  }, 60_000)

  it("reviews an agent's changes: the dry run first, the conflicts in words, then takes them back", async () => {
    const call = (body: unknown, headers: Record<string, string> = {}) => env.server.call('POST', '/api/v1/mutate', { body, headers })
    const bot = { 'x-agent-id': 'bulk-bot' }
    await call(
      {
        action: 'batch',
        projectId: P,
        mutations: [
          { action: 'add', node: { type: 'goal', data: { label: 'Bot goal A' } } },
          { action: 'add', node: { type: 'goal', data: { label: 'Bot goal B' } } },
        ],
      },
      bot,
    )
    // a person renames one of them afterwards: a conflict
    await call({ action: 'update', projectId: P, nodeId: 'goal-3', data: { label: 'Bot goal B, kept' } })
    await page.click('#open-review')
    await page.waitForSelector('#review .review-groups > li')
    const groups = await page.$$eval('#review .review-groups > li strong', (s) => s.map((x) => x.textContent))
    // every change, by agents and people (issue 55): the owner's own two writes too
    expect(groups).toEqual(['bulk-bot (owner): 2 changes', 'claude-code (owner): 1 change', 'owner: 1 change', 'owner: 1 change'])
    await page.click('#review .review-groups > li:first-child .review-revert')
    await page.waitForSelector('#review .review-plan')
    expect(await page.textContent('#review .review-plan')).toContain("goal-3's label was changed again later by someone else")
    await shots(page, 'review-dry-run')
    await page.click('#review .review-confirm')
    await page.waitForFunction(() => !(globalThis as any).document.querySelector('#tree [data-id="goal-2"]'))
    const nodes = (await env.server.call('GET', `/api/v1/nodes?projectId=${P}`)).body.nodes.map((n: any) => n.id)
    expect(nodes).toEqual(['goal-1'])
    await shots(page, 'review-reverted')
  }, 60_000)

  it("shows the revert in the tree when the live stream's word comes after the revert's answer", async () => {
    // Review reads the plan again after its revert; the stream's refresh that follows finds that
    // plan unchanged, so Review must draw the tree itself (else the reverted goals stay shown)
    const L = 'history-app-late'
    await addProject(env.server, L, 'History, late word')
    const late = await openApp(env, L)
    const live = await holdableLive(late)
    const mutations = [
      { action: 'add', node: { type: 'goal', data: { label: 'Bot goal A' } } },
      { action: 'add', node: { type: 'goal', data: { label: 'Bot goal B' } } },
    ]
    const res = await env.server.call('POST', '/api/v1/mutate', {
      body: { action: 'batch', projectId: L, mutations },
      headers: { 'x-agent-id': 'bulk-bot' },
    })
    expect(res.status).toBe(200)
    const ids = (await env.server.call('GET', `/api/v1/nodes?projectId=${L}`)).body.nodes.map((n: any) => n.id)
    expect(ids).toHaveLength(2)
    const shown = (want: string[]) =>
      late.waitForFunction((w) => w.every((id) => (globalThis as any).document.querySelector(`#tree [data-id="${id}"]`)), want, {
        timeout: 30_000,
      })
    await shown(ids)
    // someone else's new goals are marked for a few seconds, and unmarking them draws the tree
    // again: wait until that is over, so nothing but the revert itself can draw it
    await late.waitForFunction(() => !(globalThis as any).document.querySelector('#tree .changed'), null, { timeout: 30_000 })
    await late.click('#open-review')
    await late.waitForSelector('#review .review-groups > li:first-child .review-revert')
    await late.click('#review .review-groups > li:first-child .review-revert')
    await late.waitForSelector('#review .review-plan')
    await live.hold()
    await late.click('#review .review-confirm')
    // Review has taken them back, read the plan and drawn itself again (its dry run gone)
    await late.waitForFunction(() => !(globalThis as any).document.querySelector('#review .review-plan'), null, { timeout: 30_000 })
    expect((await env.server.call('GET', `/api/v1/nodes?projectId=${L}`)).body.nodes).toEqual([])
    await live.release() // the stream's word of the revert, late
    await late.waitForFunction(() => !(globalThis as any).document.querySelector('#tree [data-id]'), null, { timeout: 30_000 })
    await late.close()
  }, 120_000)
})
