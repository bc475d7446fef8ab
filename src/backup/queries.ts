import castRulesSql from '../../sql/backup/cast-rules.sql' with { type: 'text' }
import foreignKeysSql from '../../sql/backup/foreign-keys.sql' with { type: 'text' }
import migrationsSql from '../../sql/backup/migrations.sql' with { type: 'text' }
import sequencesSql from '../../sql/backup/sequences.sql' with { type: 'text' }
import snapshotSql from '../../sql/backup/snapshot.sql' with { type: 'text' }
import tablesSql from '../../sql/backup/tables.sql' with { type: 'text' }
import type { Db } from '../db'

/**
 * What a backup reads and a restore writes, learned from the database's own catalog rather than
 * from a list kept by hand: a table added by a new migration is in the next backup without
 * anyone remembering to add it.
 */
export interface Table {
  name: string
  columns: string[]
  generated: string[]
}
export interface ForeignKey {
  table: string
  references: string
  columns: string[]
  refColumns: string[]
}

/** The migrations' own bookkeeping: a backup names its level in the header instead of copying it. */
export const MIGRATIONS_TABLE = 'arbor_migrations'

export const quote = (name: string) => `"${name.replace(/"/g, '""')}"`

export const listTables = async (db: Db) => (await db.query<Table>(tablesSql)).filter((t) => t.name !== MIGRATIONS_TABLE)
export const listForeignKeys = (db: Db) => db.query<ForeignKey>(foreignKeysSql)
/** Every row of the columns a domain cast guards checked against it (sql/backup/cast-rules.sql): throws 23514 on a value outside. */
export const checkCastRules = (db: Db) => db.query(castRulesSql)
export const listSequences = async (db: Db) => (await db.query<{ name: string }>(sequencesSql)).map((s) => s.name)

/** The applied migrations, or [] on a database that has no schema yet. */
export async function appliedMigrations(db: Db): Promise<string[]> {
  const tables = await db.query<Table>(tablesSql)
  if (!tables.some((t) => t.name === MIGRATIONS_TABLE)) return []
  return (await db.query<{ name: string }>(migrationsSql)).map((m) => m.name)
}

/**
 * The tables in an order where every table comes after those it references (a table's
 * references to itself are left to the restore, which orders those rows). A cycle between
 * tables has no such order: that is a schema a restore cannot load row by row, so it throws.
 */
export function dependencyOrder(tables: Table[], fks: ForeignKey[]): Table[] {
  const byName = new Map(tables.map((t) => [t.name, t]))
  const done = new Set<string>()
  const visiting = new Set<string>()
  const out: Table[] = []
  const visit = (name: string, path: string[]) => {
    if (done.has(name)) return
    if (visiting.has(name)) throw new Error(`backup: foreign keys form a cycle between tables ${[...path, name].join(' → ')}`)
    visiting.add(name)
    for (const fk of fks)
      if (fk.table === name && fk.references !== name && byName.has(fk.references)) visit(fk.references, [...path, name])
    visiting.delete(name)
    done.add(name)
    out.push(byName.get(name)!)
  }
  for (const t of tables) visit(t.name, [])
  return out
}

/** The first statement of a backup's transaction on PostgreSQL: one snapshot of every table, read only. */
export const beginSnapshot = (tx: Db) => tx.query(snapshotSql)
