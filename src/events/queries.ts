import deleteExpiredSql from '../../sql/events/delete-expired.sql' with { type: 'text' }
import hasCursorSql from '../../sql/events/has-cursor.sql' with { type: 'text' }
import insertManySql from '../../sql/events/insert-many.sql' with { type: 'text' }
import insertWithChangeSql from '../../sql/events/insert-with-change.sql' with { type: 'text' }
import insertWithChangesSql from '../../sql/events/insert-with-changes.sql' with { type: 'text' }
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

/** The outbox write (src/events/outbox.ts): one statement for every event of a transaction. */
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

/**
 * Insert `rows` and a write's changes in one statement (sql/events/insert-with-changes.sql, or
 * insert-with-change.sql for `one` change): `changes.params` are the statement's parameters after
 * the project, as the history module builds them (at most one statement's worth). Events past
 * INSERT_CHUNK go in statements of their own. Returns the changes' ids and the events' seqs, each
 * in order.
 */
export async function insertWithChanges(
  db: Db,
  projectId: string,
  changes: { one: boolean; params: readonly unknown[] },
  rows: unknown[],
): Promise<{ changeIds: number[]; seqs: number[] }> {
  const params = [projectId, ...changes.params, JSON.stringify(rows.slice(0, INSERT_CHUNK))]
  const changeIds: number[] = []
  const seqs: number[] = []
  if (changes.one) {
    // each event's row names the one change's id beside its seq: the statement needs an event (emit sends none without)
    if (rows.length === 0) throw new Error('insertWithChanges: one change rides in an event statement, and there is no event')
    const got = await db.query<{ seq: string | number; change_id: string | number }>(insertWithChangeSql, params)
    for (const r of got) seqs.push(Number(r.seq))
    changeIds.push(Number(got[0]!.change_id))
  } else {
    const got = await db.query<{ event: boolean; id: string | number }>(insertWithChangesSql, params)
    for (const r of got) (r.event ? seqs : changeIds).push(Number(r.id))
  }
  // ids and seqs are taken in the rows' order; RETURNING does not promise an order
  changeIds.sort((a, b) => a - b)
  seqs.sort((a, b) => a - b)
  if (rows.length > INSERT_CHUNK) seqs.push(...(await insertMany(db, projectId, rows.slice(INSERT_CHUNK))))
  return { changeIds, seqs }
}
