import countLiveKeysSql from '../../sql/accounts/count-live-keys.sql' with { type: 'text' }
import countUsersSql from '../../sql/accounts/count-users.sql' with { type: 'text' }
import findUserByKeyHashSql from '../../sql/accounts/find-user-by-key-hash.sql' with { type: 'text' }
import getApiKeySql from '../../sql/accounts/get-api-key.sql' with { type: 'text' }
import getUserSql from '../../sql/accounts/get-user.sql' with { type: 'text' }
import insertApiKeySql from '../../sql/accounts/insert-api-key.sql' with { type: 'text' }
import insertUserSql from '../../sql/accounts/insert-user.sql' with { type: 'text' }
import listLiveKeysSql from '../../sql/accounts/list-live-keys.sql' with { type: 'text' }
import listUsersSql from '../../sql/accounts/list-users.sql' with { type: 'text' }
import lockUserSql from '../../sql/accounts/lock-user.sql' with { type: 'text' }
import revokeApiKeySql from '../../sql/accounts/revoke-api-key.sql' with { type: 'text' }
import setKeyScopeSql from '../../sql/accounts/set-key-scope.sql' with { type: 'text' }
import touchApiKeySql from '../../sql/accounts/touch-api-key.sql' with { type: 'text' }
import updateUserSql from '../../sql/accounts/update-user.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'
import { toUser, type User, type UserRow } from './model'
import type { KeyScope, Role } from './scope'

const asUser = (row: UserRow | undefined) => (row ? toUser(row) : undefined)

export const findUserByKeyHash = async (db: Db, hash: string) => asUser(await one(db, findUserByKeyHashSql, [hash]))
export const getUser = async (db: Db, id: string) => asUser(await one(db, getUserSql, [id]))
export const listUsers = async (db: Db) => (await db.query<UserRow>(listUsersSql)).map(toUser)
export const countUsers = async (db: Db) => (await one<{ count: number }>(db, countUsersSql))!.count

export const insertUser = async (
  db: Db,
  u: { id: string; name: string; tier: string; status: string; contributor: boolean },
): Promise<User> => toUser((await one(db, insertUserSql, [u.id, u.name, u.tier, u.status, u.contributor]))!)

export const updateUser = async (
  db: Db,
  id: string,
  p: { name?: string; tier?: string; status?: string; lapsed?: boolean; contributor?: boolean; creditsLimit?: number | null },
) =>
  asUser(
    await one(db, updateUserSql, [
      id,
      p.name ?? null,
      p.tier ?? null,
      p.status ?? null,
      p.lapsed ?? null,
      p.contributor ?? null,
      p.creditsLimit !== undefined,
      p.creditsLimit ?? null,
    ]),
  )

export const insertApiKey = (
  db: Db,
  k: { id: string; userId: string; hash: string; label: string | null; prefix: string; scope: KeyScope },
) => db.query(insertApiKeySql, [k.id, k.userId, k.hash, k.label, k.prefix, k.scope.role, k.scope.projects ?? null])
export const setKeyScope = async (db: Db, id: string, scope: KeyScope) =>
  (await db.query(setKeyScopeSql, [id, scope.role, scope.projects ?? null])).length > 0
export const revokeApiKey = async (db: Db, id: string) => (await db.query(revokeApiKeySql, [id])).length > 0
export const getApiKey = (db: Db, id: string) => one<{ id: string; user_id: string; revoked_at: Date | null }>(db, getApiKeySql, [id])

/** Locks the user's row for the rest of the transaction (the rules counted per user). */
export const lockUser = async (db: Db, id: string) => (await db.query(lockUserSql, [id])).length > 0
export const countLiveKeys = async (db: Db, userId: string) => (await one<{ count: number }>(db, countLiveKeysSql, [userId]))!.count
export const touchApiKey = (db: Db, hash: string) => db.query(touchApiKeySql, [hash])

export interface KeyRow {
  id: string
  label: string | null
  prefix: string
  created_at: Date | string
  last_used_at: Date | string | null
  current: boolean
  scope_role: Role
  scope_projects: string[] | null
}
export const listLiveKeys = (db: Db, userId: string, currentHash: string) => db.query<KeyRow>(listLiveKeysSql, [userId, currentHash])
