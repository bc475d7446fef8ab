import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { ActionName } from '../src/ports/actions'
import { startApp, type TestApp } from './helpers'
import { planProject } from './workflow-fixtures'

/**
 * POST /mutate asks the project's access once (src/mutate/routes.ts `requireProject`, before the
 * idempotent run) and hands it down: no handler of the action table asks src/projects/access.ts
 * again, nor the work state's `beforeWrite` for the claim tokens a body carries (ARCHITECTURE.md,
 * "How a write flows", step 3). Counted as the asks of the access cache (`deps.auth`, space
 * `access`), which every `requireProject` goes through. Runs on PGlite, and on PostgreSQL with
 * TEST_DATABASE_URL.
 */

let app: TestApp
let projectId: string
let asks = 0

beforeAll(async () => {
  app = await startApp()
  projectId = await app.project('access-once')
  const auth = app.deps.auth
  const get = auth.get.bind(auth)
  auth.get = ((space: string, key: string, load: () => Promise<unknown>) => {
    if (space === 'access') asks++
    return get(space, key, load)
  }) as typeof auth.get
}, 60_000)
afterAll(() => app?.close())

/** The access asks of one POST /mutate, and its answer. */
async function counted(body: Record<string, unknown>, path = '/api/v1/mutate') {
  asks = 0
  const res = await app.call('POST', path, { body })
  return { asks, status: res.status, body: res.body }
}

const add = async (node: Record<string, unknown>) => {
  const res = await app.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId, node } })
  expect(res.body).toMatchObject({ success: true })
  return res.body.node.id as string
}

