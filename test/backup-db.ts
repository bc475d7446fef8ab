import { openPglite } from '../src/db/pglite'
import type { Db } from '../src/db/port'
import { openPostgres } from '../src/db/postgres'
import { sharedDump } from './helpers'

/**
 * Empty databases for restore tests (no schema: a restore builds it), and a whole-database
 * comparison: every table's rows as row_to_json text, sorted.
 */
const PG_URL = process.env.TEST_DATABASE_URL

export async function emptyPostgres(): Promise<{ url: string; db: () => Promise<Db>; drop: () => Promise<void> }> {
  const name = `arbor_restore_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
  const admin = await openPostgres(PG_URL!)
  await admin.exec(`create database ${name}`)
  await admin.close()
  const url = new URL(PG_URL!)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    db: () => openPostgres(url.toString()),
    drop: async () => {
      const a = await openPostgres(PG_URL!)
      await a.exec(`drop database if exists ${name} with (force)`)
      await a.close()
    },
  }
}

/** an empty PGlite (no schema): a copy of one made once per run (sharedDump), without an initdb of its own */
const emptyDump = sharedDump('empty', async () => {
  const db = await openPglite(null)
  const blob = await db.dump()
  await db.close()
  return blob
})
export async function emptyPglite(): Promise<Db> {
  return openPglite(null, await emptyDump())
}

/** table → its rows (row_to_json text, sorted), for every table of the schema; `skip` drops columns by name. */
export async function contents(db: Db, skip: RegExp = /^$/): Promise<Record<string, string[]>> {
  const tables = await db.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = current_schema() and c.relkind = 'r' and c.relname <> 'arbor_migrations' order by 1`,
  )
  const out: Record<string, string[]> = {}
  for (const { name } of tables) {
    const rows = await db.query<{ r: Record<string, unknown> }>(`select to_jsonb(t) as r from "${name}" t`)
    out[name] = rows
      .map(({ r }) =>
        JSON.stringify(
          Object.fromEntries(
            Object.entries(typeof r === 'string' ? JSON.parse(r) : r)
              .filter(([k]) => !skip.test(k))
              .sort(),
          ),
        ),
      )
      .sort()
  }
  return out
}
