import deleteExpiredSql from '../../sql/events/delete-expired.sql' with { type: 'text' }
import hasCursorSql from '../../sql/events/has-cursor.sql' with { type: 'text' }
import insertManySql from '../../sql/events/insert-many.sql' with { type: 'text' }
import latestSql from '../../sql/events/latest.sql' with { type: 'text' }
import listPageSql from '../../sql/events/list-page.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'
import type { StoredPayload } from './payload'

export interface EventRow {
  seq: number
  txid: string
  payload: StoredPayload
}

export const listPage = (db: Db, projectId: string, after: { txid: string; seq: number } | null, limit: number) =>
  db.query<EventRow>(listPageSql, [projectId, after?.txid ?? null, after?.seq ?? null, limit])

export const hasCursor = async (db: Db, projectId: string, at: { txid: string; seq: number }) =>
  (await one<{ kept: boolean }>(db, hasCursorSql, [projectId, at.txid, at.seq]))?.kept === true

export const latest = (db: Db, projectId: string) => one<Omit<EventRow, 'payload'>>(db, latestSql, [projectId])

export const deleteExpired = async (db: Db, before: Date) => (await one<{ count: number }>(db, deleteExpiredSql, [before]))!.count

/** The outbox write (src/events/outbox.ts): one statement for every event of a transaction (up to INSERT_CHUNK). */
/** Events per insert statement: on PGlite a statement holds the server's thread while it runs (src/db/pglite.ts). */
const INSERT_CHUNK = 200

/** Insert `rows` ({type, payload}, in order) and return their seqs, in order. */
export async function insertMany(db: Db, projectId: string, rows: unknown[]): Promise<number[]> {
  const seqs: number[] = []
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const got = await db.query<{ seq: string | number }>(insertManySql, [projectId, JSON.stringify(rows.slice(i, i + INSERT_CHUNK))])
    // seqs are taken in the rows' order; RETURNING does not promise an order
    seqs.push(...got.map((r) => Number(r.seq)).sort((a, b) => a - b))
  }
  return seqs
}
