import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Db } from '../src/db'
import { openPostgres } from '../src/db/postgres'
import { freshDatabase } from './process'

// src/db/postgres.ts: the app's connections run with `jit = off`. A statement the planner costs
// above `jit_above_cost` (sql/nodes/subtree.sql under an approach of thousands of jobs: the
// recursion's estimate grows with the widest parent) was compiled to machine code on every run,
// about 100 ms each, for a run of well under a millisecond (bench/writes.md, "Twelfth pass: JIT").
const onPostgres = !!process.env.TEST_DATABASE_URL

describe.skipIf(!onPostgres)('JIT on PostgreSQL', () => {
  let db: Db
  let drop: () => Promise<void>
  beforeAll(async () => {
    const fresh = await freshDatabase({ empty: true })
    drop = fresh.drop
    db = await openPostgres(fresh.env.DATABASE_URL!)
  })
  afterAll(async () => {
    await db.close()
    await drop()
  })

  /** the plan of a query costed far above any JIT threshold, in a transaction that lowers them to 0 */
  const planOfCostly = (on: Db) =>
    on.tx(async (tx) => {
      await tx.exec('set local jit_above_cost = 0')
      await tx.exec('set local jit_inline_above_cost = 0')
      await tx.exec('set local jit_optimize_above_cost = 0')
      const rows = await tx.query<Record<string, string>>(
        'explain (analyze) select count(*) from generate_series(1, 1000) g where g % 7 = 0',
      )
      return rows.map((r) => Object.values(r)[0]).join('\n')
    })

  it('is off on the requests’ connections, the background ones and inside a transaction', async () => {
    const setting = async (on: Db) => (await on.query<{ jit: string }>(`select current_setting('jit') as jit`))[0]!.jit
    expect(await setting(db)).toBe('off')
    expect(await setting(db.background!)).toBe('off')
    expect(await db.tx((tx) => setting(tx))).toBe('off')
  })

  it('compiles nothing, however high a statement is costed', async () => {
    const plan = await planOfCostly(db)
    expect(plan).toContain('Aggregate')
    expect(plan).not.toContain('JIT:')
    expect(await planOfCostly(db.background!)).not.toContain('JIT:')
  })
})
