import { authChanged } from '../accounts/auth-cache'
import type { Db } from '../db'
import type { Deps } from '../deps'
import { RefusalError } from '../errors'
import type { Loop } from '../loop'
import * as q from './queries'

/**
 * A project that an import (POST /import-okf, src/mutate/import-okf.ts) writes in chunks, each a
 * short transaction of its own, so that other tenants' requests run between them on PGlite's one
 * session (issue 50, 3). Until the last chunk commits the project is nobody's to see: it carries
 * an `import_lease` (migration 0029), is left out of GET /projects, and every request that names
 * it but the import's own is refused (`importingRefusal`, src/projects/access.ts), so search,
 * events, the stream and webhooks never reach it. Each chunk moves the lease on; one that ran out
 * belongs to an import whose process died, and `importCleanupLoop` removes it with all it holds.
 */

/** The lease an import's chunk sets: its project stays the import's until then (IMPORT_LEASE_SECONDS, default a minute). */
export const importLease = (deps: Pick<Deps, 'config' | 'now'>) => new Date(deps.now().getTime() + deps.config.importLeaseMs)

/** The answer to a request that names a project an import still writes. */
export const importingRefusal = (projectId: string) =>
  new RefusalError(409, 'project_importing', {
    message: `Project ${projectId} is still being imported: it can be read and written once the import is done`,
    _tip: 'Retry once POST /import-okf has answered; if the import fails, the project is removed.',
  })

/** In the transaction that created the project: it is the import's until the import ends. */
export async function beginImport(db: Db, projectId: string, lease: Date): Promise<void> {
  if (!(await q.beginImport(db, projectId, lease))) throw new Error(`import: project ${projectId} was not just created`)
}

/** Moves the lease on (or, with null, ends the import: the project appears); false: the project is gone. */
export const renewImport = (db: Db, projectId: string, lease: Date | null) => q.setImportLease(db, projectId, lease)

/**
 * Let other requests have the database for a while: until none of their statements waits or runs,
 * or `ms` have passed (the time the last chunk held it, so an import takes at most about half).
 */
export async function giveWay(db: Db, ms: number): Promise<void> {
  const until = performance.now() + ms
  await new Promise<void>((resolve) => setImmediate(resolve))
  while ((db.inFlight?.() ?? 0) > 0 && performance.now() < until) await Bun.sleep(1)
}

/** Rows of each big table removed per transaction while an import is taken away. */
const REMOVE_PART = 500

/**
 * Remove what a never-finished import wrote, in parts (each a short transaction, giving way
 * between them), then the project itself. Only a project still importing is touched.
 */
export async function removeImport(deps: Pick<Deps, 'db' | 'auth'>, projectId: string): Promise<void> {
  for (;;) {
    const started = performance.now()
    const removed = await deps.db.tx((tx) => q.deleteImportPart(tx, projectId, REMOVE_PART))
    if (removed === 0) break
    await giveWay(deps.db, performance.now() - started)
  }
  await deps.db.tx((tx) => q.deleteImport(tx, projectId))
  // a request may have cached the project as importing
  await authChanged(deps)
}

/**
 * The imports whose lease ran out before `now`. On PGlite one process holds the data directory, so
 * an import of an earlier process (its lease set before this one started, plus the lease) is over
 * too: a restart after a kill removes it at once, not a minute later.
 */
export async function removeAbandonedImports(deps: Pick<Deps, 'db' | 'auth' | 'log' | 'config'>, now: Date): Promise<string[]> {
  const started = deps.db.kind === 'pglite' ? performance.timeOrigin + deps.config.importLeaseMs : 0
  const before = new Date(Math.max(now.getTime(), started))
  const removed: string[] = []
  for (const { id } of await q.listAbandonedImports(deps.db, before)) {
    await removeImport(deps, id)
    deps.log.warn('import: removed the project of an import that never finished (its process stopped)', { projectId: id })
    removed.push(id)
  }
  return removed
}

/** Every lease (IMPORT_LEASE_SECONDS, or SCHEDULER_INTERVAL_MS when shorter), and within a second of the start: the projects of imports that will never finish. */
export const importCleanupLoop: Loop = {
  name: 'import-cleanup',
  everySeconds: (deps) => Math.min(deps.config.importLeaseMs, deps.config.schedulerIntervalMs) / 1000,
  tick: (deps, now) => removeAbandonedImports(deps, now),
}
