import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { type AppEnv, addProject, focused, haveChromium, nodesByLabel, OUT, shots, startApp } from './app.lib'
import { ADMIN_TOKEN } from './helpers'

/**
 * A new user's first contact with the app (issue 47), in real Chromium against the real server:
 * a fresh server's /app creates a project (name, suggested id, the plan's limit in words) and
 * switches between projects; an unknown project says so without add buttons; one Tab reaches
 * the tree; Backspace deletes, focus lands on a neighbour and Ctrl+Z works wherever the focus is;
 * the `?` list names every key; bets say once that the API calls them approaches; a matrix cell
 * of 300 jobs folds and its goal stays in sight.
 */
if (!haveChromium) console.warn('app.first.test.ts: skipped, /usr/bin/chromium is not installed')

describe.skipIf(!haveChromium)('the planning app: first contact', () => {
  let env: AppEnv
  let page: Page
  const apiCalls: string[] = []

  beforeAll(async () => {
    env = await startApp()
    page = await env.browser.newPage({ viewport: { width: 1280, height: 800 } })
    page.on('pageerror', (err) => console.error(`page error: ${err.message}`))
    // every API call of the app says where it comes from (history.md, 1: X-Arbor-Via)
    page.on('request', (req) => {
      if (new URL(req.url()).pathname.startsWith('/api/')) apiCalls.push(req.headers()['x-arbor-via'] ?? '(none)')
    })
  }, 90_000)

  afterAll(async () => {
    await env?.browser.close()
    await env?.server.close()
  })

  const open = async (projectId: string, key = env.server.ownerKey) => {
    await page.goto(`${env.server.url}/app?projectId=${projectId}#key=${key}`)
    await page.waitForSelector('#tree, .empty-state')
  }
  const mutate = async (body: unknown) => {
    const res = await env.server.call('POST', '/api/v1/mutate', { body })
    if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`)
    return res.body
  }

  it('creates the first project from a fresh server’s /app, with an id suggested from its name and the plan’s limit in words', async () => {
    await page.goto(`${env.server.url}/app#key=${env.server.ownerKey}`)
    await page.waitForSelector('#signin-new-project')
    expect(await page.textContent('#signin-message')).toBe('You have no project yet: create the first one.')
    expect(await focused(page)).toEqual({ id: 'signin-new-project', role: 'button' })
    await page.keyboard.press('Enter')
    await page.waitForSelector('#dialog[open] #np-name:focus')
    await page.keyboard.type('Field Notes, 2027!')
    expect(await page.inputValue('#np-id')).toBe('field-notes-2027')
    await page.locator('#np-limit', { hasText: 'No limit' }).waitFor()
    // a self-hosted server's owner has no limit, and no plan to name (issue 55)
    expect(await page.textContent('#np-limit')).toBe('No limit on projects here; you own 0.')
    await shots(page, 'first-new-project')
    await page.keyboard.press('Enter')
    await page.waitForURL(/\/app\?projectId=field-notes-2027$/)
    await page.waitForSelector('.empty-state #empty-add-goal')
    const { body } = await env.server.call('GET', '/api/v1/projects')
    expect(body.projects.map((p: { id: string; name: string }) => [p.id, p.name])).toEqual([['field-notes-2027', 'Field Notes, 2027!']])
    expect(await page.textContent('#project-name')).toBe('Field Notes, 2027!')
    expect(apiCalls.length).toBeGreaterThan(3)
    expect(new Set(apiCalls)).toEqual(new Set(['app']))
  }, 60_000)

  it('names the free plan’s limit in words, and shows a refusal in the dialog', async () => {
    const free = await env.server.call('POST', '/admin/v1/users', { key: ADMIN_TOKEN, body: { name: 'fay', tier: 'free' } })
    await page.goto(`${env.server.url}/app#key=${free.body.apiKey}`)
    await page.click('#signin-new-project')
    await page.locator('#np-limit', { hasText: 'The free plan' }).waitFor()
    expect(await page.textContent('#np-limit')).toMatch(/^The free plan allows 3 projects of up to 250 items each; you own 0\.$/)
    await page.fill('#np-name', 'Taken')
    await page.fill('#np-id', 'field-notes-2027') // another user's id
    await page.click('#np-create')
    await page.locator('#np-error:not(:empty)').waitFor()
    expect(await page.textContent('#np-error')).toContain('field-notes-2027')
    await page.keyboard.press('Escape')
  }, 60_000)

  it('switches projects from the header, and an unknown project says so without add buttons', async () => {
    await addProject(env.server, 'second', 'Second plan')
    await open('field-notes-2027')
    await page.click('#open-projects')
    await page.waitForSelector('#dialog[open] .projects a')
    expect(await page.$$eval('#dialog .projects a', (as) => as.map((a) => [a.textContent, a.getAttribute('aria-current')]))).toEqual([
      ['Field Notes, 2027!', 'page'],
      ['Second plan', null],
    ])
    await shots(page, 'first-switcher')
    await page.click('#dialog .projects a >> text=Second plan')
    await page.waitForURL(/projectId=second$/)
    await page.waitForSelector('.empty-state')

    await open('no-such-plan')
    await page.waitForSelector('#no-project')
    expect(await page.textContent('#no-project h2')).toBe('No project “no-such-plan” here')
    expect([await page.isVisible('#add-goal'), await page.isVisible('#add-task')]).toEqual([false, false])
    expect(await focused(page)).toEqual({ id: 'empty-projects', role: 'button' })
    await shots(page, 'first-no-project')
  }, 60_000)

  it('reaches the tree with one Tab; Backspace deletes and the focus goes to a neighbour; Ctrl+Z works with the focus anywhere', async () => {
    await addProject(env.server, 'keys', 'Keys')
    await mutate({
      action: 'batch',
      projectId: 'keys',
      mutations: [
        { action: 'add', node: { id: 'draft-g1', type: 'goal', data: { label: 'First goal' } } },
        { action: 'add', node: { id: 'draft-n1', type: 'need', parentId: 'draft-g1', data: { label: 'A need' } } },
        { action: 'add', node: { id: 'draft-a1', type: 'approach', parentId: 'draft-n1', data: { label: 'A bet' } } },
        { action: 'add', node: { id: 'draft-g2', type: 'goal', data: { label: 'Last goal' } } },
      ],
    })
    await open('keys')
    await page.keyboard.press('Tab')
    const first = (await nodesByLabel(env.server, 'keys')).get('First goal')
    expect(await focused(page)).toEqual({ id: first.id, role: 'treeitem' })
    // the last row: Backspace, as on a Mac
    await page.keyboard.press('End')
    const last = (await nodesByLabel(env.server, 'keys')).get('Last goal')
    expect((await focused(page)).id).toBe(last.id)
    await page.keyboard.press('Backspace')
    await env.server.until(async () => !(await nodesByLabel(env.server, 'keys')).has('Last goal'), 10_000, 'the goal deleted')
    await page.locator('#status', { hasText: 'Deleted' }).waitFor() // a locator: the page's CSP forbids a string's eval
    expect(await focused(page)).toEqual({ id: first.id, role: 'treeitem' })
    // the focus elsewhere (a header button), Ctrl+Z still undoes
    await page.focus('#mode-tree')
    await page.keyboard.press('Control+z')
    await env.server.until(async () => (await nodesByLabel(env.server, 'keys')).get('Last goal')?.id === last.id, 10_000, 'restored')
    await page.waitForSelector(`[role=treeitem][data-id="${last.id}"]`)
    // the only row of a project: the focus goes to the empty tree's button, and ⌘Z brings it back
    await addProject(env.server, 'lone', 'Lone')
    await mutate({ action: 'add', projectId: 'lone', node: { type: 'goal', data: { label: 'Only goal' } } })
    await open('lone')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Delete')
    await page.waitForSelector('#empty-add-goal:focus')
    await page.keyboard.press('Meta+z')
    await page.waitForSelector('#tree [role=treeitem]:focus')
    expect((await nodesByLabel(env.server, 'lone')).has('Only goal')).toBe(true)
  }, 60_000)

  it('lists every key under ?, keeps a key pressed as it closes, and says once that a bet is the API’s approach', async () => {
    await open('keys') // the page remembers the last selection (Last goal): one Tab still lands on it
    await page.keyboard.press('Tab')
    expect((await focused(page)).role).toBe('treeitem')
    await page.keyboard.press('?')
    await page.waitForSelector('#dialog[open] .keys')
    const keys = await page.$$eval('#dialog .keys kbd', (ks) => ks.map((k) => k.textContent))
    for (const k of ['*', 'Delete or Backspace', 'Ctrl+Z / ⌘Z', 'Home / End', 'Shift+A', 'x', '/', '?', 'Escape', 'Tab'])
      expect(keys).toContain(k)
    await page.keyboard.press('Escape')
    const byLabel = await nodesByLabel(env.server, 'keys')
    const [first, last] = [byLabel.get('First goal').id, byLabel.get('Last goal').id]
    expect(await focused(page)).toEqual({ id: last, role: 'treeitem' }) // back where it was
    // a quick hand: Escape and at once Home or End (both keys sent before either is answered). The
    // browser gives the focus back as the dialog closes and fires its close event a frame later;
    // the key's move must stay. The app's close handler used to undo it: in 16 of 20 rounds so,
    // in 3 of 20 with a round trip between the keys under load (CI's "the first goal focused not
    // reached"). Ends on the first goal as a person goes there (Home selects it; focusing the row
    // alone would not).
    for (const [key, to] of [
      ['Home', first],
      ['End', last],
      ['Home', first],
      ['End', last],
      ['Home', first],
    ] as const) {
      await page.keyboard.press('?')
      await page.waitForSelector('#dialog[open] .keys')
      await Promise.all([page.keyboard.press('Escape'), page.keyboard.press(key)])
      await env.server.until(async () => (await focused(page)).id === to, 10_000, `${key} after Escape: its row focused`)
      // still there once the dialog's close event has come (two frames later)
      await page.evaluate(
        () => new Promise((r) => (globalThis as any).requestAnimationFrame(() => (globalThis as any).requestAnimationFrame(r))),
      )
      expect({ key, focused: (await focused(page)).id }).toEqual({ key, focused: to })
    }
    await page.keyboard.press('*') // expands the goal and everything beneath it
    expect(await page.getAttribute('#tree .type.approach', 'title')).toBe('Bet: the API calls it an approach (type approach)')
    await open('second')
    expect(await page.textContent('.empty-state p')).toContain('a bet is what the API calls an approach')
  }, 60_000)

  it('folds a matrix cell of 300 jobs (“+ 280 more”, opened by keyboard) and keeps its goal in sight', async () => {
    await addProject(env.server, 'big', 'Big')
    await mutate({
      action: 'batch',
      projectId: 'big',
      mutations: [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Researchers trust their notes' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Notes get lost' } } },
        { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Local store' } } },
        ...Array.from({ length: 300 }, (_, i) => ({
          action: 'add',
          node: { type: 'job', parentId: 'draft-a', data: { label: `Job ${String(i + 1).padStart(3, '0')}` } },
        })),
      ],
    })
    await open('big')
    await page.click('#mode-matrix')
    await page.waitForSelector('.matrix .fold')
    expect(await page.$$eval('.matrix td[data-label="Later"] .card', (cs) => cs.length)).toBe(20)
    expect(await page.textContent('.matrix .fold')).toBe('+ 280 more')
    await shots(page, 'first-matrix-folded')
    // by keyboard: the first card, Tab to the fold, Enter
    await page.focus('.matrix .card[tabindex="0"]')
    await page.keyboard.press('Tab')
    expect(await page.locator('.matrix .fold:focus').count()).toBe(1)
    await page.keyboard.press('Enter')
    await page.waitForSelector('.matrix td[data-label="Later"] .card:nth-of-type(300)')
    expect(await page.locator('.matrix td[data-label="Later"] .card').count()).toBe(300)
    expect(await page.locator('.matrix .card:focus .label').textContent()).toBe('Job 021')
    // scrolled to the end of the tall row, its goal's label is still on screen
    for (const size of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      await page.setViewportSize(size)
      const lastCard = page.locator('.matrix td[data-label="Later"] .card').last()
      await lastCard.focus()
      await lastCard.scrollIntoViewIfNeeded()
      if (size.width < 760) {
        await page.keyboard.press('Escape') // on a phone the details are a sheet over the matrix: close it
        await page.waitForSelector('#panel', { state: 'hidden' })
        await lastCard.scrollIntoViewIfNeeded()
      }
      const [label, box, canvas] = await Promise.all(
        ['.matrix th.row-head[data-id] .label', '.matrix-scroll', '#canvas'].map((sel) => page.locator(sel).first().boundingBox()),
      )
      const top = Math.max(box!.y, canvas!.y)
      const bottom = Math.min(box!.y + box!.height, canvas!.y + canvas!.height)
      const inSight = label!.height > 0 && label!.y >= top - 1 && label!.y + label!.height <= bottom + 1
      expect({ size, inSight }).toEqual({ size, inSight: true })
      await page.screenshot({ path: join(OUT, `first-matrix-${size.width}.png`) })
    }
    await page.setViewportSize({ width: 1280, height: 800 })
  }, 90_000)
})
