import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { planHtml } from '../src/web/plan-bundle'
import { type AppEnv, addProject, haveChromium, OUT, openApp, startApp } from './app.lib'

/**
 * Issue 55, second contact with the app: the tree as it was after a reload, Review over any
 * time and anyone, a History entry taken back, Activity saying "reverted", and the MCP plan view
 * opened outside a host. Real Chromium against the real server.
 */
if (!haveChromium) console.warn('app.second.test.ts: skipped, /usr/bin/chromium is not installed')
const P = 'second-app'

describe.skipIf(!haveChromium)('the app, second contact', () => {
  let env: AppEnv
  let page: Page
  const call = (body: unknown, headers: Record<string, string> = {}) => env.server.call('POST', '/api/v1/mutate', { body, headers })
  const row = (id: string) => `#tree [role=treeitem][data-id="${id}"]`
  const node = async (id: string) =>
    (await env.server.call('GET', `/api/v1/nodes?projectId=${P}`)).body.nodes.find((n: { id: string }) => n.id === id)

  beforeAll(async () => {
    env = await startApp()
    await addProject(env.server, P, 'Second')
    const res = await call({
      action: 'batch',
      projectId: P,
      mutations: [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Grow' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Faster checkout' } } },
        { action: 'add', node: { id: 'draft-b', type: 'approach', parentId: 'draft-n', data: { label: 'One-page form' } } },
        { action: 'add', node: { id: 'draft-j1', type: 'job', parentId: 'draft-b', data: { label: 'Design the form' } } },
        { action: 'add', node: { id: 'draft-j2', type: 'job', parentId: 'draft-b', data: { label: 'Ship the form' } } },
      ],
    })
    expect(res.status).toBe(200)
    page = await openApp(env, P)
  }, 90_000)
  afterAll(async () => {
    await env?.browser.close()
    await env?.server.close()
  })

  it('item 5: a reload keeps the open branches and the selection; End and x act on what is shown', async () => {
    await page.focus(row('goal-1'))
    await page.keyboard.press('*') // every goal open, and everything beneath
    await page.waitForSelector(row('job-1'))
    await page.click(`${row('job-1')} > .row .label`)
    await page.waitForSelector(`${row('job-1')}[aria-selected=true]`)
    // a stale id in the kept state is dropped, not fatal
    await page.evaluate(() => {
      const ls = (globalThis as any).localStorage
      for (let i = 0; i < ls.length; i++) {
        const k = ls.key(i)
        if (k.startsWith('arbor.tree.second-app.')) {
          const v = JSON.parse(ls.getItem(k))
          v.expanded.push('goal-99')
          ls.setItem(k, JSON.stringify(v))
        }
      }
    })
    await page.reload()
    await page.waitForSelector(`${row('job-1')}[aria-selected=true]`, { timeout: 20_000 })
    const open = await page.$$eval('#tree [aria-expanded=true]', (xs) => xs.map((x) => (x as any).dataset.id))
    expect(open.sort()).toEqual(['approach-1', 'goal-1', 'need-1'])
    await page.keyboard.press('Tab') // one Tab from the page's start reaches the tree's selected item
    await page.waitForFunction(() => (globalThis as any).document.activeElement?.dataset.id === 'job-1')
    await page.keyboard.press('x')
    for (let i = 0; i < 100 && (await node('job-1')).data.status !== 'done'; i++) await Bun.sleep(100)
    expect((await node('job-1')).data.status).toBe('done')
    // End: the last item shown, the second job deep in the open branch (not the goal a collapsed tree ends on)
    await page.keyboard.press('End')
    await page.waitForFunction(() => (globalThis as any).document.activeElement?.dataset.id === 'job-2')
    await page.keyboard.press('x')
    for (let i = 0; i < 100 && (await node('job-2')).data.status !== 'done'; i++) await Bun.sleep(100)
    expect((await node('job-2')).data.status).toBe('done')
  }, 90_000)

  it('item 6: Review lists every change (people and agents) over a chosen time, by who; a second visit is not empty', async () => {
    const R = 'second-review'
    await addProject(env.server, R, 'Review')
    const mutateR = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      call({ projectId: R, ...body }, { prefer: 'change-ids', ...headers })
    await mutateR({ action: 'add', node: { type: 'goal', data: { label: 'People goal' } } })
    await mutateR({ action: 'add', node: { type: 'goal', data: { label: 'Bot goal' } } }, { 'x-agent-id': 'bulk-bot' })
    const p = await openApp(env, R)
    await p.click('#open-review')
    await p.waitForSelector('#review .review-groups > li')
    const groups = () => p.$$eval('#review .review-groups > li strong', (s) => s.map((x) => x.textContent).sort())
    expect(await groups()).toEqual(['bulk-bot (owner): 1 change', 'owner: 1 change'])
    const choices = await p.$$eval('#review-when option', (o) => o.map((x) => (x as any).value))
    expect(choices).toEqual(['hour', 'today', 'week', 'visit', 'custom'])
    await p.selectOption('#review-who', 'owner')
    await p.waitForFunction(() => (globalThis as any).document.querySelectorAll('#review .review-groups > li').length === 1)
    expect(await groups()).toEqual(['owner: 1 change'])
    // a second visit: the same changes are still there (the last visit is a choice, not the default)
    await p.reload()
    await p.waitForSelector('#tree')
    await p.click('#open-review')
    await p.waitForSelector('#review .review-groups > li')
    expect(await groups()).toEqual(['bulk-bot (owner): 1 change', 'owner: 1 change'])
    // since my last visit: nothing changed since the page before this one was opened
    await p.selectOption('#review-when', 'visit')
    await p.waitForSelector('#review p.empty')
    expect(await p.textContent('#review p.empty')).toMatch(/^No change since /)
    await p.selectOption('#review-when', 'hour')
    await p.waitForSelector('#review .review-groups > li')
    expect(await groups()).toEqual(['bulk-bot (owner): 1 change', 'owner: 1 change'])
    await p.close()
  }, 90_000)

  it('item 6: a History entry in the details is reverted: the dry run first, then Revert', async () => {
    const H = 'second-history'
    await addProject(env.server, H, 'History')
    await call({ action: 'add', projectId: H, node: { type: 'goal', data: { label: 'Old name' } } })
    await call({ action: 'update', projectId: H, nodeId: 'goal-1', data: { label: 'New name' } }, { 'x-agent-id': 'bot' })
    const p = await openApp(env, H)
    await p.click('#tree [data-id="goal-1"] .label')
    await p.waitForSelector('#panel section.history li .history-revert')
    await p.click('#panel section.history li:first-child .history-revert')
    await p.waitForSelector('#panel section.history .review-plan')
    expect(await p.textContent('#panel section.history .review-plan')).toContain('Reverting this would make 1 change.')
    // a dry run wrote nothing
    expect((await env.server.call('GET', `/api/v1/nodes?projectId=${H}`)).body.nodes[0].data.label).toBe('New name')
    await p.click('#panel section.history .history-confirm')
    await p.waitForFunction(
      () => (globalThis as any).document.querySelector('#tree [data-id="goal-1"] .label')?.textContent === 'Old name',
      undefined,
      { timeout: 20_000 },
    )
    expect((await env.server.call('GET', `/api/v1/nodes?projectId=${H}`)).body.nodes[0].data.label).toBe('Old name')
    // the revert is itself in the History, and can be taken back in turn
    await p.waitForFunction(
      () =>
        /took a change back|label: New name → Old name/.test(
          (globalThis as any).document.querySelector('#panel section.history li')?.textContent ?? '',
        ),
      undefined,
      { timeout: 20_000 },
    )
    await p.close()
  }, 90_000)

  it('item 7: Activity says "reverted" and who, not "deleted" or "changed"', async () => {
    const A = 'second-activity'
    await addProject(env.server, A, 'Activity')
    const w = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const res = await call({ projectId: A, ...body }, { prefer: 'change-ids', ...headers })
      expect(res.status).toBe(200)
      return res.body.changeIds as string[]
    }
    await w({ action: 'add', node: { type: 'goal', data: { label: 'Kept goal' } } })
    const renamed = await w({ action: 'update', nodeId: 'goal-1', data: { label: 'Kept goal, renamed' } })
    const added = await w({ action: 'add', node: { type: 'goal', data: { label: 'Gone goal' } } })
    await w({ action: 'revert', changeIds: renamed }, { 'x-agent-id': 'fixer' })
    await w({ action: 'revert', changeIds: added }, { 'x-agent-id': 'fixer' })
    const p = await openApp(env, A)
    await p.click('#open-activity')
    await p.waitForFunction(() => (globalThis as any).document.querySelectorAll('#activity li').length >= 5, undefined, { timeout: 20_000 })
    const lines = await p.$$eval('#activity li', (l) => l.map((x) => (x.textContent ?? '').replace(/^.*? ago|^just now/, '')))
    expect(lines.slice(0, 2)).toEqual(['fixer (owner) reverted, removing Gone goal', 'fixer (owner) reverted a change of Kept goal'])
    await p.close()
  }, 90_000)

  // a file opened from disk: this file's browser, no server (its own would cost a second server's start)
  it('item 9: the MCP plan view outside a host says what it is and how to open it, with no "Method not found"', async () => {
    const file = join(OUT, 'plan-view-alone.html')
    writeFileSync(file, await planHtml())
    const page = await env.browser.newPage({ viewport: { width: 1280, height: 800 } })
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    await page.goto(`file://${file}`)
    await page.waitForSelector('.no-host', { timeout: 20_000 })
    // biome-ignore lint/performance/useDomNodeTextContent: what is shown, not the inline script's text
    const text = await page.innerText('body')
    expect(text).toContain('MCP App')
    expect(text).toContain('open_plan')
    expect(text).toContain('/app')
    expect(text).not.toContain('Method not found')
    expect(errors).toEqual([])
    await page.screenshot({ path: join(OUT, 'second-contact-plan-view-1280.png') })
  }, 60_000)
})
