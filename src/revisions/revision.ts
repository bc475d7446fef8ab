import type { Db } from '../db'
import * as q from './queries'

/**
 * A project's revision: a counter that advances, inside the write's own transaction, with every
 * committed change of what the project's reads return (nodes, iterations, claims, its name).
 * Every write that has events advances it through a trigger on the outbox table, deferred to the
 * commit (migration 0013), so an open transaction holds no lock on it; saving the events
 * (src/events/outbox.ts `saveOwn`) then calls `revisionAdvanced`. The few changes without an
 * event call `bumpRevision` (the row locked from then to the commit): those that record changes
 * (history: updateIteration of gitTags or sortOrder, migration 0036) and those that record none
 * (a project renamed, a claim renewed: short transactions), whose outbox is marked `revised`;
 * src/events/outbox.ts `saveOwn` bumps it once for either. The guard in test/reads-cache.test.ts lists the SQL that writes those tables,
 * and test/reads-cache.property.test.ts runs every write against every cached read.
 *
 * Cached reads (src/reads/) are keyed by it. The commit also says so on REVISION_CHANNEL, which
 * on PGlite reaches this process's cache before the write answers, and on PostgreSQL reaches
 * every replica holding a lease before the write answers (src/revisions/replicas.ts).
 */
export const REVISION_CHANNEL = 'arbor_revision'

/** Advance `projectId`'s revision in `tx`'s transaction; the row stays locked until it ends. */
export async function bumpRevision(tx: Db, projectId: string): Promise<void> {
  await q.bumpRevision(tx, projectId)
  await tx.notify(REVISION_CHANNEL, projectId)
}

/** Say on REVISION_CHANNEL, at `tx`'s commit, that `projectId`'s revision advanced (the outbox's trigger advanced it). */
export async function revisionAdvanced(tx: Db, projectId: string): Promise<void> {
  await tx.notify(REVISION_CHANNEL, projectId)
}

/** The project's committed revision, by one primary-key lookup ('0' before its first change). */
export async function readRevision(db: Db, projectId: string): Promise<string> {
  return (await q.revision(db, projectId)) ?? '0'
}
