import beginImportSql from '../../sql/projects/begin-import.sql' with { type: 'text' }
import countOwnedSql from '../../sql/projects/count-owned.sql' with { type: 'text' }
import countSeatsSql from '../../sql/projects/count-seats.sql' with { type: 'text' }
import deleteImportSql from '../../sql/projects/delete-import.sql' with { type: 'text' }
import deleteImportPartSql from '../../sql/projects/delete-import-part.sql' with { type: 'text' }
import deleteMemberSql from '../../sql/projects/delete-member.sql' with { type: 'text' }
import getAccessSql from '../../sql/projects/get-access.sql' with { type: 'text' }
import insertMemberSql from '../../sql/projects/insert-member.sql' with { type: 'text' }
import insertProjectSql from '../../sql/projects/insert-project.sql' with { type: 'text' }
import insertSystemIterationSql from '../../sql/projects/insert-system-iteration.sql' with { type: 'text' }
import listAbandonedImportsSql from '../../sql/projects/list-abandoned-imports.sql' with { type: 'text' }
import listForUserSql from '../../sql/projects/list-for-user.sql' with { type: 'text' }
import listMembersSql from '../../sql/projects/list-members.sql' with { type: 'text' }
import lockOwnerSql from '../../sql/projects/lock-owner.sql' with { type: 'text' }
import renameSql from '../../sql/projects/rename.sql' with { type: 'text' }
import setArchivedSql from '../../sql/projects/set-archived.sql' with { type: 'text' }
import setImportLeaseSql from '../../sql/projects/set-import-lease.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'

export interface AccessRow {
  id: string
  name: string
  archived: boolean
  owner_id: string
  owner_tier: string
  owner_lapsed: boolean
  owner_contributor: boolean
  role: 'owner' | 'member' | null
  /** an import still writes it (migration 0029): only that import may see it */
  importing: boolean
}

export type ProjectRow = { id: string; name: string; archived: boolean }

export const getAccess = (db: Db, projectId: string, userId: string) => one<AccessRow>(db, getAccessSql, [projectId, userId])
export const listForUser = (db: Db, userId: string, includeArchived: boolean, teamOwnedOnly = false) =>
  db.query<ProjectRow & { role: 'owner' | 'member' }>(listForUserSql, [userId, includeArchived, teamOwnedOnly])
export const countOwned = async (db: Db, ownerId: string) => (await one<{ count: number }>(db, countOwnedSql, [ownerId]))!.count
/** Inside a transaction: holds the owner's project-limit lock until it ends. */
export const lockOwner = async (db: Db, ownerId: string) => {
  await db.query(lockOwnerSql, [ownerId])
}
export const insertProject = (db: Db, id: string, name: string, ownerId: string) =>
  one<ProjectRow>(db, insertProjectSql, [id, name, ownerId])
export const insertSystemIteration = (db: Db, projectId: string) =>
  one<{ name: string; status: string; system: boolean }>(db, insertSystemIterationSql, [projectId])
export const rename = (db: Db, id: string, name: string) => one<{ id: string; name: string }>(db, renameSql, [id, name])
export const setArchived = (db: Db, id: string, ownerId: string, archived: boolean) =>
  one<ProjectRow>(db, setArchivedSql, [id, ownerId, archived])

export const listMembers = (db: Db, projectId: string) =>
  db.query<{ user_id: string; name: string; role: 'owner' | 'member' }>(listMembersSql, [projectId])
export const insertMember = async (db: Db, projectId: string, userId: string) =>
  (await db.query(insertMemberSql, [projectId, userId])).length > 0
export const deleteMember = async (db: Db, projectId: string, userId: string) =>
  (await db.query(deleteMemberSql, [projectId, userId])).length > 0
export const countSeatsWith = async (db: Db, ownerId: string, candidateId: string) =>
  (await one<{ count: number }>(db, countSeatsSql, [ownerId, candidateId]))!.count

/** A project an import still writes (migration 0029, src/projects/importing.ts). */
export const beginImport = async (db: Db, id: string, lease: Date) => (await db.query(beginImportSql, [id, lease])).length > 0
export const setImportLease = async (db: Db, id: string, lease: Date | null) => (await db.query(setImportLeaseSql, [id, lease])).length > 0
export const listAbandonedImports = (db: Db, before: Date) => db.query<{ id: string }>(listAbandonedImportsSql, [before])
export const deleteImportPart = async (db: Db, id: string, perTable: number) =>
  (await one<{ removed: number }>(db, deleteImportPartSql, [id, perTable]))!.removed
export const deleteImport = async (db: Db, id: string) => (await db.query(deleteImportSql, [id])).length > 0
