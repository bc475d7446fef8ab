import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Page, Request, Route } from 'playwright-core'
import { type AppEnv, addProject, haveChromium, openApp, shots, startApp } from './app.lib'

/**
 * live.md, 1 in the app, in real Chromium against the real server: a person and an agent edit
 * one job at the same moment. The page sends ifRev with its edits; when the agent changed the
 * same field first, the person's save is refused (409 stale_write) and the page says who changed
 * what and when, with both values, keeps what the person typed, and lets them keep theirs or take
 * the agent's. The agent's change of another field does not stand in the way.
 */
if (!haveChromium) console.warn('app.revisions.test.ts: skipped, /usr/bin/chromium is not installed')
const P = 'revs'
const AGENT = { 'x-agent-id': 'planner-bot', 'x-arbor-via': 'mcp' }

describe.skipIf(!haveChromium)('the planning app: a person and an agent on one job', () => {
  let env: AppEnv
  let page: Page
  let job = ''
  /** GET /nodes answers held back while set: the page has not heard of the agent's write yet */
  const held: Route[] = []
  let holding = false
  const node = async () => (await env.server.call('GET', `/api/v1/nodes?projectId=${P}&type=job`)).body.nodes[0]
  // force: the page's open editor posts an edit intent on its field (live.md, 4), which would
  // refuse the agent's write (being_edited); here the agent overrules it, so the person's save
  // meets a newer revision than the one it was typed on (live.md, 1)
  const agent = (data: Record<string, unknown>) =>
    env.server.call('POST', '/api/v1/mutate', {
      headers: AGENT,
      body: { action: 'update', projectId: P, nodeId: job, data, force: true },
    })
  /** the page's reads of the plan on their way (held ones included) */
  const reading = new Set<Request>()
  const PLAN_READ = /\/api\/v1\/(nodes|iterations|proposals)\?/
  /**
   * Let the held reads through, then wait until the page has its answers and has drawn them. A
   * reload that lands in the next test redraws the open field, and its blur saves what the person
   * typed before the agent's write: the save that test presses for then has nothing left to send.
   */
  const release = async () => {
    holding = false
    for (const r of held.splice(0)) await r.continue().catch(() => {})
    // two frames of the page: what its reloads' answers redraw is drawn (run in the page, where the frame function is)
    const drawn = () =>
      page.evaluate(
        () => new Promise((done) => (globalThis as any).requestAnimationFrame(() => (globalThis as any).requestAnimationFrame(done))),
      )
    await env.server.until(
      async () => {
        if (reading.size) return false
        await drawn()
        return reading.size === 0 // no reload started by what was drawn
      },
      15_000,
      'the page’s reloads answered and drawn',
    )
  }

  beforeAll(async () => {
    env = await startApp()
    await addProject(env.server, P, 'Exports')
    const res = await env.server.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: P,
        mutations: [
          { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Customers own their data' } } },
          { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Take the data elsewhere' } } },
          { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Exports' } } },
          { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'Export a project', description: 'First draft' } } },
        ],
      },
    })
    expect(res.status).toBe(200)
    job = res.body.results[3].nodeId
    page = await openApp(env, P)
    await page.route('**/api/v1/nodes?**', (route) => (holding ? void held.push(route) : void route.continue()))
    page.on('request', (r) => void (PLAN_READ.test(r.url()) && reading.add(r)))
    page.on('requestfinished', (r) => void reading.delete(r))
    page.on('requestfailed', (r) => void reading.delete(r))
    // an agent's view command selects the job (the tree opens down to it) and shows its details
    const shown = await env.server.call('POST', '/api/v1/view-command', {
      body: { projectId: P, command: { type: 'selectNode', nodeId: job } },
    })
    expect(shown.status).toBe(200)
    await page.waitForSelector('#f-description', { timeout: 30_000 })
  }, 90_000)

  afterAll(async () => {
    await env?.browser.close()
    await env?.server.close()
  })

  it('refuses to save over the agent’s change of the same field, says who and when, and keeps the person’s text', async () => {
    holding = true
    await page.fill('#f-description', 'Export every node as CSV') // typed (an input event), not saved
    expect((await agent({ description: 'Export as JSON and CSV, with ids' })).status).toBe(200)
    await page.press('#f-description', 'Control+Enter') // saves a text area
    const note = await page.waitForSelector('.conflict', { timeout: 15_000 })
    const words = (await note.textContent()) ?? ''
    expect(words).toContain('planner-bot')
    expect(words).toContain('changed the description of “Export a project” at')
    expect(words).toContain('“Export as JSON and CSV, with ids”')
    expect(words).toContain('Yours: “Export every node as CSV”')
    expect(await page.inputValue('#f-description')).toBe('Export every node as CSV')
    expect((await node()).data.description).toBe('Export as JSON and CSV, with ids') // nothing written over it
    await shots(page, 'revisions-stale')
    await page.click('.conflict button:text("Keep mine")')
    await env.server.until(async () => (await node()).data.description === 'Export every node as CSV', 15_000, 'the person’s text saved')
    await page.waitForSelector('.conflict', { state: 'detached' })
    await release()
  }, 60_000)

  it('lets the person take the agent’s text instead', async () => {
    holding = true
    await page.fill('#f-description', 'Mine again')
    expect((await agent({ description: 'The agent’s version' })).status).toBe(200)
    await page.press('#f-description', 'Control+Enter')
    await page.waitForSelector('.conflict', { timeout: 15_000 })
    await page.click('.conflict button:text("Use theirs")')
    await page.waitForSelector('.conflict', { state: 'detached' })
    expect(await page.inputValue('#f-description')).toBe('The agent’s version')
    expect((await node()).data.description).toBe('The agent’s version')
    await release()
  }, 60_000)

  it('lands the person’s edit of another field the agent did not touch, keeping both', async () => {
    holding = true
    const before = await node()
    await page.fill('#f-notes', 'Ask two customers which format they need')
    expect((await agent({ description: 'Set by the agent meanwhile' })).status).toBe(200)
    await page.press('#f-notes', 'Control+Enter')
    const after = await env.server.until(
      async () => {
        const n = await node()
        return n.data.notes === 'Ask two customers which format they need' ? n : null
      },
      15_000,
      'the person’s notes saved',
    )
    expect(after.data.description).toBe('Set by the agent meanwhile')
    expect(after.rev).not.toBe(before.rev)
    expect(await page.$('.conflict')).toBeNull()
    await release()
    await shots(page, 'revisions-both-kept')
  }, 60_000)

  it('asks before a rename in place goes over the agent’s new label', async () => {
    await page.click('button:text-is("Tree")')
    await page.waitForSelector(`[role=treeitem][data-id="${job}"]`, { timeout: 15_000 })
    holding = true
    await page.focus(`[role=treeitem][data-id="${job}"]`)
    await page.keyboard.press('F2')
    await page.waitForSelector('#edit-label:focus')
    await page.keyboard.press('Control+A')
    await page.keyboard.type('Export a whole project')
    expect((await agent({ label: 'Export a project as files' })).status).toBe(200)
    await page.keyboard.press('Enter')
    const dialog = await page.waitForSelector('#dialog[open]', { timeout: 15_000 })
    const text = (await dialog.textContent()) ?? ''
    expect(text).toContain('planner-bot')
    expect(text).toContain(`renamed ${job} at`)
    expect(text).toContain('to “Export a project as files”')
    expect(text).toContain('Yours: “Export a whole project”')
    expect((await node()).data.label).toBe('Export a project as files')
    await shots(page, 'revisions-dialog')
    await page.click('#stale-keep-mine')
    await env.server.until(async () => (await node()).data.label === 'Export a whole project', 15_000, 'the person’s label saved')
    await release()
  }, 60_000)
})
