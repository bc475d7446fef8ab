import claimPresenceSql from '../../sql/live/claim-presence.sql' with { type: 'text' }
import type { Db } from '../db'

export interface ClaimPresenceRow {
  node_id: string
  agent: string
  claimed_at: Date | string
  expires_at: Date | string
  actor: { userId?: string | null; userName?: string | null; via?: string } | null
}

export const claimPresence = (db: Db, projectId: string, now: Date) => db.query<ClaimPresenceRow>(claimPresenceSql, [projectId, now])
