import type { Config } from '../config'
import type { Logger } from '../log'
import { migrate } from './migrate'
import type { Db } from './port'

export type { Db } from './port'

/**
 * The configured database's driver is imported when it is opened: a start on PostgreSQL does not
 * load PGlite's modules, nor one on PGlite the postgres driver (tens of ms of CPU each, at every start).
 */
async function open(config: Pick<Config, 'databaseUrl' | 'dataDir'>, log?: Pick<Logger, 'warn'>): Promise<Db> {
  const url = config.databaseUrl
  if (url && url !== 'memory://') return (await import('./postgres')).openPostgres(url, log)
  return (await import('./pglite')).openPglite(url ? null : config.dataDir)
}

/** Open the configured database and bring its schema up to date; `log` hears PostgreSQL's LISTEN connection trouble. */
export async function openDb(config: Pick<Config, 'databaseUrl' | 'dataDir'>, log?: Pick<Logger, 'warn'>): Promise<Db> {
  const db = await open(config, log)
  try {
    await migrate(db)
  } catch (err) {
    await db.close()
    throw err
  }
  return db
}

/** Open the configured database as it is, without migrating it (restore and doctor look at it first). */
export function openDbAsIs(config: Pick<Config, 'databaseUrl' | 'dataDir'>): Promise<Db> {
  return open(config)
}
