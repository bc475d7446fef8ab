import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Db } from '../src/db'
import { openPostgres } from '../src/db/postgres'
import { freshDatabase } from './process'

// src/db/postgres.ts `tx` (postgres.js's `begin`): what any change to how a transaction is sent
// must keep (issue 51, 3: a BEGIN sent with the first statement on a reserved connection was
// tried and taken back, bench/writes.md's ninth pass). The transaction is one (its statements
// see each other, others see it at the commit), a failure rolls it back, a statement that failed
// fails it even when the code caught the error, a statement sent after a failed one reports the
// failure that caused it, and the pool's connections stay usable.
const onPostgres = !!process.env.TEST_DATABASE_URL

describe.skipIf(!onPostgres)('a transaction on PostgreSQL', () => {
  let db: Db
  let drop: () => Promise<void>
  beforeAll(async () => {
    const fresh = await freshDatabase({ empty: true })
    drop = fresh.drop
    db = await openPostgres(fresh.env.DATABASE_URL!)
    await db.exec('create table t (v int primary key)')
  })
  afterAll(async () => {
    await db.close()
    await drop()
  })
  const values = async () => (await db.query<{ v: number }>('select v from t order by v')).map((r) => r.v)

  it('is one transaction from its first statement, seen by others at its commit', async () => {
    await db.tx(async (tx) => {
      await tx.query('insert into t values (1)')
      // another connection does not see it yet
      expect(await values()).toEqual([])
      // one transaction id for all its statements (each would have its own outside a transaction)
      const [{ xid }] = await tx.query<{ xid: string }>('select pg_current_xact_id()::text as xid')
      const [{ same }] = await tx.query<{ same: boolean }>('select pg_current_xact_id()::text = $1 as same', [xid])
      expect(same).toBe(true)
    })
    expect(await values()).toEqual([1])
  })

  it('rolls back when the code throws', async () => {
    await expect(
      db.tx(async (tx) => {
        await tx.query('insert into t values (2)')
        throw new Error('no')
      }),
    ).rejects.toThrow('no')
    expect(await values()).toEqual([1])
  })

  it('fails, rolled back, when a statement failed though the code caught its error', async () => {
    await expect(
      db.tx(async (tx) => {
        await tx.query('insert into t values (3)')
        await tx.query('insert into t values (1)').catch(() => {}) // a duplicate key, caught
      }),
    ).rejects.toThrow('duplicate key')
    expect(await values()).toEqual([1])
  })

  it('reports the failure that aborted it, not the statements after it', async () => {
    await expect(
      db.tx(async (tx) => {
        const early = tx.query('insert into t values (1)') // sent, not awaited yet
        early.catch(() => {})
        await tx.query('select 1')
      }),
    ).rejects.toThrow('duplicate key')
    expect(await values()).toEqual([1])
  })

  it('leaves its connection usable: many transactions, more than the pool holds, one after another and at once', async () => {
    for (let i = 0; i < 15; i++)
      await db
        .tx(async (tx) => {
          await tx.query('insert into t values ($1)', [100 + i])
          if (i % 3 === 0) throw new Error('undone')
        })
        .catch(() => {})
    await Promise.all(Array.from({ length: 25 }, (_, i) => db.tx((tx) => tx.query('insert into t values ($1)', [200 + i]))))
    const v = await values()
    expect(v.filter((x) => x >= 100 && x < 200)).toEqual([101, 102, 104, 105, 107, 108, 110, 111, 113, 114])
    expect(v.filter((x) => x >= 200)).toHaveLength(25)
  })
})
