import driftedTablesSql from '../../sql/maintenance/drifted-tables.sql' with { type: 'text' }
import type { Db } from '../db'

export interface DriftedTable {
  schema: string
  table: string
  /** its dead rows passed the vacuum threshold too */
  vacuum: boolean
}

export const driftedTables = (db: Db) => db.query<DriftedTable>(driftedTablesSql)

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`

/** Analyze a table, or vacuum and analyze it (names from pg_stat_user_tables, quoted). */
export const refresh = (db: Db, t: DriftedTable) =>
  db.exec(`${t.vacuum ? 'vacuum (analyze)' : 'analyze'} ${quote(t.schema)}.${quote(t.table)}`)
