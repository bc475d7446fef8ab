import countGoalsSql from '../../sql/share/count-goals.sql' with { type: 'text' }
import expireDueSql from '../../sql/share/expire-due.sql' with { type: 'text' }
import getLiveSql from '../../sql/share/get-live.sql' with { type: 'text' }
import insertSql from '../../sql/share/insert.sql' with { type: 'text' }
import isLiveSql from '../../sql/share/is-live.sql' with { type: 'text' }
import listByProjectSql from '../../sql/share/list-by-project.sql' with { type: 'text' }
import revokeSql from '../../sql/share/revoke.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'

export interface ShareRow {
  token: string
  settings: { includedGoalIds?: string[] }
  created_at: Date
  expires_at: Date | null
  revoked_at: Date | null
  active: boolean
}

// the shared view reads the nodes exactly as the export does

export const insert = (
  db: Db,
  s: { token: string; projectId: string; userId: string; settings: object; now: Date; expiresAt: Date | null },
) => one<ShareRow>(db, insertSql, [s.token, s.projectId, s.userId, JSON.stringify(s.settings), s.now, s.expiresAt])
/** `createdBy` null: every link of the project; a user id: only the links that user minted. */
export const listByProject = (db: Db, projectId: string, now: Date, createdBy: string | null) =>
  db.query<ShareRow>(listByProjectSql, [projectId, now, createdBy])
export const revoke = async (db: Db, projectId: string, token: string, now: Date, createdBy: string | null) =>
  (await db.query(revokeSql, [projectId, token, now, createdBy])).length > 0
export const isLive = async (db: Db, projectId: string, token: string, now: Date) =>
  (await db.query(isLiveSql, [projectId, token, now])).length > 0
export const getLive = (db: Db, token: string, now: Date) =>
  one<{ token: string; project_id: string; settings: ShareRow['settings']; project_name: string }>(db, getLiveSql, [token, now])
export const expireDue = async (db: Db, now: Date) => (await one<{ count: number }>(db, expireDueSql, [now]))!.count
export const countGoals = async (db: Db, projectId: string, ids: string[]) =>
  (await one<{ count: number }>(db, countGoalsSql, [projectId, JSON.stringify(ids)]))!.count
