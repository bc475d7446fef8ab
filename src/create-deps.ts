import { AUTH_CHANNEL, AuthCache } from './accounts/auth-cache'
import { createWaker, type Deps } from './deps'
import { createWaiters } from './events/waiters'
import { createMetrics } from './metrics/service'
import { ReadCache } from './reads/cache'
import { ChangesHeard } from './revisions/heard'
import { Replicas } from './revisions/replicas'
import { REVISION_CHANNEL } from './revisions/revision'
import { createCommitHandOff } from './search/commits'
import { createSearch } from './search/engine'
import { createWebhookSender } from './webhooks/sender'

/**
 * The dependencies of one app, built once where it is composed (main.ts, a test, a bench).
 * Services get copies with a transaction as `db`; the search backend keeps this, the app's own.
 */
export function createDeps(base: Pick<Deps, 'config' | 'db' | 'log'> & Partial<Pick<Deps, 'now' | 'commits'>>): Deps {
  // a second app on the same PGlite handle in one process (a test's replica) passes the first's
  const commits = base.commits ?? createCommitHandOff()
  // PostgreSQL: the search and the replicas' lease on the loops' small pool (db/postgres.ts), so
  // one writer's statements stay on the connection it used last
  const background = base.db.root.background
  // PostgreSQL: a write that changed a project's reads or anyone's access answers only once every
  // replica holding a lease has heard of it; those replicas (and no other) answer kept reads and
  // the caller's access from memory, and forget both when the lease lapses
  const replicas =
    base.db.kind === 'postgres'
      ? new Replicas(
          background ?? base.db.root,
          () => {
            reads.forget()
            auth.clear()
          },
          base.log,
        )
      : undefined
  if (replicas) base.db.root.waitHeard?.([REVISION_CHANNEL, AUTH_CHANNEL], replicas)
  // what those replicas heard of each project: kept revisions and the search index rely on it
  const heard = replicas && new ChangesHeard(base.db.root, replicas, base.log)
  const search = createSearch({ ...base, db: background ?? base.db, commits, heard })
  const reads = new ReadCache({ db: base.db, now: () => deps.now(), maxBytes: base.config.readCacheBytes, heard })
  // follows the change notifications from now on (it caches nothing before)
  const auth = new AuthCache(base.db.root, replicas)
  const deps: Deps = {
    now: () => new Date(),
    ...createWaker(),
    ...base,
    search,
    // the clock is read through deps: tests move it by replacing deps.now
    reads,
    replicas: replicas ?? null,
    commits,
    auth,
    waiters: createWaiters(base.db, base.log),
    metrics: createMetrics({
      db: base.db,
      searchPending: () => search.memory().pendingNodes,
      searchOutboxReads: () => search.outboxReads?.(),
      searchBackfill: () => search.backfillProgress?.(),
      reads: () => reads.stats,
      replicaWaits: () => replicas?.stats ?? null,
    }),
    // read at every batch: tests and benches allow insecure receivers after the app is built
    webhookSender: createWebhookSender(() => base.config.webhookAllowInsecure),
  }
  return deps
}
