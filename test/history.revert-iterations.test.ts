import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type ServerProcess, startServer } from './process'

// history.md, 3 through the real server: taking back an iteration's rename or deletion together
// with the moves of the jobs and tasks that came with it (by change ids, by filter, by agent),
// the rename alone, the moves alone, a dry run, and the revert of such a revert. A job never
// names an iteration that does not exist.
let srv: ServerProcess
beforeAll(async () => {
  srv = await startServer()
})
afterAll(async () => {
  await srv?.close()
})

let n = 0
const AGENT = { 'x-agent-id': 'planner@ci', 'x-arbor-via': 'mcp' }
const PREFER = { prefer: 'change-ids' }
const mutate = (body: unknown, headers: Record<string, string> = {}) => srv.call('POST', '/api/v1/mutate', { body, headers })
const ok = async (body: unknown, headers: Record<string, string> = {}) => {
  const res = await mutate(body, headers)
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}
const history = async (p: string, query = '') => (await srv.call('GET', `/api/v1/history?projectId=${p}${query}`)).body.changes
/** Every job and task with its iteration, and the project's iterations. */
const plan = async (p: string) => ({
  nodes: Object.fromEntries(
    (await srv.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes
      .filter((x: any) => x.type === 'job' || x.type === 'task')
      .map((x: any) => [x.id, x.data.iteration]),
  ),
  iterations: (await srv.call('GET', `/api/v1/iterations?projectId=${p}`)).body.iterations.map((i: any) => i.name).sort(),
})

/** A project with iteration S1 holding job-1 and job-2, and job-3 in Later. */
async function project() {
  const p = `ri${++n}-${Math.random().toString(36).slice(2, 8)}`
  await ok({ action: 'addProject', project: { name: p, id: p } })
  await ok({
    action: 'batch',
    projectId: p,
    mutations: [
      { action: 'addIteration', iteration: { name: 'S1' } },
      { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
      { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
      { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'J1', iteration: 'S1' } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'J2', iteration: 'S1' } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'J3' } } },
    ],
  })
  return p
}
const START = { nodes: { 'job-1': 'S1', 'job-2': 'S1', 'job-3': 'Later' }, iterations: ['Later', 'S1'] }
const RENAMED = { nodes: { 'job-1': 'Sprint 1', 'job-2': 'Sprint 1', 'job-3': 'Later' }, iterations: ['Later', 'Sprint 1'] }
const DELETED = { nodes: { 'job-1': 'Later', 'job-2': 'Later', 'job-3': 'Later' }, iterations: ['Later'] }
const rename = (p: string, headers: Record<string, string> = PREFER) =>
  ok({ action: 'updateIteration', projectId: p, iterationName: 'S1', data: { name: 'Sprint 1' } }, headers)

