import type { Db } from '../db'
import type { Node } from '../nodes/model'
import { insertMany } from './queries'

/**
 * Domain events, written to the `events` outbox in the caller's transaction. The payload is
 * exactly the webhook payload of api.md (Events); webhooks, the pull feed and search read it.
 */
export type DomainEvent =
  | { type: 'node.added' | 'node.updated' | 'node.deleted'; node: Node }
  | {
      type: 'iteration.added' | 'iteration.updated' | 'iteration.deleted'
      iteration: { name: string; status?: string; previous_name?: string }
    }

/**
 * On PGlite, every commit that wrote events sends the project's id here (at the commit, before
 * the write answers): the built-in search then knows that nothing it has not seen was committed
 * and answers without reading the outbox, even while another transaction holds the database.
 * Not on PostgreSQL: a notification reaches the other replicas later than a client's next
 * request may, so a search there always reads the outbox.
 */
export const OUTBOX_COMMITTED = 'arbor_outbox_committed'

export async function emit(tx: Db, projectId: string, events: DomainEvent[], now = new Date()): Promise<void> {
  if (events.length === 0) return
  const timestamp = now.toISOString()
  const rows = events.map((e) => {
    const subject =
      'node' in e
        ? { node: { id: e.node.id, type: e.node.type, parentId: e.node.parentId, data: e.node.data } }
        : { iteration: e.iteration }
    return { type: e.type, payload: { event: e.type, project_id: projectId, timestamp, ...subject } }
  })
  await insertMany(tx, projectId, JSON.stringify(rows))
  if (tx.kind === 'pglite') await tx.notify(OUTBOX_COMMITTED, projectId)
}
