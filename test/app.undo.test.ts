import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Page } from 'playwright-core'
import { type AppEnv, addProject, focused, haveChromium, nodesByLabel, openApp, shots, startApp } from './app.lib'

/**
 * history.md, 5: Ctrl+Z / ⌘Z takes back the page's own last change of any kind through
 * `revert` (rename, done, add, move, delete), a second press the one before it; a later change
 * by someone else is a conflict the page puts in words, writing nothing. Real Chromium, real server.
 */
if (!haveChromium) console.warn('app.undo.test.ts: skipped, /usr/bin/chromium is not installed')
const P = 'undo-app'

describe.skipIf(!haveChromium)('the app: Ctrl+Z takes back this page’s changes', () => {
  let env: AppEnv
  let page: Page
  const ids = new Map<string, string>()
  const node = async (id: string) => {
    const res = await env.server.call('GET', `/api/v1/nodes?projectId=${P}`)
    return res.body.nodes.find((n: { id: string }) => n.id === id) as
      | { id: string; parentId: string | null; data: Record<string, unknown> }
      | undefined
  }
  /** the page shows `text` in the element `sel` (whole, or `part` of it) */
  const shows = (sel: string, text: string, part = false) =>
    page.waitForFunction(
      ([s, t, p]) => {
        type Doc = { querySelector(x: string): { textContent: string | null } | null }
        const got = (globalThis as unknown as { document: Doc }).document.querySelector(s as string)?.textContent ?? ''
        return p ? got.includes(t as string) : got === t
      },
      [sel, text, part] as const,
      { timeout: 20_000 },
    )
  const status = (text: string) => shows('#status', text, true)
  const row = (id: string) => `#tree [role=treeitem][data-id="${id}"]`
  const undo = () => page.keyboard.press('Control+z')

  beforeAll(async () => {
    env = await startApp()
    await addProject(env.server, P, 'Undo')
    const res = await env.server.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: P,
        mutations: [
          { action: 'add', node: { id: 'draft-a', type: 'goal', data: { label: 'Alpha' } } },
          { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-a', data: { label: 'Need one' } } },
          { action: 'add', node: { id: 'draft-b', type: 'goal', data: { label: 'Beta' } } },
          { action: 'add', node: { id: 'draft-t', type: 'task', data: { label: 'Task one' } } },
        ],
      },
    })
    expect(res.status).toBe(200)
    for (const [draft, id] of Object.entries(res.body.idMap as Record<string, string>)) ids.set(draft.slice(6), id)
    page = await openApp(env, P)
    await page.focus(row(ids.get('a')!))
    await page.keyboard.press('*') // every goal open: the need is in sight
  }, 90_000)
  afterAll(async () => {
    await env?.browser.close()
    await env?.server.close()
  })

  it('a rename: Ctrl+Z sets the old label back; two renames, two presses, in order', async () => {
    const a = ids.get('a')!
    await page.focus(row(a))
    const rename = async (label: string) => {
      await page.keyboard.press('F2')
      await page.fill('#edit-label', label)
      await page.keyboard.press('Enter')
      await env.server.until(async () => (await node(a))?.data.label === label, 10_000, `renamed to ${label}`)
      await shows(`${row(a)}:focus .label`, label)
    }
    await rename('Alpha 2')
    await page.waitForSelector(`${row(a)}:focus`)
    await undo()
    await env.server.until(async () => (await node(a))?.data.label === 'Alpha', 10_000, 'the old label back')
    await status('Renamed back to “Alpha”.')
    expect(await page.textContent(`${row(a)} .label`)).toBe('Alpha')
    expect(await focused(page)).toEqual({ id: a, role: 'treeitem' })
    // two changes of the same field, taken back one press at a time
    await rename('Alpha 2')
    await rename('Alpha 3')
    await undo()
    await env.server.until(async () => (await node(a))?.data.label === 'Alpha 2', 10_000, 'the first press')
    await undo()
    await env.server.until(async () => (await node(a))?.data.label === 'Alpha', 10_000, 'the second press')
    await shows(`${row(a)} .label`, 'Alpha')
  }, 60_000)

  it('done: Ctrl+Z opens it again, with the focus on a header button', async () => {
    const t = ids.get('t')!
    await page.focus(row(t))
    await page.keyboard.press('x')
    await env.server.until(async () => (await node(t))?.data.status === 'done', 10_000, 'done')
    await page.focus('#mode-tree')
    await undo()
    await env.server.until(async () => (await node(t))?.data.status !== 'done', 10_000, 'open again')
    await status('Reopened “Task one”.')
    expect(await focused(page)).toEqual({ id: t, role: 'treeitem' })
  }, 60_000)

  it('an add: Ctrl+Z removes the new node, the focus on a neighbour', async () => {
    const b = ids.get('b')!
    await page.focus(row(b))
    await page.keyboard.press('a')
    await page.fill('#edit-label', 'Fresh need')
    await page.keyboard.press('Enter')
    const added = await env.server.until(async () => (await nodesByLabel(env.server, P)).get('Fresh need'), 10_000, 'added')
    await page.waitForSelector(`${row(added.id)}:focus`)
    await undo()
    await env.server.until(async () => !(await nodesByLabel(env.server, P)).has('Fresh need'), 10_000, 'removed')
    await status('Removed the new “Fresh need”.')
    expect(await page.$(row(added.id))).toBeNull()
    expect((await focused(page)).role).toBe('treeitem')
  }, 60_000)

  it('a move: Ctrl+Z puts it back under its old parent', async () => {
    const [a, b, n] = [ids.get('a')!, ids.get('b')!, ids.get('n')!]
    await page.click(`${row(n)} .label`)
    await page.waitForSelector('#f-parent')
    await page.selectOption('#f-parent', b)
    await env.server.until(async () => (await node(n))?.parentId === b, 10_000, 'moved')
    // the select is a field: Ctrl+Z there is the browser's; from the tree it is the page's
    await page.focus(row(n))
    await undo()
    await env.server.until(async () => (await node(n))?.parentId === a, 10_000, 'moved back')
    await status('Moved “Need one” back.')
    await page.waitForSelector(`#tree [role=treeitem][data-id="${a}"] [role=treeitem][data-id="${n}"]`)
    expect(await focused(page)).toEqual({ id: n, role: 'treeitem' })
  }, 60_000)

  it('a delete of the last row: Ctrl+Z restores it and focuses it', async () => {
    await page.focus(row(ids.get('a')!))
    await page.keyboard.press('End')
    const last = (await focused(page)).id!
    await page.keyboard.press('Delete')
    await env.server.until(async () => !(await node(last)), 10_000, 'deleted')
    await status('Deleted')
    expect((await focused(page)).role).toBe('treeitem')
    await shots(page, 'undo-toast') // “Deleted …” with its Undo (Ctrl+Z) button
    await undo()
    await env.server.until(async () => !!(await node(last)), 10_000, 'restored')
    await status('Restored')
    await page.waitForSelector(`${row(last)}:focus`)
    await shots(page, 'undo-restored')
  }, 60_000)

  it('a later change by another key: the conflict in words, nothing changed', async () => {
    const b = ids.get('b')!
    const minted = await env.server.call('POST', '/api/v1/keys', { body: { label: 'planner' } })
    expect(minted.status).toBe(201)
    await page.focus(row(b))
    await page.keyboard.press('F2')
    await page.fill('#edit-label', 'Beta, mine')
    await page.keyboard.press('Enter')
    await env.server.until(async () => (await node(b))?.data.label === 'Beta, mine', 10_000, 'renamed')
    // the rename's editor is closed: its edit intent on the label (live.md §4) ends with it
    await env.server.until(
      async () =>
        !(await env.server.call('GET', `/api/v1/presence?projectId=${P}`)).body.presence?.some((p: { field?: string }) => p.field),
      10_000,
      'the edit intent ended',
    )
    const theirs = await env.server.call('POST', '/api/v1/mutate', {
      key: minted.body.apiKey,
      headers: { 'x-agent-id': 'planner-bot' },
      body: { action: 'update', projectId: P, nodeId: b, data: { label: 'Beta, theirs' } },
    })
    expect(theirs.status).toBe(200)
    await shows(`${row(b)} .label`, 'Beta, theirs')
    await page.focus(row(b))
    await undo()
    await status('Could not undo the rename of “Beta”')
    expect(await page.textContent('#status')).toBe(
      'Could not undo the rename of “Beta”: planner-bot (owner) changed it since — “Beta, theirs” (label). Nothing was changed.',
    )
    expect((await node(b))?.data.label).toBe('Beta, theirs')
    expect(await focused(page)).toEqual({ id: b, role: 'treeitem' })
    await shots(page, 'undo-conflict')
  }, 60_000)
})
