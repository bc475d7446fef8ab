import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { type AppEnv, addProject, haveChromium, openApp, startApp } from './app.lib'

/**
 * history.md §5 and live.md §5 by a person's hands alone, in real Chromium against the real
 * server: Review (an agent's change taken back, then everything another agent did), the Proposals
 * view (one read and put down, one rejected, one applied), a node's History and the Activity
 * column, each by keyboard only (Tab, Shift+Tab, Enter, Escape, letters; no mouse, and no focus
 * given by script), at 1280 × 800 and on a phone at 390 × 844. At every step the focus is where
 * a person expects it, on a control with a name, on screen and not under another element, with
 * its focus ring; the widgets say what they are (aria-expanded, regions, alerts only for
 * conflicts). Screenshots of each key state go to test-output/app/keys/ (or ARBOR_SHOTS).
 */
if (!haveChromium) console.warn('app.keys-review.test.ts: skipped, /usr/bin/chromium is not installed')
const SHOTS = process.env.ARBOR_SHOTS ?? join(import.meta.dir, '..', 'test-output', 'app', 'keys')

interface Focus {
  tag: string
  id: string
  role: string
  name: string
  /** the focused element's box inside the viewport, and the element at its centre it or inside it */
  onScreen: boolean
  covered: string | null
  ring: boolean
}

