import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Page } from 'playwright-core'
import { ROLE_MAY, ROLES } from '../src/accounts/scope'
import { type AppEnv, addProject, haveChromium, openApp, shots, startApp } from './app.lib'

/**
 * live.md §6 in the app: Settings → API keys mints a scoped key, by keyboard alone, and says what
 * each role may in the server's own words; a scoped key's page says why it cannot manage keys.
 * Screenshots: test-output/app/keys-scoped-{1280,390}.png and keys-scope-refused-{1280,390}.png.
 */
describe.skipIf(!haveChromium)('the planning app: scoped keys', () => {
  let env: AppEnv
  let page: Page
  const activeInfo = () =>
    page.evaluate(() => {
      const a = (globalThis as any).document.activeElement
      return { id: a?.id ?? '', type: a?.type ?? '', value: a?.value ?? '', checked: !!a?.checked }
    })

  beforeAll(async () => {
    env = await startApp()
    await addProject(env.server, 'alpha', 'Alpha')
    await addProject(env.server, 'beta', 'Beta')
    page = await openApp(env, 'alpha')
  }, 90_000)
  afterAll(async () => {
    await env?.browser.close()
    await env?.server.close()
  })

  it('mints a work key for one project by keyboard, and says what each role may', async () => {
    await page.focus('#open-settings')
    await page.keyboard.press('Enter')
    await page.waitForSelector('.keys-table')
    await page.waitForSelector('.key-projects')
    // the words of each role are the server's (src/accounts/scope.ts)
    const said = await page.$$eval('.key-role', (rows) =>
      rows.map((r) => [r.querySelector('strong')!.textContent, r.querySelector('.may')!.textContent]),
    )
    expect(said).toEqual(ROLES.map((r) => [r, ROLE_MAY[r]]))
    // each radio is described by its words, for a screen reader
    expect(await page.getAttribute('#key-role-read', 'aria-describedby')).toBe('key-role-read-may')

    await page.focus('#key-label')
    await page.keyboard.type('ci agent')
    await page.keyboard.press('Tab')
    expect(await activeInfo()).toMatchObject({ id: 'key-role-write', checked: true })
    await page.keyboard.press('ArrowUp') // write → work
    expect(await activeInfo()).toMatchObject({ id: 'key-role-work', checked: true })
    await page.keyboard.press('Tab')
    expect(await activeInfo()).toMatchObject({ type: 'checkbox', value: 'alpha' })
    await page.keyboard.press('Space')
    expect(await activeInfo()).toMatchObject({ value: 'alpha', checked: true })
    await page.keyboard.press('Tab') // beta, left unticked
    await page.keyboard.press('Tab')
    expect(await activeInfo()).toMatchObject({ id: 'key-create' })
    await page.keyboard.press('Enter')
    const shown = await page.waitForSelector('#key-created')
    const apiKey = (await shown.inputValue()) as string
    expect(apiKey).toMatch(/^arb_/)

    const listed = (await env.server.call('GET', '/api/v1/keys')).body.keys
    const made = listed.find((k: any) => k.label === 'ci agent')
    expect(made.scope).toEqual({ role: 'work', projects: ['alpha'] })
    const row = await page.waitForSelector(`tr[data-key="${made.keyId}"] .key-scope`)
    expect(await row.textContent()).toBe('work · alpha')
    // the form is back to a write key for every project
    expect(await page.isChecked('#key-role-write')).toBe(true)
    await page.focus(`tr[data-key="${made.keyId}"] .key-scope`).catch(() => {})
    await page.evaluate(() => (globalThis as any).document.querySelector('.keys-table').scrollIntoView())
    await shots(page, 'keys-scoped')
    await page.keyboard.press('Escape')

    // the key works on alpha only
    expect((await env.server.call('GET', '/api/v1/nodes?projectId=alpha', { key: apiKey })).status).toBe(200)
    expect((await env.server.call('GET', '/api/v1/nodes?projectId=beta', { key: apiKey })).body.error).toBe('key_scope')
  })

  it('a page signed in with a read key says why it cannot manage keys', async () => {
    const minted = await env.server.call('POST', '/api/v1/keys', { body: { label: 'reader', scope: { role: 'read' } } })
    const reader = await openApp(env, 'alpha', { key: minted.body.apiKey })
    await reader.focus('#open-settings')
    await reader.keyboard.press('Enter')
    const alert = await reader.waitForSelector('#dialog [role="alert"]')
    expect(await alert.textContent()).toContain('may not list, create or revoke keys')
    // the server's words: the role and what it may
    expect(await reader.textContent('#dialog')).toContain('This key has role read, which allows every read (GET)')
    expect(await reader.$('#key-create')).toBeNull()
    await shots(reader, 'keys-scope-refused')
    await reader.close()
  })
})
