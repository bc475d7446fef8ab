import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Db } from '../src/db'
import { openPostgres } from '../src/db/postgres'
import { freshDatabase } from './process'

// src/db/postgres.ts: the requests' pool and the background one (Db.background: the loops, the
// search's catch-up, the replicas' lease). postgres.js hands a statement the connection idle
// longest, so statements of the loops on the requests' pool sent one writer's transactions round
// every connection they had opened, each backend preparing and planning its statements anew
// (bench/writes.md, "Tenth pass: the delete"). With the loops on a pool of their own, one writer
// keeps its connection however busy the loops are; the background pool holds at most 3
// connections, and `close()` ends both pools.
const onPostgres = !!process.env.TEST_DATABASE_URL

describe.skipIf(!onPostgres)('the pools on PostgreSQL', () => {
  let db: Db
  let admin: Db
  let drop: () => Promise<void>
  let name: string
  beforeAll(async () => {
    const fresh = await freshDatabase({ empty: true })
    drop = fresh.drop
    db = await openPostgres(fresh.env.DATABASE_URL!)
    admin = await openPostgres(process.env.TEST_DATABASE_URL!)
    name = (await db.query<{ name: string }>('select current_database() as name'))[0]!.name
  })
  afterAll(async () => {
    await admin.close()
    await drop()
  })
  /** this database's connections, by application_name */
  const connections = async () => {
    const rows = await admin.query<{ app: string; n: number }>(
      'select application_name as app, count(*)::int as n from pg_stat_activity where datname = $1 group by 1',
      [name],
    )
    return Object.fromEntries(rows.map((r) => [r.app, r.n]))
  }

  it('keeps one writer on one connection while the background runs beside it', async () => {
    const background = db.background!
    expect(background).toBeDefined()
    expect(background.kind).toBe('postgres')
    let stop = false
    const backgroundPids = new Set<number>()
    // the loops: statements side by side on the background pool, now and then, all the writer's
    // transactions long (the connections they open are idle in between, as the loops' are)
    const loops = Array.from({ length: 6 }, async (_, i) => {
      while (!stop) {
        const [row] = await background.query<{ pid: number }>('select pg_backend_pid() as pid')
        backgroundPids.add(row!.pid)
        await Bun.sleep(1 + i)
      }
    })
    const writerPids = new Set<number>()
    try {
      for (let i = 0; i < 60; i++) {
        const pid = await db.tx(async (tx) => {
          await tx.query('select 1')
          return (await tx.query<{ pid: number }>('select pg_backend_pid() as pid'))[0]!.pid
        })
        writerPids.add(pid)
        await db.query('select 1')
      }
    } finally {
      stop = true
      await Promise.all(loops)
    }
    expect(writerPids.size).toBe(1)
    expect(backgroundPids.size).toBeGreaterThan(0)
    expect(backgroundPids.size).toBeLessThanOrEqual(3)
    expect(backgroundPids.has([...writerPids][0]!)).toBe(false)
    const open = await connections()
    expect(open['arbor-background']).toBe(backgroundPids.size)
    expect(open.arbor).toBe(1)
  })

  it('runs transactions and notifications on the background pool', async () => {
    const heard: string[] = []
    await db.listen('pools_test', { message: (p) => heard.push(p), up() {}, down() {} })
    await db.background!.tx(async (tx) => {
      await tx.notify('pools_test', 'from the background')
      expect((await tx.query<{ n: number }>('select 1 as n'))[0]!.n).toBe(1)
    })
    for (const end = Date.now() + 10_000; heard.length === 0 && Date.now() < end; ) await Bun.sleep(20)
    expect(heard).toEqual(['from the background'])
  })

  it('ends both pools and the LISTEN connection on close', async () => {
    expect(Object.keys(await connections()).sort()).toEqual(['arbor', 'arbor-background', 'arbor-listen'])
    await db.close()
    let left: Record<string, number> = {}
    for (const end = Date.now() + 10_000; Date.now() < end; await Bun.sleep(50)) {
      left = await connections()
      if (Object.keys(left).length === 0) break
    }
    expect(left).toEqual({})
    await expect(db.background!.query('select 1')).rejects.toThrow()
  })
})
