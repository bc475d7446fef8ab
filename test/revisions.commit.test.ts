import { afterAll, describe, expect, it } from 'bun:test'
import { startApp } from './helpers'

// A project's revision advances once per transaction that recorded changes or events, at its
// commit (migrations 0013, 0019). Since migration 0030 the deferred trigger is queued for the
// first row of each project in the transaction only (its WHEN marks the project), not for every
// row: the count it keeps must not change, savepoints included.
const app = await startApp()
afterAll(() => app.close())

const revision = async (p: string) =>
  Number((await app.db.query<{ revision: string }>(`select revision::text from project_revisions where project_id = $1`, [p]))[0]?.revision ?? 0)

const change = (p: string, id: string) =>
  `insert into changes (project_id, via, request_id, action, target_kind, target_id, target_type, fields)
   values ('${p}', 'api', 'r', 'update', 'node', '${id}', 'goal', '[]')`
const event = (p: string) => `insert into events (project_id, type, payload) values ('${p}', 'node.updated', '{}')`

describe('the revision at the commit', () => {
  it('advances once for a batch of 100 adds (100 changes and 100 events)', async () => {
    const p = await app.project()
    const before = await revision(p)
    const res = await app.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: p,
        mutations: Array.from({ length: 100 }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `G${i}` } } })),
      },
    })
    expect(res.body.success).toBe(true)
    expect(await revision(p)).toBe(before + 1)
  })

  it('advances each project written once, whatever the number of rows, and none after a rollback', async () => {
    const [p, q, r] = [await app.project(), await app.project(), await app.project()]
    const before = { p: await revision(p), q: await revision(q), r: await revision(r) }
    await app.db.tx(async (tx) => {
      for (let i = 0; i < 5; i++) await tx.exec(`${change(p, `goal-${i}`)}; ${event(p)}; ${event(q)}`)
    })
    expect({ p: await revision(p), q: await revision(q), r: await revision(r) }).toEqual({ p: before.p + 1, q: before.q + 1, r: before.r })
    await app.db
      .tx(async (tx) => {
        await tx.exec(`${change(r, 'goal-1')}; ${event(r)}`)
        throw new Error('rolled back')
      })
      .catch(() => {})
    expect(await revision(r)).toBe(before.r)
  })

  it('advances a project whose first row went with a savepoint rolled back, when a later row of it stays', async () => {
    const [p, q] = [await app.project(), await app.project()]
    const before = { p: await revision(p), q: await revision(q) }
    await app.db.tx(async (tx) => {
      await tx.exec(`${event(q)}; savepoint s; ${event(p)}; ${change(p, 'goal-1')}; rollback to savepoint s`)
      await tx.exec(event(p))
    })
    expect({ p: await revision(p), q: await revision(q) }).toEqual({ p: before.p + 1, q: before.q + 1 })
    await app.db.tx(async (tx) => {
      await tx.exec(`savepoint s; ${event(p)}; rollback to savepoint s`)
      await tx.exec(event(q))
    })
    expect({ p: await revision(p), q: await revision(q) }).toEqual({ p: before.p + 1, q: before.q + 2 })
  })
})
