import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { projectWithBatches, type ServerProcess, startServer } from './process'

/**
 * Deadlocks on PostgreSQL, seen from outside through the real server process.
 *
 * 1. A batch that PostgreSQL rolls back as a deadlock's victim is run again by its transaction
 *    (src/db/postgres.ts `tx`), as every other write is: it answers 200, not a 500 "write failed
 *    (deadlock detected)" (src/nodes/batch.ts `BatchFailed` once wrapped the error, and the
 *    retry never saw it).
 * 2. A classify takes the project's work lock before it writes the task's row (its row's work
 *    plan, src/mutate/service.ts), so that it and a write that took the lock first and needs the
 *    task never deadlock; the classify loop, which cannot know a task's kind before it claims its
 *    row, only tries the lock for a task it makes a do-it (a memo takes none: migration 0055), and
 *    leaves it for a later round when another write holds the lock.
 *
 * On PGlite none of this can happen: it has one connection and runs one transaction at a time,
 * so no two writes ever wait for each other's locks, and no transaction is rolled back as a
 * deadlock's victim (the retry of src/db/postgres.ts is PostgreSQL's alone). The tests run on
 * PostgreSQL only (TEST_DATABASE_URL).
 */
const onPostgres = !!process.env.TEST_DATABASE_URL

let server: ServerProcess
beforeAll(async () => {
  if (onPostgres) server = await startServer()
})
afterAll(() => server?.close())

const mutate = (body: Record<string, unknown>) => server.call('POST', '/api/v1/mutate', { body })

/** goal-1 › need-1 › approach-1 › job-1, job-2. */
const JOBS_TREE = [
  { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Teams adopt the product' } } },
  { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Managers cannot see progress' } } },
  { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Weekly summary e-mail' } } },
  { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'A manager receives the summary' } } },
  { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'The summary lists every finished job' } } },
]

/** A new project with these batches written, one after the other. */
const newProject = (...batches: Record<string, unknown>[][]) => projectWithBatches(server, 'dl', ...batches)

