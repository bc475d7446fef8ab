import { migrations } from '../../sql/migrations'
import type { Db } from './port'

/** The names of this build's migrations, in order. */
export const migrationNames = migrations.map((m) => m.name)

// One fixed key for pg_advisory_xact_lock: replicas starting together migrate one at a time.
const MIGRATION_LOCK = 72_010_001

/**
 * Forward-only migrations, each applied once inside a transaction under an advisory lock
 * and recorded in `arbor_migrations`. Safe to run on every start and from several replicas.
 * `until` stops after that migration (a restore first rebuilds the schema its backup was taken at).
 */
export async function migrate(db: Db, until?: string): Promise<string[]> {
  return db.tx(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
    await tx.exec('create table if not exists arbor_migrations (name text primary key, applied_at timestamptz not null default now())')
    const done = new Set((await tx.query<{ name: string }>('select name from arbor_migrations')).map((r) => r.name))
    const applied: string[] = []
    for (const m of migrations) {
      if (!done.has(m.name)) {
        await tx.exec(m.sql)
        await tx.query('insert into arbor_migrations (name) values ($1)', [m.name])
        applied.push(m.name)
      }
      if (m.name === until) break
    }
    return applied
  })
}
