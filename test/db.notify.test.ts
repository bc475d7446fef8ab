import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Db } from '../src/db'
import { openPostgres } from '../src/db/postgres'
import { freshDatabase } from './process'

// src/db/postgres.ts: a transaction's notifications go out in one statement sent with its commit
// (one round trip, issue 51, 3). A notification that fails there still fails the write: the
// COMMIT behind it rolls the transaction back, and db.tx rejects with its error.
const onPostgres = !!process.env.TEST_DATABASE_URL

describe.skipIf(!onPostgres)('notifications inside a transaction, on PostgreSQL', () => {
  let db: Db
  let drop: () => Promise<void>
  const heard: string[] = []
  beforeAll(async () => {
    const fresh = await freshDatabase({ empty: true })
    drop = fresh.drop
    db = await openPostgres(fresh.env.DATABASE_URL!)
    await db.exec('create table t (v int)')
    await db.listen('s51_notify', { message: (p) => heard.push(p), up() {}, down() {} })
  })
  afterAll(async () => {
    await db.close()
    await drop()
  })

  const until = async (ok: () => boolean) => {
    for (let i = 0; i < 200 && !ok(); i++) await Bun.sleep(25)
  }

  it('are heard at the commit, in their order, an identical one once', async () => {
    await db.tx(async (tx) => {
      await tx.query('insert into t values (1)')
      await tx.notify('s51_notify', 'one')
      await tx.notify('s51_notify', 'two')
      await tx.notify('s51_notify', 'one')
    })
    await until(() => heard.length >= 2)
    expect(heard).toEqual(['one', 'two'])
  })

  it('roll the transaction back when one fails, and the write rejects with its error', async () => {
    const failed = db.tx(async (tx) => {
      await tx.query('insert into t values (2)')
      await tx.notify('s51_notify', 'x'.repeat(9000)) // over PostgreSQL's 8,000-byte payload limit
    })
    await expect(failed).rejects.toThrow('payload string too long')
    expect(await db.query('select v from t order by v')).toEqual([{ v: 1 }])
  })
})
