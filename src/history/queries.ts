import getManySql from '../../sql/history/get-many.sql' with { type: 'text' }
import hasChangesSql from '../../sql/history/has-changes.sql' with { type: 'text' }
import insertAddsSql from '../../sql/history/insert-adds.sql' with { type: 'text' }
import insertManySql from '../../sql/history/insert-many.sql' with { type: 'text' }
import insertOneSql from '../../sql/history/insert-one.sql' with { type: 'text' }
import laterSql from '../../sql/history/later.sql' with { type: 'text' }
import latestOfTargetsSql from '../../sql/history/latest-of-targets.sql' with { type: 'text' }
import listSql from '../../sql/history/list.sql' with { type: 'text' }
import listByTargetSql from '../../sql/history/list-by-target.sql' with { type: 'text' }
import pruneSql from '../../sql/history/prune.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'
import type { ChangeRow } from './model'

/** Changes per insert statement: on PGlite a statement holds the server's thread while it runs (src/db/pglite.ts). */
export const INSERT_CHUNK = 1000

/**
 * Store one statement's changes: `params` are sql/history/insert-many.sql's after the project id
 * (src/history/record.ts `changeParams`, at most INSERT_CHUNK changes). Returns their ids, in order.
 */
export const insertChunk = (db: Db, projectId: string, params: readonly unknown[]) => insertedIds(db, insertManySql, projectId, params)

/**
 * The same for a statement's changes that are all nodes' adds: `params` are
 * sql/history/insert-adds.sql's after the project id (src/history/record.ts `addParams`).
 */
export const insertAddChunk = (db: Db, projectId: string, params: readonly unknown[]) => insertedIds(db, insertAddsSql, projectId, params)

async function insertedIds(db: Db, sql: string, projectId: string, params: readonly unknown[]): Promise<number[]> {
  const rows = await db.query<{ id: string | number }>(sql, [projectId, ...params])
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b)
}

/** Store a write's one change: `params` are sql/history/insert-one.sql's after the project id (src/history/record.ts `oneChangeParams`). Returns its id. */
export async function insertOne(db: Db, projectId: string, params: readonly unknown[]): Promise<number> {
  const rows = await db.query<{ id: string | number }>(insertOneSql, [projectId, ...params])
  return Number(rows[0]!.id)
}

export interface Filters {
  userId: string | null
  agent: string | null
  via: string | null
  requestId: string | null
  since: string | null
  until: string | null
}
export type ListedRow = ChangeRow & { snapshot: string }

export function list(
  db: Db,
  projectId: string,
  nodeId: string | null,
  f: Filters,
  cursor: { below: string; snapshot: string } | null,
  limit: number,
) {
  const rest = [f.userId, f.agent, f.via, f.requestId, f.since, f.until, cursor?.below ?? null, cursor?.snapshot ?? null, limit]
  return nodeId === null
    ? db.query<ListedRow>(listSql, [projectId, ...rest])
    : db.query<ListedRow>(listByTargetSql, [projectId, nodeId, ...rest])
}

export const getMany = (db: Db, projectId: string, ids: number[]) => db.query<ChangeRow>(getManySql, [projectId, ids])
export const later = (db: Db, projectId: string, targetIds: string[], afterId: number) =>
  db.query<Pick<ChangeRow, 'id' | 'user_id' | 'action' | 'target_kind' | 'target_id' | 'before' | 'after' | 'fields'>>(laterSql, [
    projectId,
    targetIds,
    afterId,
  ])
export const prune = async (db: Db, before: Date) => (await one<{ count: number }>(db, pruneSql, [before.toISOString()]))!.count

/** The newest changes of these targets (at most `limit`), newest first: who last changed each field (a stale write). */
export const latestOfTargets = (db: Db, projectId: string, targetIds: string[], limit: number) =>
  db.query<Pick<ChangeRow, 'id' | 'at' | 'user_id' | 'user_name' | 'key_id' | 'agent' | 'via' | 'target_kind' | 'target_id' | 'fields'>>(
    latestOfTargetsSql,
    [projectId, targetIds, limit],
  )
/** Whether any change of this target is still kept (pruning takes the oldest first: none kept, none after any rev). */
export const hasChanges = async (db: Db, projectId: string, kind: string, id: string) =>
  !!(await one<{ kept: boolean }>(db, hasChangesSql, [projectId, kind, id]))?.kept
