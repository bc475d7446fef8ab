import deleteExpiredSpentSql from '../../sql/workflow/delete-expired-spent.sql' with { type: 'text' }
import ensureSecretSql from '../../sql/workflow/ensure-secret.sql' with { type: 'text' }
import getSecretSql from '../../sql/workflow/get-secret.sql' with { type: 'text' }
import getSpentSql from '../../sql/workflow/get-spent.sql' with { type: 'text' }
import spendStateSql from '../../sql/workflow/spend-state.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'

/** The named secret, stored on first use; every replica reads back the same value. */
export async function secret(db: Db, name: string, fresh: () => string): Promise<string> {
  await db.query(ensureSecretSql, [name, fresh()])
  const row = await one<{ value: string }>(db, getSecretSql, [name])
  return row!.value
}

/** True when this call spent the state; false when it was spent already. */
export const spendState = async (db: Db, digest: string, expiresAt: Date) => (await db.query(spendStateSql, [digest, expiresAt])).length > 0
export const isSpent = async (db: Db, digest: string) => (await db.query(getSpentSql, [digest])).length > 0
export const deleteExpiredSpent = async (db: Db, now: Date) => (await db.query(deleteExpiredSpentSql, [now])).length
