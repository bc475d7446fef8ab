import type { Config } from '../config'
import type { Logger } from '../log'
import { migrate } from './migrate'
import { openPglite } from './pglite'
import type { Db } from './port'
import { openPostgres } from './postgres'

export type { Db } from './port'

/** Open the configured database and bring its schema up to date; `log` hears PostgreSQL's LISTEN connection trouble. */
export async function openDb(config: Pick<Config, 'databaseUrl' | 'dataDir'>, log?: Pick<Logger, 'warn'>): Promise<Db> {
  const url = config.databaseUrl
  const db = !url ? await openPglite(config.dataDir) : url === 'memory://' ? await openPglite(null) : await openPostgres(url, log)
  try {
    await migrate(db)
  } catch (err) {
    await db.close()
    throw err
  }
  return db
}

/** Open the configured database as it is, without migrating it (restore and doctor look at it first). */
export async function openDbAsIs(config: Pick<Config, 'databaseUrl' | 'dataDir'>): Promise<Db> {
  const url = config.databaseUrl
  return !url ? openPglite(config.dataDir) : url === 'memory://' ? openPglite(null) : openPostgres(url)
}
