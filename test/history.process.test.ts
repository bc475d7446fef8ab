import { describe, expect, it } from 'bun:test'
import { openDb } from '../src/db'
import { openPostgres } from '../src/db/postgres'
import { replicas, startServer } from './process'

// History with the real process: the hourly clean-up prunes changes past HISTORY_DAYS without
// anyone calling it, and on PostgreSQL a revert on one replica while the other writes the same
// nodes is all or nothing.
const PG_URL = process.env.TEST_DATABASE_URL
const AGENT = { 'x-agent-id': 'bulk-bot' }

it('prunes changes older than HISTORY_DAYS in the running server', async () => {
  const first = await startServer({ HISTORY_DAYS: '1' })
  try {
    await first.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'P', id: 'prune-me' } } })
    await first.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId: 'prune-me', node: { type: 'goal', data: { label: 'Old' } } },
    })
    expect((await first.call('GET', '/api/v1/history?projectId=prune-me')).body.changes.length).toBe(1)
    await first.stop()
    // two days pass for that change
    const db = first.env.DATABASE_URL ? await openPostgres(first.env.DATABASE_URL) : await openDb({ dataDir: first.env.DATA_DIR! })
    await db.query("update changes set at = now() - interval '2 days'")
    await db.close()
    const again = await startServer({ HISTORY_DAYS: '1' }, first)
    try {
      await again.until(
        async () => (await again.call('GET', '/api/v1/history?projectId=prune-me')).body.changes?.length === 0,
        20_000,
        'pruned',
      )
    } finally {
      await again.stop()
    }
  } finally {
    await first.close()
  }
})

describe.if(!!PG_URL)('two replicas on one PostgreSQL', () => {
  const pair = replicas()

  it('reverts all or nothing while the other replica writes the same nodes', async () => {
    const { a, b } = pair
    await a.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'R', id: 'replicated' } } })
    for (let round = 0; round < 3; round++) {
      const added = await a.call('POST', '/api/v1/mutate', {
        headers: AGENT,
        body: {
          action: 'batch',
          projectId: 'replicated',
          mutations: Array.from({ length: 30 }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `r${round}-${i}` } } })),
        },
      })
      const ids: string[] = added.body.results.map((r: any) => r.nodeId)
      const requestId = (await a.call('GET', '/api/v1/history?projectId=replicated&limit=1')).body.changes[0].requestId
      const force = round === 2
      const [rev] = await Promise.all([
        a.call('POST', '/api/v1/mutate', { body: { action: 'revert', projectId: 'replicated', filter: { requestId }, force } }),
        ...ids.map((id, i) =>
          b.call('POST', '/api/v1/mutate', {
            body: { action: 'update', projectId: 'replicated', nodeId: id, data: { label: `edit ${i}` } },
          }),
        ),
      ])
      const left = (await b.call('GET', '/api/v1/nodes?projectId=replicated')).body.nodes.filter((x: any) => ids.includes(x.id)).length
      const reverted = (await b.call('GET', `/api/v1/history?projectId=replicated&limit=200`)).body.changes.filter(
        (c: any) => c.action === 'revert' && ids.includes(c.target.id),
      ).length
      if (rev!.status === 200) expect({ round, left, reverted }).toEqual({ round, left: 0, reverted: 30 })
      else
        expect({ round, status: rev!.status, error: rev!.body.error, left, reverted }).toEqual({
          round,
          status: 409,
          error: 'revert_conflict',
          left: 30,
          reverted: 0,
        })
      if (force) expect(rev!.status).toBe(200)
    }
  })
})
