import ensureSecretSql from '../../sql/workflow/ensure-secret.sql' with { type: 'text' }
import getSecretSql from '../../sql/workflow/get-secret.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'

/** The named secret, stored on first use; every replica reads back the same value. */
export async function secret(db: Db, name: string, fresh: () => string): Promise<string> {
  await db.query(ensureSecretSql, [name, fresh()])
  const row = await one<{ value: string }>(db, getSecretSql, [name])
  return row!.value
}
