import countRecentSql from '../../sql/feedback/count-recent.sql' with { type: 'text' }
import insertSql from '../../sql/feedback/insert.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'

export const countRecent = async (db: Db, userId: string, since: Date) =>
  (await one<{ count: number }>(db, countRecentSql, [userId, since.toISOString()]))!.count
export const insert = (db: Db, params: unknown[]) => one<{ id: string; created_at: Date }>(db, insertSql, params)