const nodesOf = async (projectId: string) =>
  new Map(
    ((await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes as { id: string; data: Record<string, unknown> }[]).map(
      (n) => [n.id, n.data],
    ),
  )

/** The server's log lines saying a transaction was rolled back by PostgreSQL and run again (src/db/postgres.ts). */
const retries = () =>
  server
    .output()
    .split('\n')
    .filter((l) => l.includes('running it again')).length

describe.skipIf(!onPostgres)('deadlocks on PostgreSQL', () => {
  /** A second connection to the server's database: the test's own transactions, and pg_locks. */
  async function withSql<T>(fn: (sql: any, projectLock: (projectId: string) => string) => Promise<T>): Promise<T> {
    const { default: postgres } = await import('postgres')
    const sql = postgres(server.env.DATABASE_URL!, { max: 4, onnotice: () => {} })
    try {
      return await fn(sql, (projectId) => `arbor.unblock:${projectId}`)
    } finally {
      // a test that failed midway may leave its transactions open: closed after 5 s, rolled back
      await sql.end({ timeout: 5 })
    }
  }

  /** How many transactions wait for the project's work lock (a bigint key: classid its high half, objid its low). */
  const queued = async (sql: any, key: string) => {
    const [row] = await sql`select count(*)::int as n from pg_locks
      where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())
        and ((classid::bigint << 32) | objid::bigint) = hashtextextended(${key}, 0)`
    return row!.n as number
  }
  /** Until `n` transactions wait for the project's work lock. */
  const waitingFor = (sql: any, key: string, n: number) => server.until(async () => (await queued(sql, key)) >= n, 60_000)

  /** Holds the project's work lock until the function it returns is called (a transaction of its own). */
  async function holdLock(sql: any, key: string) {
    let letGo!: () => void
    const released = new Promise<void>((resolve) => {
      letGo = resolve
    })
    let locked!: () => void
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve
    })
    const holding = sql.begin(async (tx: any) => {
      await tx`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`
      locked()
      await released
    })
    await isLocked
    return async () => {
      letGo()
      await holding
    }
  }

  const deadlocks = async (sql: any) => {
    const [row] = await sql`select deadlocks::int as n from pg_stat_database where datname = current_database()`
    return row!.n as number
  }

  /**
   * The order is forced from outside. The test holds the project's work lock; the batch (which
   * takes the lock before any node row) queues for it; a transaction of the test locks job-2's
   * row and then asks for the work lock, the order of a write whose triggers take the lock after
   * its rows (a classify did, so did the workflow's apply), queued behind the batch; the lock is
   * let go. The batch gets it, updates need-1 and deletes approach-1 with its jobs, and waits for
   * job-2 (its entry's delete: the rows its entries name are read ahead, a deleted node's subtree
   * only as its entry runs), whose holder waits for the lock the batch holds: a deadlock for certain. That transaction checks for one only after
   * an hour (deadlock_timeout, its own): PostgreSQL finds the deadlock from the batch's side, 1 s
   * after it began to wait, and rolls the batch back; the other transaction then gets the lock
   * and commits, and the batch, run again, lands.
   */
  it('a batch rolled back as a deadlock victim is run again: 200, its writes and the other transaction both land', async () => {
    const projectId = await newProject(JOBS_TREE)
    await withSql(async (sql, projectLock) => {
      const key = projectLock(projectId)
      const before = { deadlocks: await deadlocks(sql), retries: retries() }
      const release = await holdLock(sql, key)
      const batch = mutate({
        action: 'batch',
        projectId,
        mutations: [
          { action: 'update', nodeId: 'need-1', data: { label: 'Managers cannot see the week' } },
          { action: 'delete', nodeId: 'approach-1' },
        ],
      })
      await waitingFor(sql, key, 1)
      let rowLocked!: () => void
      const hasRow = new Promise<void>((resolve) => {
        rowLocked = resolve
      })
      const other = sql.begin(async (tx: any) => {
        await tx.unsafe(`set local deadlock_timeout = '1h'`)
        await tx`select id from nodes where project_id = ${projectId} and id = 'job-2' for update`
        rowLocked()
        await tx`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`
        return 'committed'
      })
      await hasRow
      await waitingFor(sql, key, 2)
      await release()
      const [res, otherOutcome] = await Promise.all([batch, other])
      expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({ status: 200, body: 'ok' })
      expect(otherOutcome).toBe('committed')
      const nodes = await nodesOf(projectId)
      expect({ ids: [...nodes.keys()].sort(), need: nodes.get('need-1')?.label }).toEqual({
        ids: ['goal-1', 'need-1'],
        need: 'Managers cannot see the week',
      })
      // the batch was rolled back once as PostgreSQL's deadlock victim, and run again
      await server.until(async () => (await deadlocks(sql)) > before.deadlocks, 60_000, 'the deadlock counted in pg_stat_database')
      await server.until(async () => retries() > before.retries, 60_000, 'the retry in the log')
      // its events once: the rolled-back attempt left none
      const feed = await server.until(async () => {
        const r = await server.call('GET', `/api/v1/events?projectId=${projectId}`)
        return r.body.events?.length >= JOBS_TREE.length + 4 ? r.body.events : null
      }, 60_000)
      expect(
        feed
          .slice(JOBS_TREE.length)
          .map((e: { event: string; node?: { id: string }; nodeId?: string }) => `${e.event} ${e.node?.id ?? e.nodeId}`),
      ).toEqual(['node.updated need-1', 'node.deleted approach-1', 'node.deleted job-1', 'node.deleted job-2'])
    })
  })

  /**
   * A classify of task-1 (kept a memo by hand, its label a do-it's: the classification makes it
   * work) while a batch that took the work lock first waits to write task-1. The test holds the
   * lock; the batch queues for it, then the classify. A classify that wrote the task's row before
   * the lock (its triggers taking the lock) held task-1 while waiting for the lock the batch then
   * got, and the batch waited for task-1: a deadlock, one of the two rolled back and run again
   * (the server logs it). Taking the lock first, it holds nothing while it waits: no deadlock.
   */
  it('a classify and a batch writing the same task: both 200, no deadlock, the batch first and the classification of its label', async () => {
    const projectId = await newProject([{ action: 'add', node: { type: 'task', data: { label: 'Fix the login bug before Friday' } } }])
    const kept = await mutate({ action: 'update', projectId, nodeId: 'task-1', data: { kind: 'memo' } })
    expect(kept.status).toBe(200)
    await withSql(async (sql, projectLock) => {
      const key = projectLock(projectId)
      const before = retries()
      const release = await holdLock(sql, key)
      const batch = mutate({
        action: 'batch',
        projectId,
        mutations: [{ action: 'update', nodeId: 'task-1', data: { label: 'Fix the login bug on staging before Friday' } }],
      })
      await waitingFor(sql, key, 1)
      const classified = mutate({ action: 'classify', projectId, nodeId: 'task-1' })
      await waitingFor(sql, key, 2)
      await release()
      const [byBatch, byClassify] = await Promise.all([batch, classified])
      expect({ batch: byBatch.status, classify: byClassify.status }).toEqual({ batch: 200, classify: 200 })
      // the batch wrote first (it queued first), the classify read its label
      expect({ label: byClassify.body.node.data.label, kind: byClassify.body.node.data.kind }).toEqual({
        label: 'Fix the login bug on staging before Friday',
        kind: 'do-it',
      })
      const ready = await server.call('GET', `/api/v1/ready?projectId=${projectId}`)
      expect(ready.body.items.map((i: { node: { id: string } }) => i.node.id)).toEqual(['task-1'])
      expect(retries()).toBe(before)
    })
  })

  /**
   * The classify loop (src/nodes/classify-loop.ts) while a batch that took the work lock first
   * waits to write task-1. The test holds the lock; the batch (naming task-1, not yet added: its
   * entries are read once it has the lock) queues for it; task-1 is added, a do-it's label, which
   * wakes the loop. A loop that classified it while the lock was held wrote the task's row, then
   * waited for the lock in the work state's trigger, holding task-1, which the batch, once it had
   * the lock, waited for: a deadlock, one of the two rolled back and run again (the server logs
   * it). The loop now tries the lock and, held by another write, leaves the task for a later round.
   */
  it('the classify loop and a batch writing the same task: no deadlock, the batch 200, the task classified a do-it after it', async () => {
    const projectId = await newProject(JOBS_TREE)
    await withSql(async (sql, projectLock) => {
      const key = projectLock(projectId)
      const before = retries()
      const release = await holdLock(sql, key)
      const batch = mutate({
        action: 'batch',
        projectId,
        mutations: [{ action: 'update', nodeId: 'task-1', data: { description: 'Seen on staging' } }],
      })
      await waitingFor(sql, key, 1)
      const added = await mutate({ action: 'add', projectId, node: { type: 'task', data: { label: 'Fix the login bug before Friday' } } })
      expect(added.status).toBe(200)
      // the loop looked at task-1 while the lock was held: it waits for the lock (before this
      // change), or two of its rounds ended since the add, task-1 still unclassified
      const runs = async () => {
        const text = await (await fetch(`${server.url}/metrics`)).text()
        return Number(/^arbor_loop_runs_total\{loop="classify-tasks",outcome="ok"\} (\d+)/m.exec(text)?.[1] ?? 0)
      }
      const ran = await runs()
      await server.until(async () => (await queued(sql, key)) >= 2 || (await runs()) >= ran + 2, 60_000)
      expect((await nodesOf(projectId)).get('task-1')?.kind).toBeUndefined()
      await release()
      const res = await batch
      expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({ status: 200, body: 'ok' })
      // a later round classifies it
      const task = await server.until(async () => {
        const t = (await nodesOf(projectId)).get('task-1')
        return t?.kind ? t : null
      }, 60_000)
      expect({ kind: task.kind, description: task.description }).toEqual({ kind: 'do-it', description: 'Seen on staging' })
      const ready = await server.call('GET', `/api/v1/ready?projectId=${projectId}`)
      expect(ready.body.items.map((i: { node: { id: string } }) => i.node.id)).toContain('task-1')
      expect(retries()).toBe(before)
    })
  })
})
