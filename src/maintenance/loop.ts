// Autovacuum's work, for PGlite. PostgreSQL in single-user mode runs no autovacuum: without it
// the planner keeps the statistics of a table's first rows (an empty webhook_deliveries made
// the outcome update a hash join over a sequential scan, whose cost then grew with every
// delivery), and updated tables keep their dead rows forever. On a PostgreSQL server the
// server's own autovacuum does this, and this loop does nothing.

import type { Db } from '../db'
import type { Loop } from '../loop'
import { driftedTables, refresh } from './queries'

/** Analyze (and vacuum, past its threshold) every table that drifted; returns what was done. */
export async function maintain(db: Db): Promise<{ analyzed: string[]; vacuumed: string[] }> {
  const done = { analyzed: [] as string[], vacuumed: [] as string[] }
  if (db.kind !== 'pglite') return done
  for (const t of await driftedTables(db)) {
    await refresh(db, t)
    ;(t.vacuum ? done.vacuumed : done.analyzed).push(t.table)
  }
  return done
}

/** Every 30 s: each table is looked at once it changed by a tenth, as autovacuum would. */
export const pgliteMaintenanceLoop: Loop = {
  name: 'pglite-maintenance',
  everySeconds: () => 30,
  tick: (deps) => maintain(deps.db),
}