describe('revert of an iteration rename that moved jobs', () => {
  it('takes back the rename and its moves by their change ids, and the revert of that revert renames again', async () => {
    const p = await project()
    const renamed = await rename(p)
    expect(renamed.changeIds).toHaveLength(3) // the rename, then the two jobs it moved
    expect(await plan(p)).toEqual(RENAMED)
    const back = await mutate({ action: 'revert', projectId: p, changeIds: renamed.changeIds })
    expect(back.status).toBe(200)
    expect(back.body).toEqual({ success: true, reverted: 3, changeIds: expect.any(Array), _meta: expect.any(Object) })
    expect(await plan(p)).toEqual(START)
    // recorded as reverts, one of each change taken back, under the revert's request
    const made = await history(p, `&requestId=${(await history(p, '&limit=1'))[0].requestId}`)
    expect(made.map((c: any) => [c.action, c.target.id, c.revertOf]).sort()).toEqual(
      [
        ['revert', 'S1', renamed.changeIds[0]],
        ['revert', 'job-1', expect.any(String)],
        ['revert', 'job-2', expect.any(String)],
      ].sort(),
    )
    expect(made.map((c: any) => c.revertOf).sort()).toEqual([...renamed.changeIds].sort())
    expect([...back.body.changeIds].sort()).toEqual(made.map((c: any) => c.changeId).sort())
    // the events of an ordinary rename back and of updates of the jobs, in the order they ran
    const events = await srv.until(async () => {
      const all = (await srv.call('GET', `/api/v1/events?projectId=${p}&limit=500`)).body.events ?? []
      return all.some((e: any) => e.iteration?.previous_name === 'Sprint 1') ? all : null
    })
    expect(
      events
        .slice(-3)
        .map((e: any) => [e.event, e.iteration?.name ?? e.node.id, e.iteration?.previous_name ?? e.node.data.iteration, e.revert]),
    ).toEqual([
      ['iteration.updated', 'S1', 'Sprint 1', undefined],
      ['node.updated', 'job-2', 'S1', true],
      ['node.updated', 'job-1', 'S1', true],
    ])
    // and the revert itself can be taken back
    const again = await mutate({ action: 'revert', projectId: p, changeIds: back.body.changeIds })
    expect(again.status).toBe(200)
    expect(again.body.reverted).toBe(3)
    expect(await plan(p)).toEqual(RENAMED)
    // and that one too
    expect((await mutate({ action: 'revert', projectId: p, changeIds: again.body.changeIds })).status).toBe(200)
    expect(await plan(p)).toEqual(START)
  })

  it('takes them back by a filter (requestId) and by agent, and a dry run says what the real run does', async () => {
    const p = await project()
    await rename(p, AGENT)
    const requestId = (await history(p, '&limit=1'))[0].requestId
    const dry = await mutate({ action: 'revert', projectId: p, filter: { requestId }, dryRun: true })
    expect(dry.status).toBe(200)
    expect(dry.body.conflicts).toEqual([])
    expect(await plan(p)).toEqual(RENAMED) // a dry run writes nothing
    const byRequest = await mutate({ action: 'revert', projectId: p, filter: { requestId } })
    expect(byRequest.status).toBe(200)
    expect(byRequest.body.reverted).toBe(3)
    expect(await plan(p)).toEqual(START)
    const made = await history(p, `&requestId=${(await history(p, '&limit=1'))[0].requestId}`)
    const brief = (c: any) => ({ target: c.target, before: c.before, after: c.after })
    expect(dry.body.changes.map(brief).sort(byTarget)).toEqual(made.map(brief).sort(byTarget))

    const q = await project()
    await rename(q, AGENT)
    const byAgent = await mutate({ action: 'revert', projectId: q, filter: { agent: 'planner@ci' } })
    expect(byAgent.status).toBe(200)
    expect(await plan(q)).toEqual(START)
  })

  it('takes back the rename alone: the jobs that name the new name follow it back, and the moves alone are refused while it does not exist', async () => {
    const p = await project()
    const renamed = await rename(p)
    const moves = await mutate({ action: 'revert', projectId: p, changeIds: renamed.changeIds.slice(1) })
    expect(moves.status).toBe(400)
    expect(moves.body.errors).toEqual([`Iteration S1 not found: change ${renamed.changeIds[2]} would set job-2 back into it`])
    expect(moves.body._meta._tip).toContain('Take back the change that renamed or deleted iteration S1 in the same revert')
    expect(await plan(p)).toEqual(RENAMED) // nothing written
    const alone = await mutate({ action: 'revert', projectId: p, changeIds: renamed.changeIds.slice(0, 1) })
    expect(alone.status).toBe(200)
    expect(alone.body.reverted).toBe(1)
    expect(await plan(p)).toEqual(START)
  })

  it('takes back an edit of a moved job with the rename, without its move, and leaves the job in the iteration it came back to', async () => {
    const p = await project()
    const edited = await ok({ action: 'update', projectId: p, nodeId: 'job-1', data: { label: 'J1 edited' } }, PREFER)
    const renamed = await rename(p)
    const back = await mutate({ action: 'revert', projectId: p, changeIds: [edited.changeIds[0], renamed.changeIds[0]] })
    expect(back.status).toBe(200)
    expect(await plan(p)).toEqual(START)
    const job = (await srv.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes.find((x: any) => x.id === 'job-1')
    expect(job.data).toEqual({ label: 'J1', iteration: 'S1' })
  })
})

describe('revert of renames and their moves with others in the way', () => {
  it('takes back two renames in a row by agent, and the revert of that revert', async () => {
    const p = await project()
    await rename(p, AGENT)
    await ok({ action: 'updateIteration', projectId: p, iterationName: 'Sprint 1', data: { name: 'Sprint one' } }, AGENT)
    const back = await mutate({ action: 'revert', projectId: p, filter: { agent: 'planner@ci' } })
    expect(back.status).toBe(200)
    expect(back.body.reverted).toBe(6)
    expect(await plan(p)).toEqual(START)
    expect((await mutate({ action: 'revert', projectId: p, changeIds: back.body.changeIds })).status).toBe(200)
    expect(await plan(p)).toEqual({
      nodes: { 'job-1': 'Sprint one', 'job-2': 'Sprint one', 'job-3': 'Later' },
      iterations: ['Later', 'Sprint one'],
    })
  })

  it('takes back an iteration added with a job moved into it, and the revert of that revert moves it there again', async () => {
    const p = await project()
    await ok({ action: 'addIteration', projectId: p, iteration: { name: 'S2' } }, AGENT)
    await ok({ action: 'update', projectId: p, nodeId: 'job-1', data: { iteration: 'S2' } }, AGENT)
    const moved = { nodes: { ...START.nodes, 'job-1': 'S2' }, iterations: ['Later', 'S1', 'S2'] }
    expect(await plan(p)).toEqual(moved)
    const back = await mutate({ action: 'revert', projectId: p, filter: { agent: 'planner@ci' } })
    expect(back.status).toBe(200)
    expect(await plan(p)).toEqual(START)
    // its changes in the order its steps ran: the job set back first, then the iteration deleted
    const made = await history(p, `&requestId=${(await history(p, '&limit=1'))[0].requestId}`)
    expect(made.map((c: any) => c.target.id).reverse()).toEqual(['job-1', 'S2'])
    const again = await mutate({ action: 'revert', projectId: p, changeIds: back.body.changeIds })
    expect(again.status).toBe(200)
    expect(await plan(p)).toEqual(moved)
  })

  it('takes back an iteration added, its jobs moving to Later, and the revert of that revert moves them back into it', async () => {
    const p = await project()
    await ok({ action: 'addIteration', projectId: p, iteration: { name: 'S2' } }, AGENT)
    await ok({ action: 'update', projectId: p, nodeId: 'job-3', data: { iteration: 'S2' } }) // not the agent's
    const back = await mutate({ action: 'revert', projectId: p, filter: { agent: 'planner@ci' } })
    expect(back.status).toBe(200)
    expect(back.body.reverted).toBe(1)
    expect(await plan(p)).toEqual(START)
    // the job it moved is recorded as part of taking the iteration back, and named in its changeIds
    const added = (await history(p, '&agent=planner@ci'))[0].changeId
    const made = await history(p, `&requestId=${(await history(p, '&limit=1'))[0].requestId}`)
    expect(made.map((c: any) => [c.action, c.target.id, c.revertOf])).toEqual([
      ['revert', 'job-3', added],
      ['revert', 'S2', added],
    ])
    expect(back.body.changeIds).toEqual(made.map((c: any) => c.changeId).reverse())
    const again = await mutate({ action: 'revert', projectId: p, changeIds: back.body.changeIds })
    expect(again.status).toBe(200)
    expect(await plan(p)).toEqual({ nodes: { ...START.nodes, 'job-3': 'S2' }, iterations: ['Later', 'S1', 'S2'] })
  })

  it('answers 409 revert_conflict when someone renamed it again since, and with force leaves every job in an iteration that exists', async () => {
    const p = await project()
    const renamed = await rename(p, { ...PREFER, ...AGENT })
    const later = await ok({ action: 'updateIteration', projectId: p, iterationName: 'Sprint 1', data: { name: 'Sprint X' } }, PREFER)
    const after = { nodes: { 'job-1': 'Sprint X', 'job-2': 'Sprint X', 'job-3': 'Later' }, iterations: ['Later', 'Sprint X'] }
    const res = await mutate({ action: 'revert', projectId: p, filter: { agent: 'planner@ci' } })
    expect(res.status).toBe(409)
    expect(res.body.error).toBe('revert_conflict')
    expect(res.body.conflicts.map((c: any) => [c.changeId, c.target.id, c.reason, c.laterChangeId]).sort()).toEqual(
      [
        [renamed.changeIds[0], 'Sprint 1', 'gone', null],
        [renamed.changeIds[1], 'job-1', 'changed_later', later.changeIds[1]],
        [renamed.changeIds[2], 'job-2', 'changed_later', later.changeIds[2]],
      ].sort(),
    )
    expect(await plan(p)).toEqual(after)
    const dry = await mutate({ action: 'revert', projectId: p, filter: { agent: 'planner@ci' }, dryRun: true })
    expect(dry.status).toBe(200)
    expect(dry.body.conflicts).toEqual(res.body.conflicts)
    const forced = await mutate({ action: 'revert', projectId: p, filter: { agent: 'planner@ci' }, force: true })
    expect(forced.status).toBe(200)
    expect(forced.body.reverted).toBe(0) // the rename is gone, and its moves with it
    expect(await plan(p)).toEqual(after)
  })
})

describe('revert of an iteration deletion that moved jobs to Later', () => {
  it('brings the iteration back and its jobs into it, by ids and by agent; the revert of that revert deletes it again', async () => {
    const p = await project()
    const deleted = await ok({ action: 'deleteIteration', projectId: p, iterationName: 'S1' }, PREFER)
    expect(deleted.changeIds).toHaveLength(3)
    expect(await plan(p)).toEqual(DELETED)
    const back = await mutate({ action: 'revert', projectId: p, changeIds: deleted.changeIds })
    expect(back.status).toBe(200)
    expect(back.body.reverted).toBe(3)
    expect(await plan(p)).toEqual(START)
    const again = await mutate({ action: 'revert', projectId: p, changeIds: back.body.changeIds })
    expect(again.status).toBe(200)
    expect(await plan(p)).toEqual(DELETED)

    const q = await project()
    await ok({ action: 'deleteIteration', projectId: q, iterationName: 'S1' }, AGENT)
    const byAgent = await mutate({ action: 'revert', projectId: q, filter: { agent: 'planner@ci' } })
    expect(byAgent.status).toBe(200)
    expect(await plan(q)).toEqual(START)
  })

  it('takes back the deletion alone (the jobs stay in Later), and the moves alone are refused while it does not exist', async () => {
    const p = await project()
    const deleted = await ok({ action: 'deleteIteration', projectId: p, iterationName: 'S1' }, PREFER)
    const moves = await mutate({ action: 'revert', projectId: p, changeIds: deleted.changeIds.slice(1) })
    expect(moves.status).toBe(400)
    expect(moves.body.errors[0]).toContain('Iteration S1 not found')
    expect(await plan(p)).toEqual(DELETED)
    expect((await mutate({ action: 'revert', projectId: p, changeIds: deleted.changeIds.slice(0, 1) })).status).toBe(200)
    expect(await plan(p)).toEqual({ ...DELETED, iterations: ['Later', 'S1'] })
  })
})

const byTarget = (a: any, b: any) => `${a.target.kind}:${a.target.id}`.localeCompare(`${b.target.kind}:${b.target.id}`)
