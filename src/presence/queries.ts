import expireSql from '../../sql/presence/expire.sql' with { type: 'text' }
import listSql from '../../sql/presence/list.sql' with { type: 'text' }
import removeSql from '../../sql/presence/remove.sql' with { type: 'text' }
import upsertSql from '../../sql/presence/upsert.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'

export interface ActorCols {
  user_id: string
  user_name: string
  agent: string | null
  via: string
}
export interface PresenceRow extends ActorCols {
  node_id: string | null
  field: string | null
  note: string | null
  since: Date | string
  expires_at: Date | string
}

export const upsert = (
  db: Db,
  projectId: string,
  actorKey: string,
  a: ActorCols,
  place: Pick<PresenceRow, 'node_id' | 'field' | 'note'>,
  now: Date,
  expiresAt: Date,
) =>
  one<{
    since: Date | string
    old_node_id: string | null
    old_field: string | null
    old_note: string | null
    old_expires_at: Date | string | null
  }>(db, upsertSql, [projectId, actorKey, a.user_id, a.user_name, a.agent, a.via, place.node_id, place.field, place.note, now, expiresAt])

export const remove = (db: Db, projectId: string, actorKey: string, now: Date) =>
  one<Omit<PresenceRow, 'since' | 'expires_at'> & { live: boolean }>(db, removeSql, [projectId, actorKey, now])

export const list = (db: Db, projectId: string, now: Date) => db.query<PresenceRow>(listSql, [projectId, now])

export const expire = (db: Db, now: Date) => db.query<Omit<PresenceRow, 'since' | 'expires_at'> & { project_id: string }>(expireSql, [now])

/** An edit intent as a node write reads it with its node (sql/nodes/lock-with-intent.sql: `intent`, a JSON object). */
export type IntentRow = ActorCols & { field: string; expires_at: string }
