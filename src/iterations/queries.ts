import deleteSql from '../../sql/iterations/delete.sql' with { type: 'text' }
import insertSql from '../../sql/iterations/insert.sql' with { type: 'text' }
import listSql from '../../sql/iterations/list.sql' with { type: 'text' }
import lockSql from '../../sql/iterations/lock.sql' with { type: 'text' }
import setOrderSql from '../../sql/iterations/set-order.sql' with { type: 'text' }
import updateSql from '../../sql/iterations/update.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'

export type IterationRow = {
  name: string
  status: 'active' | 'done'
  system: boolean
  sort_order: number
  git_tags: string[]
  completed_at: Date | null
  /** the stored rev and field revs (sql/migrations/0020-revisions.sql) */
  rev?: string | number
  field_revs?: Record<string, unknown>
}

export const list = (db: Db, projectId: string, status: string | null = null) => db.query<IterationRow>(listSql, [projectId, status])
export const insert = (db: Db, projectId: string, name: string, status: string, gitTags: string[]) =>
  one<IterationRow>(db, insertSql, [projectId, name, status, JSON.stringify(gitTags)])
export const update = (
  db: Db,
  projectId: string,
  name: string,
  next: { name: string; status: string; gitTags: string[]; sortOrder: number },
) => one<IterationRow>(db, updateSql, [projectId, name, next.name, next.status, JSON.stringify(next.gitTags), next.sortOrder])
export const remove = async (db: Db, projectId: string, name: string) => (await db.query(deleteSql, [projectId, name])).length > 0
export const setOrder = (db: Db, projectId: string, names: string[]) => db.query(setOrderSql, [projectId, names])
/** One iteration with its row locked until the transaction ends: a write with ifRev checks it against what it locked. */
export const lock = (db: Db, projectId: string, name: string) => one<IterationRow>(db, lockSql, [projectId, name])
