import type { Db } from '../db'
import * as q from './queries'

/**
 * Presence (live.md, 3): "I am here", one per actor (user, agent, via) and project, kept in the
 * database so every replica lists it, and said on PRESENCE_CHANNEL so every replica's streams
 * hear each change (PostgreSQL NOTIFY; on PGlite this process). A leaf on the ports floor: the
 * node writes read the edit intents (./intents.ts), the live module (src/live) serves it.
 */
export const PRESENCE_CHANNEL = 'arbor_presence'
/** a post holds this long; posting again keeps it */
export const HOLD_SECONDS = 30

/** Who is present: history.md's actor without its key (the key does not matter). */
export interface PresenceActor {
  userId: string
  userName: string
  agent?: string
  via: string
}

/** Where an actor is: the node it looks at, the field it edits, a short note. */
export interface Place {
  nodeId?: string
  field?: string
  note?: string
}

/** One presence as GET /presence lists it. */
export interface Presence extends Place {
  actor: PresenceActor
  since: string
  expiresAt: string
  claim?: true
}

/** A change of presence as the stream says it (`event: presence`). */
export interface PresenceMessage extends Place {
  actor: PresenceActor
  state: 'here' | 'gone'
  claim?: true
}

export const actorKey = (a: PresenceActor) => `${a.userId}\n${a.agent ?? ''}\n${a.via}`

const iso = (d: Date | string) => new Date(d).toISOString()

const actorOf = (r: q.ActorCols): PresenceActor => ({
  userId: r.user_id,
  userName: r.user_name,
  ...(r.agent ? { agent: r.agent } : {}),
  via: r.via,
})

const placeOf = (r: { node_id: string | null; field: string | null; note: string | null }): Place => ({
  ...(r.node_id ? { nodeId: r.node_id } : {}),
  ...(r.field ? { field: r.field } : {}),
  ...(r.note ? { note: r.note } : {}),
})

const cols = (a: PresenceActor): q.ActorCols => ({ user_id: a.userId, user_name: a.userName, agent: a.agent ?? null, via: a.via })

/** Post (or renew) `actor`'s presence; `changed` when the stream should hear of it (new, moved, or a new note). */
export async function postPresence(db: Db, projectId: string, actor: PresenceActor, place: Place, now: Date) {
  const expiresAt = new Date(now.getTime() + HOLD_SECONDS * 1000)
  const row = (await q.upsert(
    db,
    projectId,
    actorKey(actor),
    cols(actor),
    { node_id: place.nodeId ?? null, field: place.field ?? null, note: place.note ?? null },
    now,
    expiresAt,
  ))!
  const wasLive = row.old_expires_at !== null && new Date(row.old_expires_at) > now
  const changed =
    !wasLive ||
    row.old_node_id !== (place.nodeId ?? null) ||
    row.old_field !== (place.field ?? null) ||
    row.old_note !== (place.note ?? null)
  const presence: Presence = { actor, ...place, since: iso(row.since), expiresAt: iso(expiresAt) }
  return { presence, changed }
}

/** End `actor`'s presence at once; the message for the stream when it was live. */
export async function endPresence(db: Db, projectId: string, actor: PresenceActor, now: Date): Promise<PresenceMessage | null> {
  const row = await q.remove(db, projectId, actorKey(actor), now)
  return row?.live ? { actor: actorOf(row), ...placeOf(row), state: 'gone' } : null
}

/** The project's live presence (posted), oldest first. */
export async function listPresence(db: Db, projectId: string, now: Date): Promise<Presence[]> {
  return (await q.list(db, projectId, now)).map((r) => ({
    actor: actorOf(r),
    ...placeOf(r),
    since: iso(r.since),
    expiresAt: iso(r.expires_at),
  }))
}

/** Delete what has run out; one `gone` message per presence, with its project. */
export async function expirePresence(db: Db, now: Date): Promise<{ projectId: string; message: PresenceMessage }[]> {
  return (await q.expire(db, now)).map((r) => ({ projectId: r.project_id, message: { actor: actorOf(r), ...placeOf(r), state: 'gone' } }))
}

/** Tell every replica's streams of the project (at the commit when `db` is a transaction). */
export function announcePresence(db: Db, projectId: string, message: PresenceMessage): Promise<void> {
  return db.notify(PRESENCE_CHANNEL, JSON.stringify({ projectId, message }))
}

/** The edit intent a node write read with its node (sql/nodes/lock-with-intent.sql: the row's `intent`), or null. */
export function heldIntent(row: q.IntentRow | null): { actor: PresenceActor; field: string; until: string } | null {
  return row && { actor: actorOf(row), field: row.field, until: iso(row.expires_at) }
}
