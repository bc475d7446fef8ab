import { afterAll, describe, expect, it } from 'bun:test'
import recordSql from '../sql/webhooks/record-attempts.sql' with { type: 'text' }
import { maintain, pgliteMaintenanceLoop } from '../src/maintenance/loop'
import { loops } from '../src/scheduler'
import { fanOut } from '../src/webhooks/delivery'
import { startApp } from './helpers'
import { until } from './receiver'

// PGlite runs no autovacuum: the maintenance loop analyzes and vacuums the tables that drifted,
// as autovacuum does on a PostgreSQL server (where the loop does nothing).
const app = await startApp({ WEBHOOK_ALLOW_INSECURE: 'true' })
afterAll(() => app.close())
const pglite = app.db.kind === 'pglite'

const addTasks = (projectId: string, n: number) =>
  app.call('POST', '/api/v1/mutate', {
    body: {
      action: 'batch',
      projectId,
      mutations: Array.from({ length: n }, (_, i) => ({ action: 'add', node: { type: 'task', data: { label: `Task ${i}` } } })),
    },
  })

/** The plan of a statement prepared before (generic, cached: what our drivers' prepared statements keep). */
async function planOf(name: string): Promise<string> {
  const rows = await app.db.query<Record<string, string>>(`explain execute ${name}('[]'::jsonb)`)
  return rows.map((r) => Object.values(r)[0]).join('\n')
}

describe('PGlite maintenance', () => {
  it('is a scheduled loop', () => {
    expect(loops).toContain(pgliteMaintenanceLoop)
  })

  it.skipIf(!pglite)('analyzes a table that grew by a tenth, once; vacuums one whose dead rows passed a fifth', async () => {
    const p = await app.project()
    expect((await addTasks(p, 500)).status).toBe(200)
    // the statistics reach pg_stat_user_tables within a second
    const first = await until(async () => {
      const done = await maintain(app.db)
      return done.analyzed.includes('nodes') ? done : null
    }, 'nodes analyzed')
    expect(first.analyzed).toContain('events')
    expect(await maintain(app.db)).toEqual({ analyzed: [], vacuumed: [] })
    const ids = (await app.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes.map((n: { id: string }) => n.id)
    // 300 deletes in two batches: one batch of 300 is over PGlite's write budget (docs/reference/limits.md)
    for (const part of [ids.slice(0, 150), ids.slice(150, 300)]) {
      const del = await app.call('POST', '/api/v1/mutate', {
        body: { action: 'batch', projectId: p, mutations: part.map((nodeId: string) => ({ action: 'delete', nodeId })) },
      })
      expect(del.status).toBe(200)
    }
    const second = await until(async () => {
      const done = await maintain(app.db)
      return done.vacuumed.includes('nodes') ? done : null
    }, 'nodes vacuumed')
    expect(second.vacuumed).toContain('nodes')
  })

  it('recording outcomes looks deliveries up by primary key, from an empty table to a large one (it scanned every delivery)', async () => {
    const p = await app.project()
    // prepared once and kept, as the drivers keep their statements: a plan made for the empty
    // table must still suit it at 10,000 deliveries
    await app.db.exec(`set plan_cache_mode = force_generic_plan; prepare rec(jsonb) as ${recordSql.replace(/--[^\n]*\n/g, '')}`)
    try {
      const byKey = (plan: string) => {
        expect(plan).toMatch(/Index Scan (using|on) webhook_deliveries_pkey/)
        expect(plan).not.toMatch(/Seq Scan on webhook_deliveries/)
      }
      byKey(await planOf('rec'))
      for (let i = 0; i < 10; i++)
        await app.call('POST', '/api/v1/webhooks', { body: { projectId: p, url: `http://127.0.0.1:9/hook-${i}`, events: ['node.added'] } })
      await addTasks(p, 1000)
      await fanOut(app.deps, 0) // 10,000 deliveries, none claimed
      byKey(await planOf('rec'))
      await maintain(app.db)
      byKey(await planOf('rec'))
    } finally {
      await app.db.exec('deallocate rec; reset plan_cache_mode')
    }
  })

  it.skipIf(pglite)('does nothing on a PostgreSQL server, whose autovacuum does it', async () => {
    const p = await app.project()
    await addTasks(p, 200)
    // a fixed wait on purpose: past the time PGlite's maintenance would act, it must still do nothing here
    await Bun.sleep(1200)
    expect(await maintain(app.db)).toEqual({ analyzed: [], vacuumed: [] })
  })
})
