import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { projectWithBatches, type ServerProcess, startServer } from './process'

/**
 * A batch run by another write (a workflow's terminal apply, a proposal's preview) keeps the work
 * state's contract as POST /mutate's batch of the same entries does (agents-and-app.md, 1-3):
 * seen from outside, through the real server process. A task-curate apply that deletes a claimed
 * do-it task and promotes a task into a job that blocks other work leaves GET /ready, its _meta,
 * the claim, the events and a held GET /events as the batch leaves them in a twin project. On
 * PostgreSQL, such a write and an agent's write of the same work at once both land: the other
 * write takes the project's work lock before it locks a node row, as POST /mutate's batch does.
 */
const onPostgres = !!process.env.TEST_DATABASE_URL

let server: ServerProcess
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const mutate = (body: Record<string, unknown>) => server.call('POST', '/api/v1/mutate', { body })
const workflow = (body: Record<string, unknown>) => server.call('POST', '/api/v1/workflow', { body })

/** A new project with these batches written, one after the other. */
const newProject = (...batches: Record<string, unknown>[][]) => projectWithBatches(server, 'ww', ...batches)

/**
 * goal-1 › need-1 › approach-1 (job-1, done) and approach-2 (blocked by approach-1; job-2, ready
 * as approach-1's jobs are all done); task-1, task-2, task-3 (do-it), task-4 in the inbox.
 */
