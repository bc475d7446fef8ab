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

// src/db/postgres.ts `committed`: a channel writers wait on (waitHeard) is heard once by this
// process's listeners when its LISTEN connection brings it back before the writer's marker (it
// was delivered at the commit too: heard twice), and by the time the write returns when the
// marker does not come back.
describe.skipIf(!onPostgres)('a waited channel, on PostgreSQL', () => {
  let db: Db
  let drop: () => Promise<void>
  const heard: string[] = []
  /** the markers heard back, and who waits for them */
  const back = new Set<string>()
  let markers = 0
  /** whether a marker goes on a channel this process listens on (else it never comes back) */
  let listened = true
  beforeAll(async () => {
    const fresh = await freshDatabase({ empty: true })
    drop = fresh.drop
    db = await openPostgres(fresh.env.DATABASE_URL!)
    await db.listen('s51_waited', { message: (p) => heard.push(p), up() {}, down() {} })
    await db.listen('s51_marker', { message: (p) => back.add(p), up() {}, down() {} })
    db.waitHeard!(['s51_waited'], {
      marker: () => [listened ? 's51_marker' : 's51_unheard', `m${++markers}`],
      // as src/revisions/replicas.ts: once the marker came back (on a channel listened on)
      async heard([channel, payload]) {
        for (let i = 0; i < 200 && channel === 's51_marker' && !back.has(payload); i++) await Bun.sleep(25)
      },
    })
  })
  afterAll(async () => {
    await db.close()
    await drop()
  })

  /** what was heard, once a notification sent after it has come back on the LISTEN connection */
  const heardSoFar = async () => {
    const flush = `f${++markers}`
    await db.notify('s51_marker', flush)
    for (let i = 0; i < 200 && !back.has(flush); i++) await Bun.sleep(25)
    return heard.splice(0)
  }

  it('heard once when the marker comes back, inside a transaction and outside', async () => {
    await db.tx(async (tx) => {
      await tx.notify('s51_waited', 'in')
      await tx.notify('s51_notify', 'other')
    })
    // heard before the write returned (it waited for its marker)
    expect(heard).toEqual(['in'])
    await db.notify('s51_waited', 'out')
    expect(heard).toEqual(['in', 'out'])
    expect(await heardSoFar()).toEqual(['in', 'out'])
  })

  it('heard by the time the write returns when the marker does not come back (and again if the notification does)', async () => {
    listened = false
    try {
      await db.tx((tx) => tx.notify('s51_waited', 'in'))
      expect(heard).toContain('in')
      await db.notify('s51_waited', 'out')
      expect(heard).toContain('out')
    } finally {
      listened = true
    }
    // here the LISTEN connection brings them back all the same: a marker that does not come back
    // in time (a connection that lags) cannot tell which later notifications were the write's
    expect((await heardSoFar()).sort()).toEqual(['in', 'in', 'out', 'out'])
  })
})
