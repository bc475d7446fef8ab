import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Page } from 'playwright-core'
import { type AppEnv, addProject, focused, haveChromium, nodesByLabel, openApp, shots, startApp } from './app.lib'

/**
 * Editing in the planning app by keyboard alone, in real Chromium against the real server: each
 * result is read back through the API. Journeys: add a goal, a need, a bet and a job; rename;
 * move; complete; delete and undo (the whole subtree, same ids); a live change never overwrites
 * what a person is typing; a refusal is shown beside its field.
 */
if (!haveChromium) console.warn('app.edit.test.ts: skipped, /usr/bin/chromium is not installed')
const P = 'plans'

describe.skipIf(!haveChromium)('the planning app: editing by keyboard', () => {
  let env: AppEnv
  let page: Page
  const nodes = () => nodesByLabel(env.server, P)

  beforeAll(async () => {
    env = await startApp()
    await addProject(env.server, P, 'Field notes')
    page = await openApp(env, P)
  }, 90_000)

  afterAll(async () => {
    await env?.browser.close()
    await env?.server.close()
  })

  /** Type a label into the in-place input and press Enter; wait for the node to exist. */
  async function name(label: string) {
    await page.waitForSelector('#edit-label:focus')
    await page.keyboard.type(label)
    await page.keyboard.press('Enter')
    await page.waitForSelector('#edit-label', { state: 'detached' })
    return env.server.until(async () => (await nodes()).get(label), 10_000, `node “${label}” written`)
  }

  it('invites an empty project to add a goal, and adds a goal, a need, a bet and a job by keyboard', async () => {
    expect(await page.textContent('.empty-state')).toContain('Start with a goal')
    await page.keyboard.press('Tab') // the first control of the page … the empty state's button is reachable
    await page.focus('#empty-add-goal')
    await page.keyboard.press('Enter')
    const goal = await name('Researchers trust their field notes')
    expect({ type: goal.type, parentId: goal.parentId }).toEqual({ type: 'goal', parentId: null })
    expect(await focused(page)).toEqual({ id: goal.id, role: 'treeitem' })
    await page.keyboard.press('a')
    const need = await name('Notes get lost when offline')
    expect({ type: need.type, parentId: need.parentId }).toEqual({ type: 'need', parentId: goal.id })
    await page.keyboard.press('a')
    const bet = await name('Offline-first local store')
    expect({ type: bet.type, parentId: bet.parentId }).toEqual({ type: 'approach', parentId: need.id })
    await page.keyboard.press('a')
    const job = await name('A note written offline survives a restart')
    expect({ type: job.type, parentId: job.parentId, iteration: job.data.iteration }).toEqual({
      type: 'job',
      parentId: bet.id,
      iteration: 'Later',
    })
    await page.keyboard.press('Shift+A')
    const job2 = await name('Sync resumes by itself')
    expect({ type: job2.type, parentId: job2.parentId }).toEqual({ type: 'job', parentId: bet.id })
    // the tree pattern: levels, open state, one tab stop
    expect(await page.getAttribute(`[role=treeitem][data-id="${job2.id}"]`, 'aria-level')).toBe('4')
    expect(await page.getAttribute(`[role=treeitem][data-id="${bet.id}"]`, 'aria-expanded')).toBe('true')
    expect(await page.$$eval('#tree [tabindex="0"]', (xs) => xs.map((x) => (x as any).dataset.id))).toEqual([job2.id])
    await shots(page, 'add-by-keyboard')
  }, 60_000)

  it('moves with the arrow keys, Home, End and type-ahead, and collapses and expands', async () => {
    const n = await nodes()
    const [goal, need, bet, job] = [
      'Researchers trust their field notes',
      'Notes get lost when offline',
      'Offline-first local store',
      'A note written offline survives a restart',
    ].map((l) => n.get(l).id)
    await page.keyboard.press('ArrowUp')
    expect((await focused(page)).id).toBe(job)
    await page.keyboard.press('ArrowLeft') // a leaf: to its parent
    expect((await focused(page)).id).toBe(bet)
    await page.keyboard.press('ArrowLeft') // open: collapses
    expect(await page.getAttribute(`[data-id="${bet}"]`, 'aria-expanded')).toBe('false')
    expect((await focused(page)).id).toBe(bet)
    await page.keyboard.press('ArrowRight') // closed: expands
    expect(await page.getAttribute(`[data-id="${bet}"]`, 'aria-expanded')).toBe('true')
    await page.keyboard.press('ArrowRight') // open: to the first child
    expect((await focused(page)).id).toBe(job)
    await page.keyboard.press('Home')
    expect((await focused(page)).id).toBe(goal)
    await page.keyboard.press('End')
    expect((await focused(page)).id).toBe(n.get('Sync resumes by itself').id)
    await page.keyboard.type('no')
    expect((await focused(page)).id).toBe(need)
    // the selection follows the focus, and the page reports it (GET /view-state)
    const st = await env.server.until(async () => {
      const r = await env.server.call('GET', `/api/v1/view-state?projectId=${P}`)
      return r.body.selected_node === need ? r.body : null
    })
    expect(st.selected_node).toBe(need)
  })

  it('renames in place with F2 and Enter, and Escape cancels', async () => {
    const need = (await nodes()).get('Notes get lost when offline')
    expect((await focused(page)).id).toBe(need.id)
    await page.keyboard.press('F2')
    await page.waitForSelector('#edit-label:focus')
    await page.keyboard.press('Control+A')
    await page.keyboard.type('Notes vanish offline')
    await page.keyboard.press('Escape')
    expect((await focused(page)).id).toBe(need.id)
    expect((await nodes()).get('Notes get lost when offline')?.id).toBe(need.id)
    await page.keyboard.press('Enter')
    await page.keyboard.press('Control+A')
    await page.keyboard.type('Notes vanish when offline')
    await page.keyboard.press('Enter')
    const renamed = await env.server.until(async () => (await nodes()).get('Notes vanish when offline'))
    expect(renamed.id).toBe(need.id)
    // focus returns to the row once the page has the answer (the API may show the rename a moment before)
    await page.waitForSelector(`[data-id="${need.id}"]:focus`, { timeout: 30_000 })
    await shots(page, 'rename')
  })

  it('marks a job done with x and open again, and shows the refusal of a done iteration beside it', async () => {
    const job = (await nodes()).get('A note written offline survives a restart')
    // the key goes to the job's row once it holds the focus (a live update may redraw the tree
    // between a click and a key press, as a person would see and click again)
    const focusJob = async () => {
      await page.click(`[data-id="${job.id}"] > .row`)
      await page.focus(`[data-id="${job.id}"]`)
      await page.waitForFunction(`document.activeElement?.getAttribute('data-id') === ${JSON.stringify(job.id)}`)
    }
    // type-ahead on another row just before (a letter within 500 ms): x on the row clicked since
    // marks it done, it does not go on searching
    const goal = (await nodes()).get('Researchers trust their field notes')
    await page.focus(`[data-id="${goal.id}"]`)
    await page.keyboard.press('r')
    await focusJob()
    await page.keyboard.press('x')
    await env.server.until(async () => (await nodes()).get(job.data.label).data.status === 'done', 30_000, 'the job marked done')
    await page.waitForSelector(`[data-id="${job.id}"].is-done`)
    await shots(page, 'complete')
    await focusJob()
    await page.keyboard.press('x')
    await env.server.until(async () => (await nodes()).get(job.data.label).data.status === undefined, 30_000, 'the job open again')
    // a done iteration refuses a job marked done in it: the reason appears beside the job
    await env.server.call('POST', '/api/v1/mutate', { body: { action: 'addIteration', projectId: P, iteration: { name: 'Spring' } } })
    await env.server.call('POST', '/api/v1/mutate', {
      body: { action: 'update', projectId: P, nodeId: job.id, data: { iteration: 'Spring' } },
    })
    await env.server.call('POST', '/api/v1/mutate', {
      body: { action: 'updateIteration', projectId: P, iterationName: 'Spring', data: { status: 'done' } },
    })
    await page.waitForSelector(`[data-id="${job.id}"] .iter:text("Spring")`, { timeout: 15_000 })
    await page.focus(`[data-id="${job.id}"]`)
    await page.keyboard.press('x')
    const error = await page.waitForSelector(`[data-id="${job.id}"] > .field-error`)
    expect(await error.textContent()).toContain('Spring')
    expect((await nodes()).get(job.data.label).data.status).toBeUndefined()
  }, 60_000)

  it('edits every field of a bet in the details panel, and moves it to another need', async () => {
    const n = await nodes()
    const bet = n.get('Offline-first local store')
    const goal = n.get('Researchers trust their field notes')
    await page.focus(`[data-id="${goal.id}"]`)
    await page.keyboard.press('a')
    const other = await name('Sharing takes too many steps')
    await page.focus(`[data-id="${bet.id}"]`)
    await page.keyboard.press(' ') // Space opens the details
    await page.waitForSelector('#f-label:focus')
    // one field after the other, each saved before the next, as a person's hands go (the panel
    // redraws as each answer and each live update come in)
    const stored = (field: string, value: string) =>
      env.server.until(async () => (await nodes()).get('Offline-first local store').data[field] === value, 30_000, `${field} saved`)
    await page.selectOption('#f-size', 'car')
    await stored('size', 'car')
    await page.selectOption('#f-kano', 'must-have')
    await stored('kano', 'must-have')
    await page.selectOption('#f-approachStatus', 'validation')
    await stored('approachStatus', 'validation')
    await page.fill('#f-measure', 'No note lost in a month')
    await page.keyboard.press('Enter')
    await stored('measure', 'No note lost in a month')
    await page.fill('#f-description', 'Keep every note on the device first')
    await page.keyboard.press('Tab')
    await page.fill('#f-externalRefs', 'github ARB-1 https://example.com/1')
    await page.keyboard.press('Tab')
    const saved = await env.server.until(async () => {
      const b = (await nodes()).get('Offline-first local store')
      return b.data.externalRefs && b.data.description ? b : null
    })
    expect(saved.data).toEqual({
      label: 'Offline-first local store',
      size: 'car',
      kano: 'must-have',
      approachStatus: 'validation',
      measure: 'No note lost in a month',
      description: 'Keep every note on the device first',
      externalRefs: [{ system: 'github', key: 'ARB-1', url: 'https://example.com/1' }],
    })
    await page.selectOption('#f-parent', other.id)
    const moved = await env.server.until(async () => {
      const b = (await nodes()).get('Offline-first local store')
      return b.parentId === other.id ? b : null
    })
    expect(moved.parentId).toBe(other.id)
    await shots(page, 'details-and-move')
    // a refusal appears beside the field that caused it
    await page.fill('#f-externalRefs', 'github ARB-1 http://not-https')
    await page.keyboard.press('Tab')
    const err = await page.waitForSelector('#f-externalRefs ~ .field-error')
    expect(await err.textContent()).toMatch(/https/)
  }, 60_000)

  it('never overwrites what a person is typing with a change made elsewhere', async () => {
    const bet = (await nodes()).get('Offline-first local store')
    await page.focus('#f-measure')
    await page.keyboard.press('Control+A')
    await page.keyboard.type('Mine: zero lost notes')
    // the page holds an edit intent on the field (live.md, 4): the change made elsewhere overrules it
    await env.server.call('POST', '/api/v1/mutate', {
      body: { action: 'update', projectId: P, nodeId: bet.id, data: { measure: 'Theirs: sync under 5 s' }, force: true },
    })
    const note = await page.waitForSelector('.conflict', { timeout: 15_000 })
    expect(await note.textContent()).toContain('Theirs: sync under 5 s')
    expect(await page.inputValue('#f-measure')).toBe('Mine: zero lost notes')
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).toBe('f-measure')
    await page.keyboard.press('Enter') // unresolved: nothing is sent over theirs
    expect((await nodes()).get('Offline-first local store').data.measure).toBe('Theirs: sync under 5 s')
    await shots(page, 'conflict')
    await page.click('.conflict button:text("Keep mine")')
    await env.server.until(async () => (await nodes()).get('Offline-first local store').data.measure === 'Mine: zero lost notes')
  }, 60_000)

  it('deletes a subtree with Delete and brings it all back, same ids, with Ctrl+Z', async () => {
    const before = await nodes()
    const need = before.get('Sharing takes too many steps')
    const subtree = [...before.values()].filter(
      (x) =>
        [need.id, before.get('Offline-first local store').id].includes(x.id) || x.parentId === before.get('Offline-first local store').id,
    )
    expect(subtree.length).toBe(4)
    await page.focus(`[data-id="${need.id}"]`)
    await page.keyboard.press('Delete')
    await env.server.until(async () => !(await nodes()).has('Sharing takes too many steps'))
    expect((await nodes()).has('Sync resumes by itself')).toBe(false)
    // the page says so once the batch's answer reaches it (the API may show the delete a moment before)
    await page.locator('#status', { hasText: 'Deleted' }).waitFor({ timeout: 30_000 }) // a locator: the page's CSP forbids a string's eval
    await shots(page, 'delete')
    expect((await focused(page)).role).toBe('treeitem')
    await page.keyboard.press('Control+z')
    const after = await env.server.until(async () => {
      const m = await nodes()
      return subtree.every((x) => m.get(x.data.label)?.id === x.id) ? m : null
    })
    // as they were, each with a new rev (coming back is a change, live.md 1)
    for (const x of subtree) expect(after.get(x.data.label)).toEqual({ ...x, rev: expect.any(String) })
    await page.waitForSelector(`[data-id="${need.id}"]`)
    await shots(page, 'undo')
  }, 60_000)
})
