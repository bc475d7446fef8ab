import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Page } from 'playwright-core'
import { type AppEnv, addProject, haveChromium, openApp, shots, startApp } from './app.lib'
import { type ServerProcess, startServer } from './process'

/**
 * First contact and phones, in real Chromium against the real server: GET / leads a browser to
 * the app and answers JSON to a client; the start-up log names the app and the docs; a #key=
 * pasted after a failed sign-in is read without a reload and leaves the address bar; at
 * 390 × 844 nothing is cut off and the details sheet closes; a rate-limited page says so.
 */
if (!haveChromium) console.warn('app.contact.test.ts: skipped, /usr/bin/chromium is not installed')
const P = 'phone'

describe.skipIf(!haveChromium)('the planning app: first contact and phones', () => {
  let env: AppEnv
  let limited: ServerProcess | undefined

  beforeAll(async () => {
    env = await startApp()
    await addProject(env.server, P, 'A long project name that a phone must still show whole')
    await env.server.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: P,
        mutations: [
          { action: 'addIteration', iteration: { name: 'Reliable sync' } },
          {
            action: 'add',
            node: { id: 'draft-g1', type: 'goal', data: { label: 'Researchers trust their field notes', goalStatus: 'focus' } },
          },
          { action: 'add', node: { id: 'draft-n1', type: 'need', parentId: 'draft-g1', data: { label: 'Notes get lost when offline' } } },
          {
            action: 'add',
            node: {
              id: 'draft-a1',
              type: 'approach',
              parentId: 'draft-n1',
              data: { label: 'Offline-first local store', size: 'car', kano: 'must-have', approachStatus: 'development' },
            },
          },
          {
            action: 'add',
            node: {
              id: 'draft-j1',
              type: 'job',
              parentId: 'draft-a1',
              data: { label: 'A note written offline survives a restart', iteration: 'Reliable sync', maturity: 'mvp' },
            },
          },
          { action: 'add', node: { id: 'draft-j2', type: 'job', parentId: 'draft-a1', data: { label: 'Sync resumes by itself' } } },
        ],
      },
    })
  }, 90_000)

  afterAll(async () => {
    await env?.browser.close()
    await env?.server.close()
    await limited?.close()
  })

  it('sends a browser from / to the app, and tells a JSON client where things are', async () => {
    const browser = await fetch(`${env.server.url}/`, {
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
      redirect: 'manual',
    })
    expect({ status: browser.status, location: browser.headers.get('location') }).toEqual({ status: 303, location: '/app' })
    for (const accept of ['application/json', '*/*']) {
      const res = await fetch(`${env.server.url}/`, { headers: { accept } })
      expect({ status: res.status, type: res.headers.get('content-type'), body: await res.json() }).toEqual({
        status: 200,
        type: 'application/json',
        body: { name: 'Arbor', app: '/app', docs: '/docs', api: '/api/v1', guide: '/api/v1/guide', openapi: '/openapi.json' },
      })
    }
    const page = await env.browser.newPage()
    await page.goto(`${env.server.url}/`)
    expect(new URL(page.url()).pathname).toBe('/app')
    await page.close()
  })

  it('names the app (with the owner key) and the docs in the start-up log', () => {
    const out = env.server.output()
    expect(out).toMatch(/^Arbor API key for owner: arb_/m)
    expect(out).toContain(`Arbor app: ${env.server.url}/app (sign in with the owner key above)\n`)
    // the key is printed once, on its own line (self-hosting.md: never again)
    expect(out.split(env.server.ownerKey).length).toBe(2)
    expect(out).toContain(`Arbor API docs: ${env.server.url}/docs\n`)
  })

  it('reads a #key= pasted after a failed sign-in without a reload, and removes it from the address bar', async () => {
    const page = await env.browser.newPage()
    await page.goto(`${env.server.url}/app?projectId=${P}#key=arb_mistyped00000000000000000000000000`)
    await page.waitForSelector('#signin:not([hidden])')
    await page.evaluate((key) => {
      ;(globalThis as any).location.hash = `#key=${key}`
    }, env.server.ownerKey)
    await page.waitForSelector('#tree')
    expect(page.url()).toBe(`${env.server.url}/app?projectId=${P}`)
    expect(await page.textContent('#project-name')).toBe('A long project name that a phone must still show whole')
    await page.close()
  })

  it('fits a phone: nothing cut off, every control on screen, the details a sheet that closes', async () => {
    const page: Page = await openApp(env, P, { phone: true })
    await page.click('#mode-tree')
    const overflow = () =>
      page.evaluate(() => {
        const d = (globalThis as any).document
        const out: string[] = []
        if (d.documentElement.scrollWidth > 390) out.push(`page ${d.documentElement.scrollWidth}px wide`)
        for (const x of d.querySelectorAll('header *, .toolbar *, .row > *, .card, #panel:not([hidden]) *')) {
          const r = x.getBoundingClientRect()
          if (r.width && (r.left < 0 || r.right > 390.5)) out.push(`${x.tagName}#${x.id}.${x.className} ${r.left}–${r.right}`)
        }
        return out
      })
    expect(await page.$eval('header', (h: any) => h.getBoundingClientRect().width)).toBeLessThanOrEqual(390)
    // the menu folds behind one button on a phone (issue 55): opened, every choice is on screen
    expect(await page.isVisible('#sign-out')).toBe(false)
    await page.click('#open-menu')
    expect(await page.getAttribute('#open-menu', 'aria-expanded')).toBe('true')
    expect(await overflow()).toEqual([])
    for (const id of [
      '#search',
      '#iteration',
      '#live',
      '#sign-out',
      '#open-settings',
      '#open-activity',
      '#open-iterations',
      '#open-help',
      '#add-goal',
      '#add-task',
    ])
      expect({ id, visible: await page.isVisible(id) }).toEqual({ id, visible: true })
    await page.click('#open-menu') // closed again
    expect(await page.isVisible('#sign-out')).toBe(false)
    // the whole tree open: every row and chip within the screen
    await page.focus('#tree [role=treeitem]')
    await page.keyboard.press('*')
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('*')
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('*')
    await page.waitForSelector('.node.job')
    expect(await overflow()).toEqual([])
    expect(await page.isVisible('#panel')).toBe(false) // the sheet shows only when asked
    await page.tap('.node.job .row')
    await page.waitForSelector('#panel #f-label')
    const sheet = await page.$eval('#panel', (p: any) => p.getBoundingClientRect().height)
    expect(sheet).toBeLessThanOrEqual(844 * 0.75)
    expect(await overflow()).toEqual([])
    await page.screenshot({ path: `${import.meta.dir}/../test-output/app/phone-details-390.png` })
    await page.tap('#panel-close')
    expect(await page.isVisible('#panel')).toBe(false)
    // the matrix: one iteration under another, cards whole
    await page.tap('#mode-matrix')
    await page.waitForSelector('.card')
    expect(await overflow()).toEqual([])
    await shots(page, 'phone-matrix')
    await page.tap('#mode-tree')
    await shots(page, 'phone-tree')
    await page.close()
  }, 60_000)

  it('says so when the server limits the rate, and tries again by itself', async () => {
    // a second server, started after the first: two embedded databases opening at once are slow on a busy machine
    limited = await startServer({ RATE_LIMIT_PER_MINUTE: '4' })
    await addProject(limited, P)
    const page = await env.browser.newPage()
    await page.goto(`${limited.url}/app?projectId=${P}#key=${limited.ownerKey}`)
    await page.waitForFunction(
      () => /Rate limited/.test((globalThis as any).document.querySelector('#live-text')?.textContent ?? ''),
      undefined,
      { timeout: 20_000 },
    )
    expect(await page.getAttribute('#live', 'data-state')).toBe('retry')
    await page.screenshot({ path: `${import.meta.dir}/../test-output/app/rate-limited-1280.png` })
    await page.close()
  }, 120_000)
})
