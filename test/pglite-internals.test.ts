import { describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PGlite, protocol } from '@electric-sql/pglite'
import { openPglite } from '../src/db/pglite'
import { pgliteAssets } from '../src/db/pglite-assets'
import { bindExecuteSync, type PgliteInternals } from '../src/db/pglite-prepared'

/**
 * src/db/pglite-prepared.ts relies on parts of PGlite that are not its documented API: the two
 * locks of its query(), its type maps, and the raw protocol stream. package.json pins PGlite to
 * the exact version these were checked against; this test fails loudly when an upgrade changes
 * any of them, before a subtle corruption could.
 */
const ROOT = join(import.meta.dir, '..')
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
const installed = JSON.parse(readFileSync(join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')).version

// Only PGlite, whatever TEST_DATABASE_URL says: on CI's PostgreSQL pass it would do again exactly
// what the PGlite pass just did, so it runs on the PGlite pass alone.
describe.skipIf(!!process.env.TEST_DATABASE_URL)('the PGlite internals src/db/pglite-prepared.ts uses', () => {
  it('runs on the exact PGlite version package.json pins', () => {
    expect({ pinned: pkg.dependencies['@electric-sql/pglite'], installed }).toEqual({ pinned: '0.5.16', installed: '0.5.16' })
  })

  it('finds the two locks of query(), the type maps and the raw protocol stream where it expects them', async () => {
    const pg = await PGlite.create(await pgliteAssets({ initdb: true }))
    try {
      const internals = pg as unknown as PgliteInternals & Record<string, unknown>
      expect({
        runExclusiveQuery: typeof internals._runExclusiveQuery,
        runExclusiveTransaction: typeof internals._runExclusiveTransaction,
        execProtocolRawStream: typeof pg.execProtocolRawStream,
        textParser: typeof pg.parsers[25],
        int8Parser: typeof pg.parsers[20],
        textArraySerializer: typeof pg.serializers[1009],
      }).toEqual({
        runExclusiveQuery: 'function',
        runExclusiveTransaction: 'function',
        execProtocolRawStream: 'function',
        textParser: 'function',
        int8Parser: 'function',
        textArraySerializer: 'function',
      })
      // the query lock is the one query() takes: a statement waits for a locked section to end
      const order: string[] = []
      const held = internals._runExclusiveQuery(async () => {
        await Bun.sleep(30)
        order.push('locked section')
      })
      const query = pg.query('select 1').then(() => order.push('query'))
      await Promise.all([held, query])
      expect(order).toEqual(['locked section', 'query'])
    } finally {
      await pg.close()
    }
  }, 30_000)

  it("writes Bind, Execute and Sync byte for byte as PGlite's own serializer does", () => {
    const { serialize } = protocol
    const cat = (parts: Uint8Array[]) => new Uint8Array(parts.flatMap((p) => [...p]))
    const before = cat([serialize.bind({ statement: 'arbor_1', values: [] }), serialize.execute({})])
    for (const values of [[], ['a'], [null, '', 'ünïcode ✓ 𝄞', '{"k":[1,2]}', 'x'.repeat(70_000), null]]) {
      const theirs = cat([serialize.bind({ statement: 'arbor_42', values }), serialize.execute({}), serialize.sync()])
      expect([...bindExecuteSync('arbor_42', values)]).toEqual([...theirs])
      expect([...bindExecuteSync('arbor_42', values, before)]).toEqual([...before, ...theirs])
    }
  })

  it('decodes rows, nulls, types, arrays, multi-chunk answers and errors through the Db port as PGlite itself does', async () => {
    const db = await openPglite(null)
    try {
      await db.exec('create table t (id int, label text, at timestamptz, tags text[], doc jsonb, big int8, flag boolean)')
      await db.query('insert into t values ($1, $2, $3, $4, $5::jsonb, $6, $7)', [
        1,
        'ünïcode ✓',
        new Date('2026-01-02T03:04:05Z'),
        ['a', 'b,c'],
        '{"k":[1,2]}',
        2 ** 40,
        true,
      ])
      await db.query('insert into t values ($1, null, null, null, null, null, null)', [2])
      expect(await db.query('select * from t order by id')).toEqual([
        {
          id: 1,
          label: 'ünïcode ✓',
          at: new Date('2026-01-02T03:04:05Z'),
          tags: ['a', 'b,c'],
          doc: { k: [1, 2] },
          big: 2 ** 40,
          flag: true,
        },
        { id: 2, label: null, at: null, tags: null, doc: null, big: null, flag: null },
      ])
      // an answer far larger than one output chunk of the backend
      const many = await db.query<{ n: number; pad: string }>("select n, repeat('x', 500) as pad from generate_series(1, 5000) n")
      expect({ rows: many.length, last: many.at(-1)!.n, pad: many.every((r) => r.pad.length === 500) }).toEqual({
        rows: 5000,
        last: 5000,
        pad: true,
      })
      const err = await db.query('insert into t (id) values ($1)', ['not a number']).catch((e) => e)
      expect({ code: err.code, message: err.message }).toEqual({
        code: '22P02',
        message: 'invalid input syntax for type integer: "not a number"',
      })
      expect(await db.query('select count(*)::int as n from t')).toEqual([{ n: 2 }])
    } finally {
      await db.close()
    }
  }, 30_000)
})
