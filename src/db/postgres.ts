import postgres from 'postgres'
import type { Db, Row } from './port'
import { SQLSTATE, sqlState } from './sqlstate'

// biome-ignore lint/complexity/noBannedTypes: postgres.js spells 'no custom types' as {}
type NoTypes = {}
type Conn = postgres.Sql<NoTypes> | postgres.TransactionSql<NoTypes>

function wrap(sql: Conn, root: postgres.Sql<NoTypes>, inTx: boolean): Db {
  const db: Db = {
    kind: 'postgres',
    async query<T = Row>(text: string, params: unknown[] = []) {
      return (await sql.unsafe(text, params as any[], { prepare: true })) as unknown as T[]
    },
    async exec(text: string) {
      await sql.unsafe(text)
    },
    async tx<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
      if (inTx) return fn(db)
      // Two writers locking the same rows in opposite orders: PostgreSQL aborts one with a
      // deadlock (or serialization) error. Nothing of it was committed, so run it again.
      for (let attempt = 1; ; attempt++) {
        try {
          return (await root.begin((t) => fn(wrap(t, root, true)))) as T
        } catch (err) {
          const state = sqlState(err)
          const retryable = state === SQLSTATE.deadlockDetected || state === SQLSTATE.serializationFailure
          if (!retryable || attempt >= 4) throw err
          await Bun.sleep(5 * attempt + Math.random() * 20)
        }
      }
    },
    async ping() {
      await sql.unsafe('select 1')
      return true
    },
    async close() {
      await root.end({ timeout: 5 })
    },
  }
  return db
}

export async function openPostgres(url: string): Promise<Db> {
  const sql = postgres(url, {
    max: 10,
    onnotice: () => {},
    // int8 (counts, sequences) as JS numbers: our values stay far below 2^53.
    types: {
      bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) },
      // Our SQL passes JSON as text to `$n::jsonb`; postgres.js would encode that string a second
      // time (storing a jsonb string). Pass strings through as they are, as PGlite does.
      json: {
        to: 114,
        from: [114, 3802],
        serialize: (x: unknown) => (typeof x === 'string' ? x : JSON.stringify(x)),
        parse: (x: string) => JSON.parse(x),
      },
    } as any,
    connection: { application_name: 'arbor' },
  })
  const db = wrap(sql, sql, false)
  await db.ping()
  return db
}