const CURATE_TREE = [
  { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Teams adopt the product' } } },
  { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Managers cannot see progress' } } },
  { action: 'add', node: { id: 'draft-a1', type: 'approach', parentId: 'draft-n', data: { label: 'Weekly summary e-mail' } } },
  {
    action: 'add',
    node: { type: 'approach', parentId: 'draft-n', data: { label: 'Live dashboard', blockedBy: ['draft-a1'] } },
  },
  { action: 'add', node: { type: 'job', parentId: 'draft-a1', data: { label: 'The summary is sent', status: 'done' } } },
  { action: 'add', node: { type: 'job', parentId: 'approach-2', data: { label: 'The dashboard shows the week' } } },
  { action: 'add', node: { type: 'task', data: { label: 'Export to CSV' } } },
  { action: 'add', node: { type: 'task', data: { label: 'CSV export please' } } },
  { action: 'add', node: { type: 'task', data: { label: 'Fix the typo on the pricing page' } } },
  { action: 'add', node: { type: 'task', data: { label: 'Weekly digest by Slack' } } },
]
/** Every task's kind set (a task is added without one), so the classifier leaves them alone: task-3 do-it, the others memos. */
const CURATE_KINDS = ['task-1', 'task-2', 'task-3', 'task-4'].map((nodeId) => ({
  action: 'update',
  nodeId,
  data: { kind: nodeId === 'task-3' ? 'do-it' : 'memo' },
}))

/** The curate answer: task-2 merged into task-1, the claimed task-3 discarded, task-4 promoted to a job under approach-1. */
const CURATE_ACTIONS = [
  { taskId: 'task-2', action: 'merge', intoTaskId: 'task-1' },
  { taskId: 'task-3', action: 'discard' },
  { taskId: 'task-4', action: 'promote', nodes: [{ id: 'draft-1', type: 'job', parentId: 'approach-1', data: {} }] },
]

/** The same entries as POST /mutate's batch, in the order the curate plan writes them (updates and adds, then deletes). */
const CURATE_BATCH = [
  { action: 'update', nodeId: 'task-1', data: { description: 'CSV export please' } },
  { action: 'add', node: { id: 'draft-1', type: 'job', parentId: 'approach-1', data: { label: 'Weekly digest by Slack' } } },
  { action: 'delete', nodeId: 'task-2' },
  { action: 'delete', nodeId: 'task-3' },
  { action: 'delete', nodeId: 'task-4' },
]

/** goal-1 › need-1 › approach-1 › job-1, job-2: two ready jobs. */
const JOBS_TREE = [
  { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Teams adopt the product' } } },
  { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Managers cannot see progress' } } },
  { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Weekly summary e-mail' } } },
  { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'A manager receives the summary' } } },
  { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'The summary lists every finished job' } } },
]

/** The project's feed, once it shows at least `count` events (an event shows once older transactions have ended). */
async function feed(projectId: string, count: number, after?: string) {
  return server.until(async () => {
    const res = await server.call('GET', `/api/v1/events?projectId=${projectId}${after ? `&after=${after}` : ''}`)
    return res.status === 200 && res.body.events.length >= count ? res.body : null
  }, 60_000)
}

const ready = async (projectId: string) => {
  const res = await server.call('GET', `/api/v1/ready?projectId=${projectId}`)
  expect(res.status).toBe(200)
  return {
    ids: res.body.items.map((i: { node: { id: string } }) => i.node.id),
    total: res.body._meta.total,
    claimed: res.body._meta.claimed,
    blocked: res.body._meta.blocked,
  }
}

/** Each event as its name and the node or claim it is about. */
const eventsOf = (events: { event: string; node?: { id: string }; nodeId?: string; payload?: { nodeId?: string } }[]) =>
  events.map((e) => `${e.event} ${e.node?.id ?? e.nodeId ?? e.payload?.nodeId ?? ''}`.trim())

/**
 * A project of CURATE_TREE with task-3 claimed by an agent, a GET /events held open on it, then
 * `write`; what an agent sees after: the claim, GET /ready and its _meta, the events, the held request.
 */
async function curatedBy(write: (projectId: string) => Promise<{ status: number; body: any }>) {
  const projectId = await newProject(CURATE_TREE, CURATE_KINDS)
  const claimed = await mutate({ action: 'claim', projectId, agent: 'fixer@laptop', nodeIds: ['task-3'] })
  expect(claimed.status).toBe(200)
  const token = claimed.body.claims[0].claimToken as string
  const before = await ready(projectId)
  // the setup's events all shown: the tree's adds, the kinds set, the claim
  const cursor = (await feed(projectId, CURATE_TREE.length + CURATE_KINDS.length + 1)).nextCursor as string
  // every event so far read: a request held from here on is answered by the write's commit
  const allSoFar = await server.call('GET', `/api/v1/events?projectId=${projectId}&after=${cursor}`)
  expect(allSoFar.body.events).toEqual([])
  const held = server.call('GET', `/api/v1/events?projectId=${projectId}&after=${cursor}&wait=60`)
  const res = await write(projectId)
  expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({ status: 200, body: 'ok' })
  const woken = await held
  const after = await ready(projectId)
  const renewed = await mutate({ action: 'renewClaim', projectId, claimToken: token })
  const events = eventsOf((await feed(projectId, CURATE_BATCH.length, cursor)).events)
  return {
    before,
    after,
    claim: { status: renewed.status, error: renewed.body.error },
    events,
    woken: { status: woken.status, some: woken.body.events.length > 0 },
  }
}

describe('a workflow apply keeps the work state as POST /mutate batch does', () => {
  it('task-curate deleting a claimed do-it task and promoting a task into a blocking job: claim, /ready, _meta and events as the batch', async () => {
    const byWorkflow = await curatedBy(async (projectId) => {
      const started = await workflow({ projectId, action: 'start', flow: 'task-curate' })
      expect(started.status).toBe(200)
      return workflow({
        projectId,
        action: 'advance',
        state: started.body.state,
        response: { signal: 'draft_ready', message: 'Merged, discarded, promoted.', actions: CURATE_ACTIONS },
      })
    })
    const byBatch = await curatedBy((projectId) => mutate({ action: 'batch', projectId, mutations: CURATE_BATCH }))
    // before: job-2 ready (approach-1's one job is done), task-3 held by the agent
    expect(byWorkflow.before).toEqual({ ids: ['job-2'], total: 1, claimed: 1, blocked: 0 })
    // after: task-3 and its claim gone; the promoted job-3 ready under approach-1, which now blocks job-2
    expect(byWorkflow.after).toEqual({ ids: ['job-3'], total: 1, claimed: 0, blocked: 1 })
    expect(byWorkflow.claim).toEqual({ status: 409, error: 'claim_lost' })
    expect(byWorkflow.woken).toEqual({ status: 200, some: true })
    expect(byWorkflow.events).toEqual([
      'node.updated task-1',
      'node.added job-3',
      'node.deleted task-2',
      'node.deleted task-3',
      'node.deleted task-4',
    ])
    expect(byWorkflow).toEqual(byBatch)
  })
})

describe("a proposal's preview checks claim tokens as its batch would, and keeps nothing of them", () => {
  it('a released claim token refuses the propose (409 claim_lost); a live one is checked, not renewed', async () => {
    const projectId = await newProject(JOBS_TREE)
    const claim = async (nodeId: string) => {
      const res = await mutate({ action: 'claim', projectId, agent: 'builder@ci', nodeIds: [nodeId] })
      expect(res.status).toBe(200)
      return res.body.claims[0] as { claimToken: string; expiresAt: string }
    }
    const released = await claim('job-2')
    expect((await mutate({ action: 'releaseClaim', projectId, claimToken: released.claimToken })).status).toBe(200)
    const live = await claim('job-1')
    const propose = (nodeId: string, claimToken: string) =>
      mutate({
        action: 'propose',
        projectId,
        title: 'Close it',
        mutations: [{ action: 'update', nodeId, claimToken, data: { status: 'done' } }],
      })
    const refused = await propose('job-2', released.claimToken)
    expect({ status: refused.status, error: refused.body.error }).toEqual({ status: 409, error: 'claim_lost' })
    // a later ms than the claim's: a renewal kept would move its expiry
    await server.until(async () => Date.now() > Date.parse(live.expiresAt) - 900_000 + 5)
    const accepted = await propose('job-1', live.claimToken)
    expect(accepted.status).toBe(200)
    const nodes = (await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes as {
      id: string
      data: { status?: string }
      claim?: { expiresAt: string }
    }[]
    const job1 = nodes.find((n) => n.id === 'job-1')!
    expect({ status: job1.data.status, expiresAt: job1.claim?.expiresAt }).toEqual({ status: undefined, expiresAt: live.expiresAt })
  })
})

/**
 * On PostgreSQL: `other` (a workflow's apply, a proposal's preview) runs at once with an agent
 * marking its claimed job-1 done through POST /mutate, both writing job-1. The order is forced
 * from outside: the test holds the project's work lock (sql/work/lock-project.sql's key), the
 * agent's write queues for it first, then `other`; the lock is let go. POST /mutate's writes take
 * the lock before any node row; a write that took it only in the work-state triggers, after its
 * rows, would hold job-1 while waiting for the lock the agent's write holds while waiting for
 * job-1: a deadlock, one of the two refused with a 500.
 */
describe.skipIf(!onPostgres)('at once with an agent finishing its claimed job (PostgreSQL)', () => {
  async function raced(other: (projectId: string) => Promise<() => Promise<{ status: number; body: any }>>) {
    const { default: postgres } = await import('postgres')
    const sql = postgres(server.env.DATABASE_URL!, { max: 2, onnotice: () => {} })
    try {
      const projectId = await newProject(JOBS_TREE)
      const claimed = await mutate({ action: 'claim', projectId, agent: 'builder@ci', nodeIds: ['job-1'] })
      expect(claimed.status).toBe(200)
      const token = claimed.body.claims[0].claimToken as string
      const send = await other(projectId)
      const waiting = (n: number) =>
        server.until(async () => {
          // the requests queued for this project's work lock (a bigint key: classid its high half, objid its low)
          const [row] = await sql`select count(*)::int as n from pg_locks
            where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())
              and ((classid::bigint << 32) | objid::bigint) = hashtextextended(${`arbor.unblock:${projectId}`}, 0)`
          return row!.n >= n
        }, 60_000)
      let letGo!: () => void
      const released = new Promise<void>((resolve) => {
        letGo = resolve
      })
      let locked!: () => void
      const isLocked = new Promise<void>((resolve) => {
        locked = resolve
      })
      const holding = sql.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(hashtextextended(${`arbor.unblock:${projectId}`}, 0))`
        locked()
        await released
      })
      await isLocked
      const agent = mutate({ action: 'update', projectId, nodeId: 'job-1', claimToken: token, data: { status: 'done' } })
      await waiting(1)
      const second = send()
      await waiting(2)
      letGo()
      await holding
      const [byAgent, byOther] = await Promise.all([agent, second])
      return { projectId, agent: byAgent, other: byOther }
    } finally {
      await sql.end()
    }
  }

  it('phase-assign moving the claimed job into a phase: both land, the job done, its claim ended, in the new phase', async () => {
    const { projectId, agent, other } = await raced(async (projectId) => {
      const started = await workflow({ projectId, action: 'start', flow: 'phase-assign' })
      expect(started.status).toBe(200)
      return () =>
        workflow({
          projectId,
          action: 'advance',
          state: started.body.state,
          response: {
            signal: 'draft_ready',
            message: 'One phase.',
            phases: [{ name: 'Managers see progress', jobIds: ['job-1', 'job-2'] }],
          },
        })
    })
    expect({ agent: agent.status, agentError: agent.body.error, other: other.status, otherError: other.body.error }).toEqual({
      agent: 200,
      agentError: undefined,
      other: 200,
      otherError: undefined,
    })
    const nodes = (await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes as {
      id: string
      data: Record<string, unknown>
      claim?: unknown
    }[]
    const job1 = nodes.find((n) => n.id === 'job-1')!
    expect({ status: job1.data.status, iteration: job1.data.iteration, claim: job1.claim }).toEqual({
      status: 'done',
      iteration: 'Managers see progress',
      claim: undefined,
    })
    expect(await ready(projectId)).toEqual({ ids: ['job-2'], total: 1, claimed: 0, blocked: 0 })
  })

  it('a proposal previewing job-1 done: both land, the proposal stored, job-1 done by the agent', async () => {
    const { projectId, agent, other } = await raced(
      async (projectId) => () =>
        mutate({
          action: 'propose',
          projectId,
          title: 'Close the summary work',
          mutations: [
            { action: 'update', nodeId: 'job-1', data: { status: 'done' } },
            { action: 'update', nodeId: 'job-2', data: { status: 'done' } },
          ],
        }),
    )
    expect({ agent: agent.status, agentError: agent.body.error, other: other.status, otherError: other.body.error }).toEqual({
      agent: 200,
      agentError: undefined,
      other: 200,
      otherError: undefined,
    })
    const proposals = (await server.call('GET', `/api/v1/proposals?projectId=${projectId}`)).body.proposals as { status: string }[]
    expect(proposals.map((p) => p.status)).toEqual(['open'])
    const nodes = (await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes as {
      id: string
      data: { status?: string }
    }[]
    expect(nodes.filter((n) => n.data.status === 'done').map((n) => n.id)).toEqual(['job-1'])
  })
})