/** Where the keyboard focus is, what a screen reader would call it, and whether a person can see it. */
const focusOf = (page: Page): Promise<Focus> =>
  page.evaluate(() => {
    const d = (globalThis as any).document
    const w = globalThis as any
    const a = d.activeElement
    if (!a || a === d.body) return { tag: 'body', id: '', role: '', name: '', onScreen: false, covered: null, ring: false }
    const implicit: Record<string, string> = { BUTTON: 'button', SELECT: 'combobox', INPUT: 'textbox', TEXTAREA: 'textbox', A: 'link' }
    const r = a.getBoundingClientRect()
    const onScreen =
      r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= w.innerHeight + 1 && r.right <= w.innerWidth + 1
    const top = d.elementFromPoint(r.left + r.width / 2, r.top + Math.min(r.height / 2, 10))
    const covered =
      top && (top === a || a.contains(top)) ? null : top ? `${top.tagName.toLowerCase()}#${top.id}.${top.className}` : 'nothing'
    // the ring: an outline (or a shadow) on the element, or on a tree item's row
    const looks = (e: any) => {
      if (!e) return false
      const s = w.getComputedStyle(e)
      return (s.outlineStyle !== 'none' && Number.parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none'
    }
    const labelledBy = a.getAttribute('aria-labelledby')
    const name = (
      a.getAttribute('aria-label') ??
      (labelledBy ? d.getElementById(labelledBy)?.textContent : null) ??
      (a.labels?.[0]?.textContent || a.textContent || '')
    )
      .replace(/\s+/g, ' ')
      .trim()
    return {
      tag: a.tagName.toLowerCase(),
      id: a.id,
      role: a.getAttribute('role') ?? implicit[a.tagName] ?? '',
      name,
      onScreen,
      covered,
      ring: looks(a) || looks(a.querySelector(':scope > .row')),
    }
  })

/** The focus is on a control a person can see: on screen, not under anything, with its ring and a name. */
async function seen(page: Page, what: string): Promise<Focus> {
  const f = await focusOf(page)
  expect({ what, tag: f.tag, onScreen: f.onScreen, covered: f.covered, ring: f.ring, named: f.name !== '' }).toEqual({
    what,
    tag: f.tag === 'body' ? 'a control' : f.tag,
    onScreen: true,
    covered: null,
    ring: true,
    named: true,
  })
  return f
}

const isFocused = (page: Page, selector: string) =>
  page.evaluate((s) => (globalThis as any).document.activeElement?.matches(s) ?? false, selector)

/** Wait (generously: the machine is loaded) until the focus is on `selector`; then it must be seen. */
async function focusOn(page: Page, selector: string, what: string): Promise<Focus> {
  try {
    await page.waitForFunction((s) => (globalThis as any).document.activeElement?.matches(s) ?? false, selector, { timeout: 30_000 })
  } catch {
    throw new Error(`${what}: the focus never reached ${selector}; it is on ${JSON.stringify(await focusOf(page))}`)
  }
  return seen(page, what)
}

/**
 * Tab (or Shift+Tab) until the focus is on `selector`, at most 40 presses; every stop on the
 * way must be a control a person can see (on a phone nothing reachable may hide under a sheet).
 */
async function tabTo(page: Page, selector: string, back = false) {
  for (let i = 0; i < 40; i++) {
    if (await isFocused(page, selector)) return seen(page, `Tab to ${selector}`)
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab')
    const f = await focusOf(page)
    if (f.tag !== 'body') await seen(page, `a Tab stop on the way to ${selector} (${f.tag}#${f.id} “${f.name}”)`)
  }
  throw new Error(`Tab never reached ${selector}; the focus is on ${JSON.stringify(await focusOf(page))}`)
}

/** A menu button: on a phone the menu folds behind ☰, opened by keyboard first. */
async function toMenuButton(page: Page, phone: boolean, id: string) {
  if (phone && !(await page.evaluate(() => (globalThis as any).document.body.classList.contains('menu-open')))) {
    await tabTo(page, '#open-menu')
    await page.keyboard.press('Enter')
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#open-menu').getAttribute('aria-expanded') === 'true')
  }
  return tabTo(page, id)
}

/** Where the focus goes back to when a column closes: its menu button, or ☰ on a phone (the menu folded). */
const backTo = (phone: boolean, id: string) => (phone ? '#open-menu' : id)

const text = (page: Page, selector: string) =>
  page.evaluate((s) => (globalThis as any).document.querySelector(s)?.textContent ?? null, selector)
const attr = (page: Page, selector: string, name: string) =>
  page.evaluate(([s, n]) => (globalThis as any).document.querySelector(s)?.getAttribute(n) ?? null, [selector, name] as const)
async function waitText(page: Page, selector: string, want: string | RegExp, what: string) {
  try {
    await page.waitForFunction(
      ([s, w, re]) => {
        const t = (globalThis as any).document.querySelector(s)?.textContent ?? ''
        return re ? new RegExp(w).test(t) : t === w
      },
      [selector, want instanceof RegExp ? want.source : want, want instanceof RegExp] as const,
      { timeout: 30_000 },
    )
  } catch {
    throw new Error(`${what}: ${selector} says ${JSON.stringify(await text(page, selector))}, not ${want}`)
  }
}

/** What a person reads: the rendered text (innerText), spaces as laid out. */
const shown = (page: Page, selector: string) =>
  // biome-ignore lint/performance/useDomNodeTextContent: the text as rendered is the point (CSS can swallow a space that textContent keeps)
  page.evaluate((s) => (globalThis as any).document.querySelector(s)?.innerText.replace(/\s+/g, ' ').trim() ?? null, selector)

/**
 * The stream's word of this page's own revert arriving before the revert's answer, as it may on a
 * loaded machine: the answer is held until the tree shows `label` on `nodeId` by the stream alone.
 */
async function answerAfterTheStream(page: Page, nodeId: string, label: string) {
  await page.route('**/api/v1/mutate', async (route) => {
    const body = route.request().postDataJSON()
    if (body?.action !== 'revert' || body.dryRun) return route.continue()
    const res = await route.fetch()
    await page.waitForFunction(
      ([id, want]) => (globalThis as any).document.querySelector(`#tree [data-id="${id}"] .label`)?.textContent === want,
      [nodeId, label] as const,
      { timeout: 30_000 },
    )
    await route.fulfill({ response: res })
  })
  return () => page.unroute('**/api/v1/mutate')
}

async function shot(page: Page, name: string) {
  const size = page.viewportSize()!.width
  await page.screenshot({ path: join(SHOTS, `${name}-${size}.png`) })
}

describe.skipIf(!haveChromium)('the app by keyboard alone: Review, Proposals, History, Activity', () => {
  let env: AppEnv
  const call = (body: unknown, headers: Record<string, string> = {}) => env.server.call('POST', '/api/v1/mutate', { body, headers })
  const write = async (body: unknown, headers: Record<string, string> = {}) => {
    const res = await call(body, headers)
    if (res.status !== 200) throw new Error(`${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`)
    return res.body
  }
  const nodes = async (p: string) => (await env.server.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes as any[]
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true })
    env = await startApp()
  }, 90_000)
  afterAll(async () => {
    await env?.browser.close()
    await env?.server.close()
  })

  for (const phone of [false, true]) {
    const size = phone ? '390 × 844' : '1280 × 800'
    const tag = phone ? 'phone' : 'desk'

    it(`Review at ${size}: an agent's change taken back, then all another agent did`, async () => {
      const P = `keys-review-${tag}`
      await addProject(env.server, P, 'Review by keyboard')
      await write({ action: 'add', projectId: P, node: { type: 'goal', data: { label: 'Grow revenue' } } })
      await write(
        { action: 'update', projectId: P, nodeId: 'goal-1', data: { label: 'Grow revenue 20%' } },
        { 'x-agent-id': 'claude-code' },
      )
      await write(
        {
          action: 'batch',
          projectId: P,
          mutations: [
            { action: 'add', node: { type: 'goal', data: { label: 'Bot goal A' } } },
            { action: 'add', node: { type: 'goal', data: { label: 'Bot goal B' } } },
          ],
        },
        { 'x-agent-id': 'bulk-bot' },
      )
      const page = await openApp(env, P, { phone })
      await page.waitForSelector('#tree [data-id="goal-3"]', { timeout: 30_000 })
      await page.keyboard.press('Tab')
      expect(await focusOn(page, '#tree [data-id="goal-1"]', 'one Tab reaches the plan')).toMatchObject({ role: 'treeitem' })

      // open Review: the focus goes into it (it comes before the header in the page's order)
      await toMenuButton(page, phone, '#open-review')
      expect(await attr(page, '#open-review', 'aria-expanded')).toBe('false')
      await page.keyboard.press('Enter')
      const first = await focusOn(page, '#review .review-groups > li:first-child .review-revert', 'Review opened')
      expect(first).toMatchObject({ role: 'button', name: 'Revert… 2 changes by bulk-bot (owner)' })
      expect(await attr(page, '#open-review', 'aria-expanded')).toBe('true')
      expect(await attr(page, '#review', 'aria-label')).toBe('Review changes')
      const groups = await page.$$eval('#review .review-groups > li strong', (s) => s.map((x) => x.textContent))
      expect(groups).toEqual(['bulk-bot (owner): 2 changes', 'claude-code (owner): 1 change', 'owner: 1 change'])
      await shot(page, 'review-open')
      // Tab on and on: every stop is a control a person sees (on a phone Review covers the page,
      // and nothing under it may take the focus), until the page's end
      for (let i = 0; i < 12; i++) {
        await page.keyboard.press('Tab')
        const f = await focusOf(page)
        if (f.tag === 'body') break
        await seen(page, `Tab ${i + 1} from Review's first Revert… (${f.tag}#${f.id} “${f.name}”)`)
      }

      // to claude-code's change; its dry run; Escape puts it down
      const claude = '#review .review-groups > li:nth-child(2)'
      expect(await tabTo(page, `${claude} .review-revert`)).toMatchObject({ name: 'Revert… 1 change by claude-code (owner)' })
      await page.keyboard.press('Enter')
      expect(await focusOn(page, `${claude} .review-confirm`, 'the dry run shown')).toMatchObject({ role: 'button', name: 'Revert' })
      expect(await attr(page, `${claude} .review-plan`, 'role')).toBe('region')
      expect(await text(page, `${claude} .review-plan`)).toContain('Taking these back would make 1 change:set back “Grow revenue”')
      expect(await page.$$('#review [role=alert]')).toHaveLength(0) // no conflict: nothing announced as one
      await shot(page, 'review-dry-run')
      await page.keyboard.press('Escape')
      await focusOn(page, `${claude} .review-revert`, 'Escape put the dry run down')
      expect(await page.$$('#review .review-plan')).toHaveLength(0)
      expect(await page.isVisible('#review')).toBe(true) // Escape took back one step, not the whole Review

      // its Cancel does the same; then Revert for real
      await page.keyboard.press('Enter')
      await focusOn(page, `${claude} .review-confirm`, 'the dry run shown again')
      expect(await tabTo(page, `${claude} .review-plan button.quiet`)).toMatchObject({ name: 'Cancel' })
      await page.keyboard.press('Enter')
      await focusOn(page, `${claude} .review-revert`, 'Cancel put the dry run down')
      await page.keyboard.press('Enter')
      await focusOn(page, `${claude} .review-confirm`, 'the dry run shown a third time')
      const unroute = await answerAfterTheStream(page, 'goal-1', 'Grow revenue')
      await page.keyboard.press('Enter')
      await waitText(page, '#tree [data-id="goal-1"] .label', 'Grow revenue', 'the tree shows the goal as it was')
      // the confirmation is gone: the focus is back on the group's Revert…, not lost to the page
      await page.waitForFunction(() => !(globalThis as any).document.querySelector('#review .review-plan'), null, { timeout: 30_000 })
      // the group says it is taken back (its Revert… stays: a dry run says what is left to do)
      expect(await focusOn(page, `${claude} .review-revert`, 'the revert done')).toMatchObject({
        name: 'Revert… 1 change by claude-code (owner) (taken back already)',
      })
      expect(await shown(page, `${claude} .taken-back`)).toBe('taken back')
      await waitText(page, '#status', 'Took back 1 change by claude-code (owner).', 'the status line says so')
      await unroute()
      expect((await nodes(P)).find((n) => n.id === 'goal-1').data.label).toBe('Grow revenue')
      // taken back by this page: not marked as changed by someone else
      expect(await page.$$('#tree [data-id="goal-1"] .chip.elsewhere')).toHaveLength(0)
      await shot(page, 'review-reverted')

      // everything bulk-bot did: Who narrowed to it by type-ahead (the focus stays on the list box)
      await tabTo(page, '#review-who', true)
      expect(await focusOf(page)).toMatchObject({ role: 'combobox', name: expect.stringMatching(/^Who Everyone/) })
      await page.keyboard.press('b')
      await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#review .review-groups > li').length === 1, null, {
        timeout: 30_000,
      })
      await focusOn(page, '#review-who', 'Who narrowed, the list drawn again')
      expect(await page.$$eval('#review .review-groups > li strong', (s) => s.map((x) => x.textContent))).toEqual([
        'bulk-bot (owner): 2 changes',
      ])
      await tabTo(page, '#review .review-revert')
      await page.keyboard.press('Enter')
      await focusOn(page, '#review .review-confirm', "bulk-bot's dry run")
      expect(await text(page, '#review .review-plan')).toContain('Taking these back would make 2 changes')
      await page.keyboard.press('Enter')
      await page.waitForFunction(
        () => !(globalThis as any).document.querySelector('#tree [data-id="goal-2"], #tree [data-id="goal-3"]'),
        null,
        {
          timeout: 30_000,
        },
      )
      await page.waitForFunction(() => !(globalThis as any).document.querySelector('#review .review-plan'), null, { timeout: 30_000 })
      expect(await focusOn(page, '#review .review-revert', "bulk-bot's changes taken back")).toMatchObject({
        name: 'Revert… 2 changes by bulk-bot (owner) (taken back already)',
      })
      expect((await nodes(P)).map((n) => n.id)).toEqual(['goal-1'])
      await shot(page, 'review-agent-reverted')

      // Escape closes Review; the focus goes back to where it was opened from
      await page.keyboard.press('Escape')
      await focusOn(page, backTo(phone, '#open-review'), 'Review closed by Escape')
      expect(await page.isVisible('#review')).toBe(false)
      expect(await attr(page, '#open-review', 'aria-expanded')).toBe('false')
      await shot(page, 'review-closed')
      await page.close()
    }, 240_000)

    it(`Proposals at ${size}: one read and put down, rejected; another applied`, async () => {
      const P = `keys-proposals-${tag}`
      await addProject(env.server, P, 'Proposals by keyboard')
      await write({ action: 'add', projectId: P, node: { type: 'goal', data: { label: 'Grow revenue' } } })
      const propose = (title: string, mutations: unknown[]) =>
        write({ action: 'propose', projectId: P, title, mutations }, { 'x-agent-id': 'planner' })
      await propose('A need for the goal', [
        { action: 'add', node: { type: 'need', parentId: 'goal-1', data: { label: 'Buyers pay in one step' } } },
      ])
      await propose('A sharper goal', [{ action: 'update', nodeId: 'goal-1', data: { label: 'Grow revenue 30%' } }])
      const page = await openApp(env, P, { phone })
      await waitText(page, '#open-proposals', 'Proposals (2)', 'the open count')
      await page.keyboard.press('Tab')
      await focusOn(page, '#tree [data-id="goal-1"]', 'one Tab reaches the plan')

      await toMenuButton(page, phone, '#open-proposals')
      expect(await focusOf(page)).toMatchObject({ name: 'Proposals: 2 open ones' })
      await page.keyboard.press('Enter')
      // the newest first: its Review…, named by its title
      const sharper = '#proposals .proposal-list > li:first-child'
      expect(await focusOn(page, `${sharper} .proposal-open`, 'Proposals opened')).toMatchObject({
        role: 'button',
        name: 'Review… “A sharper goal”',
      })
      expect(await attr(page, '#open-proposals', 'aria-expanded')).toBe('true')
      await page.keyboard.press('Enter')
      expect(await focusOn(page, `${sharper} .proposal-apply`, 'the proposal read')).toMatchObject({ name: 'Apply' })
      expect(await text(page, `${sharper} .proposal-diff`)).toBe('“Grow revenue”: label “Grow revenue” → “Grow revenue 30%”')
      expect(await page.$$('#proposals [role=alert]')).toHaveLength(0)
      await shot(page, 'proposal-read')
      // Escape puts it down, back on its Review…; its Close does the same
      await page.keyboard.press('Escape')
      await focusOn(page, `${sharper} .proposal-open`, 'Escape put the proposal down')
      expect(await page.$$('#proposals .proposal-diff')).toHaveLength(0)
      await page.keyboard.press('Enter')
      await focusOn(page, `${sharper} .proposal-apply`, 'the proposal read again')
      expect(await tabTo(page, `${sharper} .review-plan button.quiet`)).toMatchObject({ name: 'Close' })
      await page.keyboard.press('Enter')
      await focusOn(page, `${sharper} .proposal-open`, 'Close put the proposal down')

      // rejected: the focus goes on to the next proposal waiting
      await page.keyboard.press('Enter')
      await focusOn(page, `${sharper} .proposal-apply`, 'read a third time')
      expect(await tabTo(page, `${sharper} .proposal-reject`)).toMatchObject({ name: 'Reject' })
      await page.keyboard.press('Enter')
      await waitText(page, '#open-proposals', 'Proposals (1)', 'one left')
      expect(await focusOn(page, '#proposals .proposal-open', 'the rejected one gone')).toMatchObject({
        name: 'Review… “A need for the goal”',
      })
      await waitText(page, '#status', 'Rejected “A sharper goal”.', 'the status line says so')
      await shot(page, 'proposal-rejected')

      // the other applied: the new need is in the plan, under the goal
      await page.keyboard.press('Enter')
      await focusOn(page, '#proposals .proposal-apply', 'the second proposal read')
      expect(await text(page, '#proposals .proposal-diff')).toBe('Add need “Buyers pay in one step” under goal “Grow revenue”')
      await page.keyboard.press('Enter')
      await waitText(page, '#open-proposals', 'Proposals (0)', 'none left')
      await focusOn(page, '#proposals-close', 'the last one applied')
      expect(await focusOf(page)).toMatchObject({ name: 'Close the proposals' })
      await waitText(page, '#status', 'Applied “A need for the goal”.', 'the status line says so')
      const need = (await nodes(P)).find((n) => n.type === 'need')
      expect(need).toMatchObject({ parentId: 'goal-1', data: { label: 'Buyers pay in one step' } })
      expect(await attr(page, '#tree [data-id="goal-1"]', 'aria-expanded')).not.toBeNull() // the goal has a child now
      await shot(page, 'proposal-applied')
      const all = (await env.server.call('GET', `/api/v1/proposals?projectId=${P}`)).body.proposals
      expect(all.map((p: any) => [p.title, p.status])).toEqual([
        ['A sharper goal', 'rejected'],
        ['A need for the goal', 'applied'],
      ])

      // Escape closes the panel, the focus back where it was opened from
      await page.keyboard.press('Escape')
      await focusOn(page, backTo(phone, '#open-proposals'), 'Proposals closed by Escape')
      expect(await page.isVisible('#proposals')).toBe(false)
      expect(await attr(page, '#open-proposals', 'aria-expanded')).toBe('false')
      await page.close()
    }, 240_000)

    it(`a node's History at ${size}: a change's dry run, put down by Escape, then taken back`, async () => {
      const P = `keys-history-${tag}`
      await addProject(env.server, P, 'History by keyboard')
      await write({ action: 'add', projectId: P, node: { type: 'goal', data: { label: 'Grow revenue' } } })
      await write(
        { action: 'update', projectId: P, nodeId: 'goal-1', data: { label: 'Grow revenue 20%' } },
        { 'x-agent-id': 'claude-code' },
      )
      const page = await openApp(env, P, { phone })
      await page.keyboard.press('Tab')
      await focusOn(page, '#tree [data-id="goal-1"]', 'one Tab reaches the plan')
      await page.keyboard.press(' ')
      await focusOn(page, '#f-label', 'Space opened the details')
      const newest = '#panel section.history li:first-child'
      await page.waitForSelector(`${newest} .history-revert`, { timeout: 30_000 })
      // the agent's change, by its id: a later change comes before it in the list
      const claude = `#panel section.history li[data-change="${await attr(page, newest, 'data-change')}"]`
      expect(await tabTo(page, `${claude} .history-revert`)).toMatchObject({
        role: 'button',
        name: 'Revert this change (label: Grow revenue → Grow revenue 20%)',
      })
      await page.keyboard.press('Enter')
      expect(await focusOn(page, `${claude} .history-confirm`, 'the dry run shown')).toMatchObject({ name: 'Revert' })
      expect(await text(page, `${claude} .review-plan`)).toContain('Reverting this would make 1 change.')
      // who, then what, as words of one line (a space between them)
      expect(await shown(page, `${claude} .who`)).toBe('claude-code (owner)')
      expect(await shown(page, claude)).toStartWith('just now claude-code (owner) label: Grow revenue → Grow revenue 20%')
      await shot(page, 'history-dry-run')
      // someone else's write draws the details again: the focus stays on the confirmation
      await write(
        { action: 'update', projectId: P, nodeId: 'goal-1', data: { description: 'Set by the planner' } },
        { 'x-agent-id': 'planner' },
      )
      await page.waitForFunction(() => (globalThis as any).document.querySelector('#f-description')?.value === 'Set by the planner', null, {
        timeout: 30_000,
      })
      await focusOn(page, `${claude} .history-confirm`, 'the details drawn again by a live change')
      await page.keyboard.press('Escape')
      await focusOn(page, `${claude} .history-revert`, 'Escape put the dry run down')
      expect(await page.isVisible('#panel')).toBe(true) // the details stay open (on a phone too)
      await page.keyboard.press('Enter')
      await focusOn(page, `${claude} .history-confirm`, 'the dry run shown again')
      // the planner's write is marked for a few seconds: over before the revert, whose own mark is looked for
      await page.waitForFunction(() => !(globalThis as any).document.querySelector('#tree .chip.elsewhere'), null, { timeout: 30_000 })
      const unroute = await answerAfterTheStream(page, 'goal-1', 'Grow revenue')
      await page.keyboard.press('Enter')
      await waitText(page, '#tree [data-id="goal-1"] .label', 'Grow revenue', 'the tree shows the goal as it was')
      await waitText(page, newest, /took a change back|label: Grow revenue 20% → Grow revenue/, 'the revert is the newest change')
      // the focus on the newest change's Revert… (the revert itself, to take it back in turn)
      expect(await focusOn(page, `${newest} .history-revert`, 'the change taken back')).toMatchObject({
        name: 'Revert this change (label: Grow revenue 20% → Grow revenue)',
      })
      await unroute()
      expect(await page.$$('#tree [data-id="goal-1"] .chip.elsewhere')).toHaveLength(0) // this page's own change
      await shot(page, 'history-reverted')
      await page.close()
    }, 240_000)

    it(`an edit intent at ${size}: a field someone else is editing asks first; declined, the focus is back on the item`, async () => {
      const P = `keys-intent-${tag}`
      await addProject(env.server, P, 'Edit intents by keyboard')
      await write({ action: 'add', projectId: P, node: { type: 'goal', data: { label: 'Grow revenue' } } })
      const page = await openApp(env, P, { phone })
      await page.keyboard.press('Tab')
      await focusOn(page, '#tree [data-id="goal-1"]', 'one Tab reaches the plan')
      await page.keyboard.press(' ')
      await focusOn(page, '#f-label', 'Space opened the details')
      // an agent has the description's editor open (live.md §4): posted again before each step, as it holds 30 s
      const intent = async () =>
        expect(
          (
            await env.server.call('POST', '/api/v1/presence', {
              body: { projectId: P, nodeId: 'goal-1', field: 'description' },
              headers: { 'x-agent-id': 'planner' },
            })
          ).status,
        ).toBe(200)
      await intent()
      await waitText(page, '#panel .editing-by', 'planner (agent) is editing this field.', 'the field says who is editing it')
      expect(await attr(page, '#panel .editing-by', 'role')).toBe('status')
      await tabTo(page, '#f-description')
      await shot(page, 'intent-field')
      await intent()
      const asked: string[] = []
      page.once('dialog', (d) => {
        asked.push(d.message())
        void d.dismiss() // what Escape does in the browser's own confirm
      })
      await page.keyboard.press('a')
      await focusOn(page, '#tree [data-id="goal-1"]', 'declined: back on the item')
      expect(asked[0]).toContain('planner (an agent of owner) is editing Description of this item right now')
      expect(await page.$eval('#f-description', (e: any) => e.value)).toBe('')
      // the page holds no intent on the field it left: the agent's write of it goes through
      await env.server.until(
        async () =>
          (
            await call(
              { action: 'update', projectId: P, nodeId: 'goal-1', data: { description: 'From the planner' } },
              { 'x-agent-id': 'planner' },
            )
          ).status === 200,
        30_000,
        "the agent's write of the field",
      )
      await page.close()
    }, 240_000)

    it(`Activity at ${size}: opened and closed by keyboard`, async () => {
      const P = `keys-activity-${tag}`
      await addProject(env.server, P, 'Activity by keyboard')
      await write({ action: 'add', projectId: P, node: { type: 'goal', data: { label: 'Grow revenue' } } }, { 'x-agent-id': 'claude-code' })
      const page = await openApp(env, P, { phone })
      await page.keyboard.press('Tab')
      await focusOn(page, '#tree [data-id="goal-1"]', 'one Tab reaches the plan')
      await toMenuButton(page, phone, '#open-activity')
      await page.keyboard.press('Enter')
      expect(await focusOn(page, '#activity-close', 'Activity opened')).toMatchObject({ role: 'button', name: 'Close the activity' })
      await waitText(page, '#activity .feed', /claude-code \(owner\) added Grow revenue/, 'the activity')
      expect(await attr(page, '#open-activity', 'aria-expanded')).toBe('true')
      expect(await shown(page, '#activity .feed li')).toBe('just now claude-code (owner) added Grow revenue')
      await shot(page, 'activity-open')
      // its entries are reachable, and lead to the node
      await tabTo(page, '#activity .feed button.link')
      await page.keyboard.press('Escape')
      await focusOn(page, backTo(phone, '#open-activity'), 'Activity closed by Escape')
      expect(await page.isVisible('#activity')).toBe(false)
      expect(await attr(page, '#open-activity', 'aria-expanded')).toBe('false')
      // opened again, its × closes it too
      await toMenuButton(page, phone, '#open-activity')
      await page.keyboard.press('Enter')
      await focusOn(page, '#activity-close', 'Activity opened again')
      await page.keyboard.press('Enter')
      await focusOn(page, backTo(phone, '#open-activity'), 'Activity closed by its ×')
      await page.close()
    }, 240_000)
  }
})
