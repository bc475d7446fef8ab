import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { type Browser, chromium, type Page } from 'playwright-core'
import { CHROMIUM as BROWSER } from '../bench/lib/spawn'
import { type ServerProcess, startServer } from './process'

/**
 * What the app's browser tests share: a real server process, real Chromium (skipped, and said
 * so, when /usr/bin/chromium is missing), a page signed in to a project, and screenshots of
 * each journey at 1280 × 800 and at 390 × 844 in test-output/app/.
 */
export const CHROMIUM = '/usr/bin/chromium'
export const haveChromium = existsSync(CHROMIUM)
export const OUT = join(import.meta.dir, '..', 'test-output', 'app')

export interface AppEnv {
  server: ServerProcess
  browser: Browser
}

export async function startApp(env: Record<string, string> = {}): Promise<AppEnv> {
  mkdirSync(OUT, { recursive: true })
  const server = await startServer(env)
  const browser = await chromium.launch({ ...BROWSER, executablePath: CHROMIUM })
  return { server, browser }
}

export async function addProject(server: ServerProcess, id: string, name = id, key?: string) {
  const res = await server.call('POST', '/api/v1/mutate', { key, body: { action: 'addProject', project: { name, id } } })
  if (res.status !== 200) throw new Error(`addProject ${id}: ${res.status} ${JSON.stringify(res.body)}`)
}

/** A page on the project, signed in by the #key= link, ready when the tree (or its empty state) is shown. */
export async function openApp(env: AppEnv, projectId: string, opts: { phone?: boolean; key?: string } = {}): Promise<Page> {
  const page = await env.browser.newPage({
    viewport: opts.phone ? { width: 390, height: 844 } : { width: 1280, height: 800 },
    hasTouch: !!opts.phone,
  })
  page.on('pageerror', (err) => console.error(`page error: ${err.message}`))
  await page.goto(`${env.server.url}/app?projectId=${projectId}#key=${opts.key ?? env.server.ownerKey}`)
  await page.waitForSelector('#tree, .empty-state', { timeout: 60_000 }) // a loaded CI machine can take long over the first page
  return page
}

/** The journey's screenshot at 1280 × 800 and at 390 × 844 (then back to the page's size). */
export async function shots(page: Page, name: string): Promise<string[]> {
  const size = page.viewportSize() ?? { width: 1280, height: 800 }
  const paths = [join(OUT, `${name}-1280.png`), join(OUT, `${name}-390.png`)]
  await page.setViewportSize({ width: 1280, height: 800 })
  await page.screenshot({ path: paths[0] })
  await page.setViewportSize({ width: 390, height: 844 })
  await page.screenshot({ path: paths[1] })
  await page.setViewportSize(size)
  return paths
}

/** The id of the element that has the keyboard focus, and its role. */
export const focused = (page: Page) =>
  page.evaluate(() => {
    const a = (globalThis as any).document.activeElement
    return { id: a?.dataset.id ?? a?.id ?? null, role: a?.getAttribute('role') ?? a?.tagName.toLowerCase() ?? null }
  })

/** Every node of the project, by label. */
export async function nodesByLabel(server: ServerProcess, projectId: string): Promise<Map<string, any>> {
  const res = await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)
  return new Map(res.body.nodes.map((n: any) => [n.data.label, n]))
}
