import { describe, expect, it } from 'bun:test'
import { openPostgres } from '../src/db/postgres'
import { Replicas } from '../src/revisions/replicas'

// issue 43, item 4: infrastructure failures are logged with their reason, never dropped silently
const PG_URL = process.env.TEST_DATABASE_URL

/** A logger that keeps its warnings. */
function capture() {
  const lines: { msg: string; fields: Record<string, unknown> }[] = []
  return { lines, log: { warn: (msg: string, fields: Record<string, unknown> = {}) => void lines.push({ msg, fields }) } }
}

async function until(what: string, ok: () => boolean, ms = 20_000) {
  const end = Date.now() + ms
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(25)
  }
}

describe.skipIf(!PG_URL)('PostgreSQL infrastructure failures are logged with their reason', () => {
  it('the LISTEN connection: its loss, each failed reconnect (with the reason) and its return', async () => {
    const name = `arbor_test_listen_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
    const admin = await openPostgres(PG_URL!)
    await admin.exec(`create database ${name}`)
    const url = new URL(PG_URL!)
    url.pathname = `/${name}`
    const { lines, log } = capture()
    const db = await openPostgres(url.toString(), log)
    try {
      let ups = 0
      await db.listen('arbor_test', { message() {}, up: () => void ups++, down() {} })
      expect(ups).toBe(1)
      // the database refuses new connections, and the LISTEN connection is cut
      await admin.exec(`alter database ${name} allow_connections false`)
      await admin.exec(
        `select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}' and application_name = 'arbor-listen'`,
      )
      await until('the failed reconnect', () => lines.some((l) => l.msg.startsWith('LISTEN connection failed')))
      expect(lines[0]!.msg).toBe('LISTEN connection lost; listening again')
      const failed = lines.find((l) => l.msg.startsWith('LISTEN connection failed'))!
      expect(failed.fields.reason).toContain('not currently accepting connections')
      await admin.exec(`alter database ${name} allow_connections true`)
      await until('the reconnect', () => ups === 2)
      expect(lines.at(-1)!.msg).toBe('LISTEN connection back')
    } finally {
      await db.close()
      await admin.exec(`alter database ${name} allow_connections true`)
      await admin.exec(`drop database if exists ${name} with (force)`)
      await admin.close()
    }
  })

  it('a replica whose LISTEN fails says so', async () => {
    const db = await openPostgres(PG_URL!)
    await db.close()
    const { lines, log } = capture()
    const replicas = new Replicas(db, () => {}, log)
    await until('both LISTEN failures', () => lines.length >= 2)
    expect(lines.map((l) => [l.msg, l.fields.reason])).toEqual([
      ['replica LISTEN failed; this process will not answer from memory', 'the database is closed'],
      ['replica LISTEN failed; writes will wait out other replicas instead', 'the database is closed'],
    ])
    await replicas.stop()
  })
})
