import { afterAll, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { migrations } from '../sql/migrations'
import type { Db } from '../src/db'
import { migrate } from '../src/db/migrate'
import { openPglite } from '../src/db/pglite'
import { openPostgres } from '../src/db/postgres'

/**
 * The migrations: the hand-written list in sql/migrations/index.ts (Bun imports each file as
 * text, so a compiled binary carries them) must be the folder, in order; and running them on a
 * database that has them all must change nothing. On PGlite, or on a new database of the
 * PostgreSQL server of TEST_DATABASE_URL.
 */
const DIR = join(import.meta.dir, '..', 'sql', 'migrations')
const PG_URL = process.env.TEST_DATABASE_URL

describe('the list of migrations', () => {
  it('names every .sql file of sql/migrations, in file-name order, each with that file as its text', () => {
    const onDisk = readdirSync(DIR)
      .filter((f) => f.endsWith('.sql'))
      .sort()
    expect(migrations.map((m) => `${m.name}.sql`)).toEqual(onDisk)
    expect(migrations.map((m) => m.sql)).toEqual(onDisk.map((f) => readFileSync(join(DIR, f), 'utf8')))
  })

  it('numbers them with four digits, rising, no number taken twice (two branches adding the same number)', () => {
    const numbers = migrations.map((m) => /^(\d{4})-[a-z0-9-]+$/.exec(m.name)?.[1] ?? m.name)
    expect(numbers.every((n) => /^\d{4}$/.test(n))).toBe(true)
    // gaps are allowed (a number reserved by a branch not merged yet), repeats and disorder are not
    expect(numbers.filter((n, i) => i > 0 && n <= numbers[i - 1]!)).toEqual([])
  })
})

/** The schema as the catalog tells it (tables and columns, indexes, constraints, functions, triggers) and each table's row count. */
async function snapshot(db: Db) {
  const columns = await db.query(
    `select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns
     where table_schema = 'public' order by table_name, ordinal_position`,
  )
  const indexes = await db.query(`select tablename, indexname, indexdef from pg_indexes where schemaname = 'public' order by indexname`)
  const constraints = await db.query(
    `select conrelid::regclass::text as on_table, conname, pg_get_constraintdef(oid) as def from pg_constraint
     where connamespace = 'public'::regnamespace order by conrelid::regclass::text, conname`,
  )
  const functions = await db.query(
    `select proname, pg_get_function_identity_arguments(oid) as args, md5(prosrc) as body from pg_proc
     where pronamespace = 'public'::regnamespace order by proname, args`,
  )
  const triggers = await db.query(
    `select tgrelid::regclass::text as on_table, tgname from pg_trigger where not tgisinternal order by on_table, tgname`,
  )
  const tables = [...new Set(columns.map((c) => c.table_name as string))]
  const rows: Record<string, number> = {}
  for (const t of tables) rows[t] = Number((await db.query<{ n: string }>(`select count(*) as n from "${t}"`))[0]!.n)
  return { columns, indexes, constraints, functions, triggers, rows }
}

/** The embedded database, started once: its initdb takes seconds, so each test empties it instead. */
let pglite: Promise<Db> | undefined

/**
 * An empty database and two handles on it: two connections of their own on PostgreSQL (two
 * replicas, on a new database), the one embedded database twice on PGlite (one process).
 */
async function emptyDatabase(): Promise<{ db: Db; other: Db; drop: () => Promise<void> }> {
  if (!PG_URL) {
    const db = await (pglite ??= openPglite(null))
    await db.exec('drop schema public cascade; create schema public')
    return { db, other: db, drop: async () => {} } // closed once, after the last test
  }
  const name = `arbor_test_migrate_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
  const admin = await openPostgres(PG_URL)
  await admin.exec(`create database ${name}`)
  const url = new URL(PG_URL)
  url.pathname = `/${name}`
  const [db, other] = [await openPostgres(url.toString()), await openPostgres(url.toString())]
  return {
    db,
    other,
    drop: async () => {
      await Promise.all([db.close(), other.close()])
      await admin.exec(`drop database if exists ${name} with (force)`)
      await admin.close()
    },
  }
}

describe(`migrate on ${PG_URL ? 'PostgreSQL' : 'PGlite'}`, () => {
  const names = migrations.map((m) => m.name)
  const opened: (() => Promise<void>)[] = []
  const open = async () => {
    const fresh = await emptyDatabase()
    opened.push(fresh.drop)
    return fresh
  }
  afterAll(async () => {
    for (const drop of opened) await drop()
    await (await pglite)?.close()
  })

  it('applies every migration once on an empty database; a second run applies none and changes nothing', async () => {
    const { db } = await open()
    expect(await migrate(db)).toEqual(names)
    const first = await snapshot(db)
    expect(first.rows.arbor_migrations).toBe(names.length)
    expect(await migrate(db)).toEqual([])
    expect(await snapshot(db)).toEqual(first)
    expect((await db.query('select name from arbor_migrations order by name')).map((r) => r.name)).toEqual(names)
  }, 120_000)

  it('two starts migrating one empty database at once (replicas): one applies everything, the other nothing, neither fails', async () => {
    const { db, other } = await open()
    const runs = await Promise.all([migrate(db), migrate(other)])
    expect(runs.toSorted((a, b) => a.length - b.length)).toEqual([[], names])
    const once = await snapshot(db)
    expect(await migrate(other)).toEqual([])
    expect(await snapshot(other)).toEqual(once)
  }, 120_000)
})
