import { type Db, openDb } from '../../src/db'

/**
 * A migrated database of a benchmark's own, opened in this process: PGlite in memory without
 * `pgUrl`, or a new database `<name>` on `pgUrl`'s server (dropped by `close`).
 */
export async function freshDb(name: string, pgUrl?: string): Promise<{ db: Db; close: () => Promise<void> }> {
  if (!pgUrl) {
    const db = await openDb({ databaseUrl: 'memory://', dataDir: '' })
    return { db, close: () => db.close() }
  }
  const admin = await openDb({ databaseUrl: pgUrl, dataDir: '' })
  await admin.exec(`drop database if exists ${name}`)
  await admin.exec(`create database ${name}`)
  const u = new URL(pgUrl)
  u.pathname = `/${name}`
  const db = await openDb({ databaseUrl: u.toString(), dataDir: '' })
  return {
    db,
    async close() {
      await db.close()
      await admin.exec(`drop database if exists ${name} with (force)`)
      await admin.close()
    },
  }
}
