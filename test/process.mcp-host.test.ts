import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { type Browser, chromium, type Frame, type Page } from 'playwright-core'
import { CHROMIUM as BROWSER } from '../bench/lib/spawn'
import { forwardWithKey } from '../scripts/mcp-key-proxy'
import { CHROMIUM, haveChromium } from './app.lib'
import { type ServerProcess, startServer } from './process'

// The plan view in a real host: Chromium runs a small chat host built on ext-apps' AppBridge
// (test/mcp-host/host.ts), against the real server's /mcp through a loopback proxy that adds
// the key. The tool opens the view, the view renders the tree, a keyboard edit reaches GET
// /nodes, an agent's set_view moves the view, and a client without the extension gets the text.
/** the screenshots: beside the team's notes where there are some, else in test-output/ */
const SHOTS = existsSync('/work/notes') ? '/work/notes/shots' : join(import.meta.dir, '..', 'test-output', 'mcp')
const projectId = 'chat-plan'
let server: ServerProcess
let browser: Browser
let host: ReturnType<typeof Bun.serve>
const ids: Record<string, string> = {}

const HOST_PAGE = (js: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Test chat host</title>
<style>body{margin:0;font:15px system-ui;background:#eef0f4}main{max-width:784px;margin:0 auto;padding:12px}
#transcript{white-space:pre-wrap;background:#fff;border-radius:10px;padding:10px;margin-bottom:10px}
iframe{display:block;width:100%;height:420px;border:1px solid #ccd;border-radius:10px;background:transparent}
body.fullscreen main{max-width:none}body.fullscreen iframe{height:90vh}</style></head>
<body><main><div id="transcript">…</div><div id="chat"></div></main><script type="module">${js}</script></body></html>`

describe.skipIf(!haveChromium)('the plan view in a chat host (Chromium, ext-apps AppBridge)', () => {
  beforeAll(async () => {
    server = await startServer()
    const made = await server.call('POST', '/api/v1/mutate', {
      body: { action: 'addProject', project: { name: 'Chat plan', id: projectId } },
    })
    expect(made.status).toBe(200)
    const batch = await server.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId,
        mutations: [
          { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Launch the beta' } } },
          { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'People can sign up' } } },
          { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Email magic links' } } },
          { action: 'add', node: { id: 'draft-j', type: 'job', parentId: 'draft-a', data: { label: 'Send the link email' } } },
          { action: 'add', node: { id: 'draft-t', type: 'task', data: { label: 'Renew the domain' } } },
        ],
      },
    })
    expect(batch.status).toBe(200)
    for (const n of (await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes) ids[n.type] = n.id
    const built = await Bun.build({ entrypoints: [join(import.meta.dir, 'mcp-host', 'host.ts')], target: 'browser', format: 'esm' })
    if (!built.success) throw new AggregateError(built.logs, 'the host page did not build')
    const page = HOST_PAGE((await built.outputs[0]!.text()).replace(/<\/script/gi, '<\\/script'))
    host = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      idleTimeout: 60,
      fetch: (req) =>
        new URL(req.url).pathname === '/mcp'
          ? forwardWithKey(req, `${server.url}/mcp`, server.ownerKey)
          : new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } }),
    })
    browser = await chromium.launch({ ...BROWSER, executablePath: CHROMIUM })
    mkdirSync(SHOTS, { recursive: true })
  }, 90_000)
  afterAll(async () => {
    await browser?.close()
    host?.stop(true)
    await server?.close()
  })

  const seen = (page: Page) => page.evaluate(() => (globalThis as unknown as { host: Record<string, any> }).host)
  async function open(theme: 'light' | 'dark', viewport = { width: 1280, height: 800 }): Promise<{ page: Page; view: Frame }> {
    const page = await browser.newPage({ viewport })
    page.on('pageerror', (err) => console.error(`host page error: ${err.message} ${err.stack}`))
    await page.goto(`http://127.0.0.1:${host.port}/?projectId=${projectId}&theme=${theme}`)
    const handle = await page.waitForSelector('iframe', { timeout: 20_000 })
    const view = (await handle.contentFrame())!
    await view.waitForSelector('[role=treeitem]', { timeout: 20_000 })
    return { page, view }
  }
  const labels = (view: Frame) => view.$$eval('[role=treeitem] .label', (els) => els.map((e) => e.textContent))
  const selected = (view: Frame) => view.$eval('[aria-selected=true]', (e) => e.getAttribute('data-id')).catch(() => null)
  async function until<T>(fn: () => Promise<T>, what: string, ms = 10_000): Promise<T> {
    const end = Date.now() + ms
    let last: T
    for (;;) {
      last = await fn()
      if (last) return last
      if (Date.now() > end) throw new Error(`${what}: still ${JSON.stringify(last)} after ${ms} ms`)
      await Bun.sleep(50)
    }
  }

  it('opens the view from open_plan, renders the tree in the host’s theme and reports its size', async () => {
    const { page, view } = await open('dark')
    expect(await labels(view)).toEqual(['Launch the beta', 'People can sign up', 'Renew the domain'])
    const state = await seen(page)
    expect(state.text).toContain('Launch the beta')
    expect(state.ready).toBe(true)
    // the host's theme variables, not the view's defaults
    type Styles = { getComputedStyle(e: unknown): { backgroundColor: string; fontFamily: string } }
    const body = await view.$eval('body', (b) => {
      const style = (globalThis as unknown as Styles).getComputedStyle(b)
      return [style.backgroundColor, style.fontFamily]
    })
    expect(body).toEqual(['rgb(24, 26, 33)', 'Georgia, serif'])
    await until(async () => (await seen(page)).sizes.length > 0, 'a size-changed notification')
    await page.screenshot({ path: join(SHOTS, 'mcp-view-1280.png') })
    await page.close()
  }, 60_000)

  it('a keyboard edit in the view reaches GET /nodes, selection reaches the model, and the view hands a job to the agent', async () => {
    const { page, view } = await open('light')
    await view.click(`[data-id="${ids.goal}"]`)
    await view.press(`[data-id="${ids.goal}"]`, 'ArrowDown')
    expect(await selected(view)).toBe(ids.need)
    await view.press(`[data-id="${ids.need}"]`, 'Enter')
    const input = await view.waitForSelector('[role=treeitem] input')
    await input.fill('Anyone can sign up')
    await input.press('Enter')
    await until(
      async () =>
        (await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes.find((n: any) => n.id === ids.need)?.data.label ===
        'Anyone can sign up',
      'the rename in GET /nodes',
    )
    // x on a job marks it done, as in /app
    await view.press(`[data-id="${ids.need}"]`, 'ArrowRight')
    await view.press(`[data-id="${ids.need}"]`, 'ArrowDown')
    await view.press(`[data-id="${ids.approach}"]`, 'ArrowRight')
    await view.press(`[data-id="${ids.approach}"]`, 'ArrowDown')
    expect(await selected(view)).toBe(ids.job)
    await view.press(`[data-id="${ids.job}"]`, 'x')
    await until(
      async () =>
        (await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes.find((n: any) => n.id === ids.job)?.data.status ===
        'done',
      'the job done in GET /nodes',
    )
    const context = (await seen(page)).modelContext.at(-1)
    expect(context.content[0].text).toContain(`job ${ids.job}`)
    expect(context.structuredContent.selectedNode).toEqual({ id: ids.job, type: 'job', label: 'Send the link email' })
    await view.click('#ask')
    await until(async () => (await seen(page)).messages.length === 1, 'the ui/message')
    expect((await seen(page)).messages[0].content[0].text).toContain(`job ${ids.job}`)
    await page.screenshot({ path: join(SHOTS, 'mcp-edit-1280.png') })
    await page.close()
  }, 60_000)

  it('keeps the keyboard on the selected item when a change made elsewhere redraws the tree', async () => {
    const { page, view } = await open('light')
    await view.click(`[data-id="${ids.goal}"]`)
    const added = await server.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId, node: { type: 'task', data: { label: 'Written elsewhere' } } },
    })
    expect(added.status).toBe(200)
    await until(async () => (await labels(view)).includes('Written elsewhere'), 'the other write in the view')
    // the key goes where the focus is, as a person's does (not to an element focused for it first):
    // a redraw that dropped the focus (to the body) would lose it
    await page.keyboard.press('ArrowDown')
    await until(async () => (await selected(view)) === ids.need, 'the selection moved by the key')
    const removed = await server.call('POST', '/api/v1/mutate', { body: { action: 'delete', projectId, nodeId: added.body.node.id } })
    expect(removed.status).toBe(200)
    await page.close()
  }, 60_000)

  it('follows the agent: set_view view:"chat" moves the view, and read_view reads it back; delete and undo on a phone', async () => {
    const { page, view } = await open('light', { width: 390, height: 844 })
    const sent = await server.call('POST', '/api/v1/view-command', {
      body: { projectId, view: 'chat', command: { type: 'selectNode', nodeId: ids.task, autoSwitch: false } },
    })
    expect(sent.body.success).toBe(true)
    await until(async () => (await selected(view)) === ids.task, 'the view selecting the task')
    const state = await server.until(async () => {
      const s = (await server.call('GET', `/api/v1/view-state?projectId=${projectId}&view=chat`)).body
      return s.last_applied_command?.id === sent.body.commandId ? s : null
    })
    expect([state.selected_node, state.clients_connected]).toEqual([ids.task, true])
    // the /app canvas was not moved
    expect((await server.call('GET', `/api/v1/view-state?projectId=${projectId}`)).body.selected_node).toBeNull()
    await page.screenshot({ path: join(SHOTS, 'mcp-view-390.png'), fullPage: true })
    // Delete takes the task out of GET /nodes, Ctrl+Z brings it back from the changelog
    const exists = async () =>
      (await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes.some((n: any) => n.id === ids.task)
    await view.press(`[data-id="${ids.task}"]`, 'Delete')
    await until(async () => !(await exists()), 'the task gone from GET /nodes')
    await view.press('[role=tree]', 'Control+z')
    await until(exists, 'the task back in GET /nodes')
    await until(async () => (await labels(view)).includes('Renew the domain'), 'the task back in the view')
    // someone else's write (an agent's, over REST) shows in the open view without a reload
    const added = await server.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId, node: { type: 'task', data: { label: 'Added by an agent' } } },
    })
    expect(added.status).toBe(200)
    await until(async () => (await labels(view)).includes('Added by an agent'), 'the agent’s task in the view')
    // the view asks for full screen; the host grants it
    await view.click('#full')
    await until(async () => (await seen(page)).displayModes.includes('fullscreen'), 'the display mode request')
    await page.close()
  }, 60_000)

  it('a client without the extension gets the plan as text', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    await page.goto(`http://127.0.0.1:${host.port}/?projectId=${projectId}&noui=1`)
    await page.waitForFunction(() => (globalThis as unknown as { host: { text: string } }).host.text !== '')
    expect(await page.$('iframe')).toBeNull()
    expect((await seen(page)).text).toContain('Anyone can sign up')
    await page.close()
    // and a plain MCP client (no io.modelcontextprotocol/ui capability) reads the same text
    const client = new Client({ name: 'plain', version: '1' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${server.ownerKey}` } },
      }),
    )
    const res = await client.callTool({ name: 'open_plan', arguments: { projectId } })
    await client.close()
    const text = (res.content as { type: string; text: string }[])[0]!.text
    expect(text.split('\n').slice(0, 2).join('\n')).toContain('Launch the beta')
    expect(text).toContain(`${ids.job}`)
  }, 30_000)
})
