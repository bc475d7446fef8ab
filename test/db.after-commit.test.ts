import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Db } from '../src/db'
import { openPglite } from '../src/db/pglite'
import { openPostgres } from '../src/db/postgres'
import { freshDatabase } from './process'

// src/db/port.ts `afterCommit`: what a write sets going once it is durable (the loops woken,
// src/mutate/sequence.ts). It runs after the commit, once, never on a rollback; a nested
// transaction's runs after the outer one's commit; outside a transaction, at once. On PostgreSQL,
// a transaction run again after a deadlock runs it once, for the run that committed. The
// database of TEST_DATABASE_URL when set, else PGlite.
const onPostgres = !!process.env.TEST_DATABASE_URL

describe(`afterCommit, on ${onPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  let db: Db
  let drop: () => Promise<void>
  beforeAll(async () => {
    const fresh = await freshDatabase({ empty: true })
    drop = fresh.drop
    db = onPostgres ? await openPostgres(fresh.env.DATABASE_URL!) : await openPglite(fresh.env.DATA_DIR!)
    await db.exec('create table t (v int primary key)')
  }, 60_000)
  afterAll(async () => {
    await db.close()
    await drop()
  })

  it('runs once the transaction has committed, what it wrote then readable', async () => {
    const seen: number[][] = []
    const during: number[] = []
    await db.tx(async (tx) => {
      await tx.query('insert into t values (1)')
      tx.afterCommit(() => during.push(seen.length))
      tx.afterCommit(() => void db.query<{ v: number }>('select v from t').then((rows) => seen.push(rows.map((r) => r.v))))
      // a nested transaction joins the outer one: its afterCommit waits for the outer commit
      await tx.tx(async (inner) => inner.afterCommit(() => during.push(-1)))
      expect(during).toEqual([])
    })
    expect(during).toEqual([0, -1])
    for (let i = 0; i < 100 && seen.length === 0; i++) await Bun.sleep(10)
    expect(seen).toEqual([[1]])
  })

  it('never runs on a rollback', async () => {
    let ran = 0
    const failed = db.tx(async (tx) => {
      await tx.query('insert into t values (2)')
      tx.afterCommit(() => ran++)
      throw new Error('refused')
    })
    await expect(failed).rejects.toThrow('refused')
    expect(ran).toBe(0)
  })

  it.skipIf(!onPostgres)('runs once for a transaction run again after a deadlock, for the run that committed', async () => {
    const ran: number[] = []
    let attempt = 0
    await db.tx(async (tx) => {
      const run = ++attempt
      tx.afterCommit(() => ran.push(run))
      // the first run is rolled back as a deadlock's victim would be (SQLSTATE 40P01), and run again
      if (run === 1) await tx.query("do $$ begin raise exception 'victim' using errcode = '40P01'; end $$")
    })
    expect([attempt, ran]).toEqual([2, [2]])
  })

  it('outside a transaction, runs at once', () => {
    let ran = 0
    db.afterCommit(() => ran++)
    expect(ran).toBe(1)
  })
})
