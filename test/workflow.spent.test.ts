import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { loops } from '../src/scheduler'
import { startApp, type TestApp } from './helpers'
import { nodes, planProject, workflow } from './workflow-fixtures'

// A workflow state whose terminal step applied is spent (issue 28): a second, different response
// to it must not apply a second changeset, sequentially or concurrently.
let app: TestApp
beforeAll(async () => {
  app = await startApp()
})
afterAll(() => app.close())

const draft = (label: string) => ({ id: 'draft-1', type: 'job', parentId: 'approach-1', data: { label } })
const SPENT = {
  error: 'This workflow state was already applied by an earlier advance',
  retry: false,
  partialApply: false,
  alreadyApplied: true,
  _meta: {
    _tip: 'A state whose last step applied is spent; nothing was written now. Read GET /api/v1/nodes for what the earlier advance applied, and start the flow again for more changes.',
  },
}

async function terminalState(projectId: string) {
  const res = await workflow(app, { projectId, action: 'start', flow: 'add', input: 'Export the weekly summary as CSV' })
  expect(res.status).toBe(200)
  return res.body.state as string
}
const jobs = async (projectId: string) => (await nodes(app, projectId)).filter((n) => n.type === 'job').map((n) => n.data.label)

describe('a spent workflow state', () => {
  it('refuses a different response after the terminal step applied: 500 alreadyApplied, nothing written', async () => {
    const projectId = await planProject(app)
    const state = await terminalState(projectId)
    const advance = (label: string) =>
      workflow(app, { projectId, action: 'advance', state, response: { signal: 'draft_ready', draftNodes: [draft(label)] } })
    const before = await jobs(projectId)
    expect((await advance('CSV export works')).status).toBe(200)
    const second = await advance('A second, different job')
    expect({ status: second.status, body: second.body }).toEqual({ status: 500, body: SPENT })
    expect(await jobs(projectId)).toEqual([...before, 'CSV export works'])
    // the very same advance again still hears its own earlier changeset
    const same = await advance('CSV export works')
    expect(same.status).toBe(500)
    expect(same.body.error).toBe('This advance was already applied by an earlier attempt')
  })

  it('a refused apply does not spend the state: it applies once the answer is corrected', async () => {
    const projectId = await planProject(app)
    const state = await terminalState(projectId)
    const bad = await workflow(app, {
      projectId,
      action: 'advance',
      state,
      response: { signal: 'draft_ready', draftNodes: [{ ...draft('x'), parentId: 'no-such-approach' }] },
    })
    expect(bad.status).toBe(400)
    expect(bad.body.retry).toBe(true)
    const good = await workflow(app, {
      projectId,
      action: 'advance',
      state,
      response: { signal: 'draft_ready', draftNodes: [draft('Fixed')] },
    })
    expect(good.status).toBe(200)
  })

  it('20 concurrent different responses to one terminal state: exactly one applies, the others 500 alreadyApplied', async () => {
    const projectId = await planProject(app)
    const state = await terminalState(projectId)
    const before = await jobs(projectId)
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        workflow(app, { projectId, action: 'advance', state, response: { signal: 'draft_ready', draftNodes: [draft(`Racer ${i}`)] } }),
      ),
    )
    expect(answers.map((r) => r.status).sort()).toEqual([...Array(19).fill(500), 200].sort())
    for (const r of answers.filter((a) => a.status === 500)) expect(r.body).toEqual(SPENT)
    const winner = answers.find((r) => r.status === 200)!.body.changeset[0].after.data.label
    expect(await jobs(projectId)).toEqual([...before, winner])
  })

  it('is forgotten by the clean-up loop once the state expired', async () => {
    const projectId = await planProject(app)
    const state = await terminalState(projectId)
    await workflow(app, { projectId, action: 'advance', state, response: { signal: 'draft_ready', draftNodes: [draft('Once')] } })
    const count = async () => (await app.db.query<{ n: number }>('select count(*)::int as n from workflow_spent_states'))[0]!.n
    const held = await count()
    expect(held).toBeGreaterThanOrEqual(1)
    const loop = loops.find((l) => l.name === 'idempotency-cleanup')!
    expect(await loop.tick(app.deps, new Date())).toMatchObject({ spentStates: 0 })
    expect(await loop.tick(app.deps, new Date(Date.now() + 25 * 3_600_000))).toMatchObject({ spentStates: held })
    expect(await count()).toBe(0)
  })
})
