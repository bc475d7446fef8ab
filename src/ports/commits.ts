import type { Db } from '../db'

/** One event as a commit wrote it to the outbox. */
export type CommittedEvent = { seq: number; payload: Record<string, unknown> }

/**
 * PGlite only: the events a transaction wrote, handed to the built-in search at the commit
 * (src/search/commits.ts), so that it applies them without reading the outbox. Saving the
 * events (src/events/outbox.ts `saveOwn`) announces them inside the transaction; the search
 * takes them when the commit's notification arrives.
 */
export interface CommitHandOff {
  /** Hold `events` and say so on the outbox channel, in `tx` (told at its commit, never on a rollback). */
  announce(tx: Db, projectId: string, events: CommittedEvent[]): Promise<void>
  /** The project and events behind a notification; `events` is undefined when they are no longer held. */
  take(payload: string): { projectId: string; events?: CommittedEvent[] }
}
