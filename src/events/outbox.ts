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
}