describe('POST /mutate asks the project access once', () => {
  it('for every action that names a project, whatever it answers', async () => {
    const goal = await add({ type: 'goal', data: { label: 'Once' } })
    const p = projectId
    const made = await app.call('POST', '/api/v1/mutate', { body: { action: 'addIteration', projectId: p, iteration: { name: 'Kept' } } })
    expect(made.body).toMatchObject({ success: true })
    const bodies: Record<Exclude<ActionName, 'addProject'>, Record<string, unknown>> = {
      add: { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Another' } } },
      update: { action: 'update', projectId: p, nodeId: goal, data: { label: 'Renamed' } },
      delete: { action: 'delete', projectId: p, nodeId: 'goal-nope' },
      restore: { action: 'restore', projectId: p, nodeId: 'goal-nope' },
      classify: { action: 'classify', projectId: p, nodeId: 'task-nope', classification: 'do-it' },
      batch: { action: 'batch', projectId: p, mutations: [{ action: 'update', nodeId: goal, data: { label: 'Batched' } }] },
      addIteration: { action: 'addIteration', projectId: p, iteration: { name: 'Sprint once' } },
      updateIteration: { action: 'updateIteration', projectId: p, iterationName: 'Kept', data: { name: 'Kept again' } },
      deleteIteration: { action: 'deleteIteration', projectId: p, iterationName: 'Kept again' },
      reorderIterations: { action: 'reorderIterations', projectId: p, iterationIds: [] },
      renameProject: { action: 'renameProject', projectId: p, name: 'access once' },
      claim: { action: 'claim', projectId: p, count: 1, agent: 'once/1' },
      renewClaim: { action: 'renewClaim', projectId: p, claimToken: 'clm_nope' },
      releaseClaim: { action: 'releaseClaim', projectId: p, claimToken: 'clm_nope' },
      revert: { action: 'revert', projectId: p, changeIds: ['999999'], dryRun: true },
      propose: {
        action: 'propose',
        projectId: p,
        title: 'Once',
        mutations: [{ action: 'add', node: { type: 'goal', data: { label: 'P' } } }],
      },
      applyProposal: { action: 'applyProposal', projectId: p, proposalId: 'prp_nope' },
      rejectProposal: { action: 'rejectProposal', projectId: p, proposalId: 'prp_nope' },
      withdrawProposal: { action: 'withdrawProposal', projectId: p, proposalId: 'prp_nope' },
    }
    const seen: Record<string, number> = {}
    for (const [name, body] of Object.entries(bodies)) {
      const run = await counted(body)
      seen[name] = run.asks
      // the iteration actions reach their handler (a rename, a deletion of the iteration made above)
      if (name === 'updateIteration' || name === 'deleteIteration')
        expect([name, run.body]).toEqual([name, expect.objectContaining({ success: true })])
    }
    expect(seen).toEqual(Object.fromEntries(Object.keys(bodies).map((name) => [name, 1])))
  })

  it('for a proposal applied (its batch writes in the project the action was handed)', async () => {
    const proposed = await counted({
      action: 'propose',
      projectId,
      title: 'Apply once',
      mutations: [{ action: 'add', node: { type: 'goal', data: { label: 'Applied' } } }],
    })
    expect(proposed.status).toBe(200)
    const applied = await counted({ action: 'applyProposal', projectId, proposalId: proposed.body.proposal.proposalId })
    expect(applied.body).toMatchObject({ success: true })
    expect(applied.asks).toBe(1)
  })

  it('for a write that carries a claim token (beforeWrite checks it in the project handed down)', async () => {
    const goal = await add({ type: 'goal', data: { label: 'Claimed work' } })
    const need = await add({ type: 'need', parentId: goal, data: { label: 'Want' } })
    const approach = await add({ type: 'approach', parentId: need, data: { label: 'Way' } })
    const job = await add({ type: 'job', parentId: approach, data: { label: 'Do it' } })
    const claimed = await counted({ action: 'claim', projectId, nodeIds: [job], agent: 'once/2' })
    expect(claimed.status).toBe(200)
    const claimToken = claimed.body.claims[0].claimToken as string
    const updated = await counted({ action: 'update', projectId, nodeId: job, claimToken, data: { label: 'Doing it' } })
    expect(updated.status).toBe(200)
    expect(updated.asks).toBe(1)
    const batched = await counted({
      action: 'batch',
      projectId,
      mutations: [{ action: 'update', nodeId: job, claimToken, data: { label: 'Done soon' } }],
    })
    expect(batched.status).toBe(200)
    expect(batched.asks).toBe(1)
    // a token that is not live is still refused (409 claim_lost), with the one ask
    const lost = await counted({ action: 'update', projectId, nodeId: job, claimToken: 'clm_nope', data: { label: 'x' } })
    expect(lost.status).toBe(409)
    expect(lost.asks).toBe(1)
  })

  it("for a workflow's terminal advance (its plan's batch writes in the project POST /workflow asked)", async () => {
    const planned = await planProject(app)
    const started = await app.call('POST', '/api/v1/workflow', { body: { projectId: planned, action: 'start', flow: 'add', input: 'CSV' } })
    expect(started.status).toBe(200)
    const draft = { id: 'draft-1', type: 'job', parentId: 'approach-1', data: { label: 'A manager exports the summary' } }
    const applied = await counted(
      {
        projectId: planned,
        action: 'advance',
        state: started.body.state,
        response: { signal: 'draft_ready', message: 'Small enough.', draftNodes: [draft] },
      },
      '/api/v1/workflow',
    )
    expect([applied.status, applied.body.done, applied.body.changeset?.length]).toEqual([200, true, 1])
    expect(applied.asks).toBe(1)
  })

  it("for an import of several chunks (each chunk's batch writes in the project the import asked once)", async () => {
    const source = await app.project('access-once-source')
    const mutations = Array.from({ length: 180 }, (_, i) => ({ action: 'add', node: { type: 'task', data: { label: `T${i}` } } }))
    const added = await app.call('POST', '/api/v1/mutate', { body: { action: 'batch', projectId: source, mutations } })
    expect(added.status).toBe(200)
    const files = (await app.call('GET', `/api/v1/export-okf?projectId=${source}`)).body.files as Record<string, string>
    // the first chunk holds 50 entries (src/mutate/import-okf.ts): 180 tasks take more than one
    const imported = await counted({ files }, '/api/v1/import-okf')
    expect([imported.status, imported.body.nodes]).toEqual([200, 180])
    expect(imported.asks).toBe(1)
  })
})

/**
 * And the key's project list once: the edge (src/mutate/routes.ts `actionAccess`) asks who may make
 * the action in one order, each question once: the key's project list (live.md §6), its role for
 * the action (and a work key's claim), then the project's access. Each caller's answer, pinned:
 * status, `error`, and the message's opening words. A refusal of the key reads nothing of the
 * project (no access asked).
 */
describe("POST /mutate asks the key's project list once, before its role and the project's access", () => {
  const addTo = (p: unknown) => ({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Who may' } } })
  const mint = async (key: string, scope: Record<string, unknown>) =>
    (await app.call('POST', '/api/v1/keys', { key, body: { scope } })).body.apiKey as string
  const answer = async (key: string, body: Record<string, unknown>) => {
    asks = 0
    const res = await app.call('POST', '/api/v1/mutate', { key, body })
    return { status: res.status, error: res.body.error, message: String(res.body.message ?? '').slice(0, 60), asks }
  }

  it('answers each caller as the contract says', async () => {
    const owner = await app.user({ tier: 'team' })
    const p = await app.project(undefined, owner.key)
    const q = await app.project(undefined, owner.key)
    const member = await app.user({ tier: 'builder' })
    expect((await app.call('POST', '/api/v1/members', { key: owner.key, body: { projectId: p, userId: member.id } })).status).toBe(201)
    const stranger = await app.user({ tier: 'team' })
    // a builder's project shared with a member: the owner is not on team
    const builder = await app.user({ tier: 'builder' })
    const b = await app.project(undefined, builder.key)
    expect((await app.call('POST', '/api/v1/members', { key: builder.key, body: { projectId: b, userId: member.id } })).status).toBe(201)

    const onOthers = {
      status: 403,
      error: 'key_scope',
      message: `This key works on projects ${q} only, not on ${p}; its role`.slice(0, 60),
      asks: 0,
    }
    // a key scoped to other projects: the list answers, whatever the key's role or claim
    expect(await answer(await mint(owner.key, { role: 'write', projects: [q] }), addTo(p))).toEqual(onOthers)
    expect(await answer(await mint(owner.key, { role: 'read', projects: [q] }), addTo(p))).toEqual(onOthers)
    const work = await mint(owner.key, { role: 'work', projects: [q] })
    expect(await answer(work, { action: 'update', projectId: p, nodeId: 'goal-x', claimToken: 'clm_x', data: { label: 'x' } })).toEqual(
      onOthers,
    )
    // '' is a project outside the list too
    expect(await answer(await mint(owner.key, { role: 'write', projects: [q] }), addTo(''))).toMatchObject({
      status: 403,
      error: 'key_scope',
      asks: 0,
    })
    // a read-only key: its role answers, before the project's access (a stranger's too)
    const readOnly = { status: 403, error: 'key_scope', message: 'This key has role read, which allows every read (GET), the s', asks: 0 }
    expect(await answer(await mint(owner.key, { role: 'read' }), addTo(p))).toEqual(readOnly)
    expect(await answer(await mint(stranger.key, { role: 'read' }), addTo(p))).toEqual(readOnly)
    expect(await answer(await mint(owner.key, { role: 'read' }), { action: 'add' })).toEqual(readOnly)
    // a stranger: the project's access, asked once
    const denied = { status: 403, error: 'project_access_denied', message: 'API key does not have access to this project', asks: 1 }
    expect(await answer(stranger.key, addTo(p))).toEqual(denied)
    expect(await answer(await mint(stranger.key, { role: 'write', projects: [p] }), addTo(p))).toEqual(denied)
    expect(await answer(stranger.key, addTo(''))).toEqual({ ...denied, asks: 0 })
    // a member: let in on a team owner's project, refused with the tier's words on another's
    expect(await answer(member.key, addTo(p))).toEqual({ status: 200, error: undefined, message: '', asks: 1 })
    expect(await answer(await mint(member.key, { role: 'write', projects: [p] }), addTo(p))).toMatchObject({ status: 200, asks: 1 })
    expect(await answer(member.key, addTo(b))).toEqual({
      status: 403,
      error: 'Shared-project API access requires the project owner to be on the Team tier',
      message: 'Shared-project API access requires the project owner to be on the Team tier'.slice(0, 60),
      asks: 1,
    })
  })
})
