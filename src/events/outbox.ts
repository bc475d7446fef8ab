import type { Db } from '../db'
import type { Node } from '../nodes/model'
import { insertMany } from './queries'
import { bumpRevision } from './revision'
import { eventsKey, WAKE_CHANNEL } from './waiters'

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
  /** a claim taken or ended (agents-and-app.md, 2); its fields sit at the top of the payload, beside `event` */
  | { type: 'node.claimed' | 'node.released'; claim: { nodeId: string; agent: string; expiresAt?: string } }

/**
 * On PGlite, every commit that wrote events says so here (at the commit, before the write
 * answers), with the events themselves: the built-in search applies them to its in-memory index
 * without reading the outbox, so a search never waits for the database, even while another
 * transaction (a 1,000-node import batch) holds it. The notification's payload is
 * `<token> <projectId>`; the events wait in this process's memory under that token until the
 * commit tells it, and `takeCommitted` hands them over. Those of a transaction that rolled back
 * are dropped when a later commit is told.
 * Not on PostgreSQL: a notification reaches the other replicas later than a client's next
 * request may, so a search there always reads the outbox.
 */
export const OUTBOX_COMMITTED = 'arbor_outbox_committed'

/** What a commit wrote to the outbox for one project, in seq order. */
export interface CommittedEvents {
  projectId: string
  events: CommittedEvent[]
}

export type CommittedEvent = { seq: number; payload: Record<string, any> }

const uncommitted = new Map<number, CommittedEvents>()
let lastToken = 0

/**
 * The project and events behind an OUTBOX_COMMITTED notification; `events` is undefined when
 * this process no longer holds them. Every listener of this process gets them (two search
 * backends on one database in tests); they are dropped once a later commit is told.
 * Notifications come in the order of the commits, so what is held from an earlier token belongs
 * to a transaction that rolled back, or was told already.
 */
export function takeCommitted(payload: string): { projectId: string; events?: CommittedEvents['events'] } {
  const space = payload.indexOf(' ')
  const token = Number(payload.slice(0, space))
  for (const t of uncommitted.keys()) if (t < token) uncommitted.delete(t)
  return { projectId: payload.slice(space + 1), events: uncommitted.get(token)?.events }
}

export async function emit(tx: Db, projectId: string, events: DomainEvent[], now = new Date()): Promise<void> {
  if (events.length === 0) return
  const timestamp = now.toISOString()
  const rows = events.map((e) => {
    const subject =
      'node' in e
        ? { node: { id: e.node.id, type: e.node.type, parentId: e.node.parentId, data: e.node.data } }
        : 'claim' in e
          ? e.claim
          : { iteration: e.iteration }
    return { type: e.type, payload: { event: e.type, project_id: projectId, timestamp, ...subject } }
  })
  const seqs = await insertMany(tx, projectId, rows)
  // the last lock a write takes (emit ends it): cached reads of every replica see the change
  await bumpRevision(tx, projectId)
  // held GET /events and canvas polls of every replica read again once this commits
  await tx.notify(WAKE_CHANNEL, eventsKey(projectId))
  if (tx.kind !== 'pglite') return
  const token = ++lastToken
  uncommitted.set(token, { projectId, events: rows.map((r, i) => ({ seq: seqs[i]!, payload: r.payload })) })
  await tx.notify(OUTBOX_COMMITTED, `${token} ${projectId}`)
}
