import { randomUUID } from 'node:crypto'
import type { CommitHandOff, CommittedEvent } from '../ports/commits'

/**
 * On PGlite, every commit that wrote events says so on this channel (at the commit, before the write
 * answers), with the events themselves: the built-in search applies them to its in-memory index
 * without reading the outbox, so a search never waits for the database, even while another
 * transaction (a 1,000-node import batch) holds it. The notification's payload is
 * `<hand-off>:<token> <projectId>`; the events wait in the app's hand-off under that token until
 * the commit tells it, and `take` hands them over. Those of a transaction that rolled back
 * are dropped when a later commit is told.
 * Not on PostgreSQL: a notification reaches the other replicas later than a client's next
 * request may, so a search there always reads the outbox.
 */
export const OUTBOX_COMMITTED = 'arbor_outbox_committed'

/** The hand-off of one app (createDeps): its emits hold events here until their commit is told. */
export function createCommitHandOff(): CommitHandOff {
  const uncommitted = new Map<number, { projectId: string; events: CommittedEvent[] }>()
  let lastToken = 0
  // another app on the same database (tests) hears these notifications too: its tokens are not ours
  const id = randomUUID()
  return {
    async announce(tx, projectId, events) {
      const token = ++lastToken
      uncommitted.set(token, { projectId, events })
      await tx.notify(OUTBOX_COMMITTED, `${id}:${token} ${projectId}`)
    },
    /**
     * The project and events behind an OUTBOX_COMMITTED notification; `events` is undefined when
     * this hand-off no longer holds them, or never did (another app's commit on the same database:
     * its search reads the outbox instead); they are dropped once a later commit is told.
     * Notifications come in the order of the commits, so what is held from an earlier token belongs
     * to a transaction that rolled back, or was told already.
     */
    take(payload) {
      const space = payload.indexOf(' ')
      const colon = payload.indexOf(':')
      if (payload.slice(0, colon) !== id) return { projectId: payload.slice(space + 1) }
      const token = Number(payload.slice(colon + 1, space))
      for (const t of uncommitted.keys()) if (t < token) uncommitted.delete(t)
      return { projectId: payload.slice(space + 1), events: uncommitted.get(token)?.events }
    },
  }
}
