import { describe, expect, it } from 'bun:test'
import { openPglite } from '../src/db/pglite'

/**
 * src/db/pglite-prepared.ts runs a transaction's BEGIN and COMMIT itself, as prepared statements,
 * instead of through PGlite's transaction(): what that did must still hold.
 */
// Only PGlite, whatever TEST_DATABASE_URL says: on CI's PostgreSQL pass it would do again exactly
// what the PGlite pass just did, so it runs on the PGlite pass alone (test/db.postgres-tx holds
// the transactions of PostgreSQL).
describe.skipIf(!!process.env.TEST_DATABASE_URL)('a transaction on PGlite', () => {
  it('commits, rolls back on a throw, runs exec inside, and refuses to report a failed transaction as committed', async () => {
    const db = await openPglite(null)
    try {
      await db.exec('create table t (id int primary key)')
      expect(await db.tx(async (tx) => (await tx.query<{ id: number }>('insert into t values (1) returning id'))[0]!.id)).toBe(1)

      const thrown = await db
        .tx(async (tx) => {
          await tx.query('insert into t values (2)')
          throw new Error('no')
        })
        .catch((e: Error) => e.message)
      expect(thrown).toBe('no')

      // several statements through exec, inside the transaction (as migrations and a restore run them)
      await db.tx(async (tx) => {
        await tx.exec('insert into t values (3); insert into t values (4)')
        expect(await tx.query('select count(*)::int as n from t')).toEqual([{ n: 3 }])
      })

      // a statement failed and its error was caught: the server answers the COMMIT with ROLLBACK
      const failed = await db
        .tx(async (tx) => {
          await tx.query('insert into t values (5)')
          await tx.query('insert into t values (1)').catch(() => undefined)
          return 'returned'
        })
        .catch((e: { code?: string }) => e.code)
      expect(failed).toBe('25P02')

      // a deferred check failing at the commit rejects the transaction with its error
      await db.exec('create table d (id int primary key, up int references d (id) deferrable initially deferred)')
      const atCommit = await db.tx((tx) => tx.query('insert into d values (1, 99)')).catch((e: { code?: string }) => e.code)
      expect(atCommit).toBe('23503')

      // BEGIN goes with the first statement: one that fails to parse leaves no transaction open,
      // and a transaction that sends nothing still returns its result
      const unparsed = await db.tx((tx) => tx.query('insert into t valuez (6)')).catch((e: { code?: string }) => e.code)
      expect(unparsed).toBe('42601')
      expect(await db.tx(async () => 'nothing sent')).toBe('nothing sent')
      expect(await db.query('select count(*)::int as n from t')).toEqual([{ n: 3 }])

      expect(await db.query('select id from t order by id')).toEqual([{ id: 1 }, { id: 3 }, { id: 4 }])
      expect(await db.query('select count(*)::int as n from d')).toEqual([{ n: 0 }])
      // and the connection is usable after each of them
      expect(await db.tx((tx) => tx.query('select 1 as one'))).toEqual([{ one: 1 }])
    } finally {
      await db.close()
    }
  }, 30_000)
})
