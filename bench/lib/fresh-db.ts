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

/**
 * Five hundred changes as history stores them (sql/history/insert-many.sql's `$8`), starting at
 * `i`: a goal's label update each, over 3,000 goals (`g_0` … `g_2999`), the rows a history
 * benchmark fills its table with before it measures.
 */
export const labelUpdateDrafts = (i: number) =>
  Array.from({ length: 500 }, (_, j) => ({
    action: 'update',
    kind: 'node',
    id: `g_${(i + j) % 3000}`,
    type: 'goal',
    before: { parentId: null, data: { label: `b${i + j}` } },
    after: { parentId: null, data: { label: `x${i + j}` } },
    fields: ['label'],
  }))
