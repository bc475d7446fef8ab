import byTokenSql from '../../sql/claims/by-token.sql' with { type: 'text' }
import endNodesSql from '../../sql/claims/end-nodes.sql' with { type: 'text' }
import extendForReaderSql from '../../sql/claims/extend-for-reader.sql' with { type: 'text' }
import extendTokensSql from '../../sql/claims/extend-tokens.sql' with { type: 'text' }
import heldByKeySql from '../../sql/claims/held-by-key.sql' with { type: 'text' }
import liveSql from '../../sql/claims/live.sql' with { type: 'text' }
import lockNodesSql from '../../sql/claims/lock-nodes.sql' with { type: 'text' }
import nextExpirySql from '../../sql/claims/next-expiry.sql' with { type: 'text' }
import releaseSql from '../../sql/claims/release.sql' with { type: 'text' }
import renewSql from '../../sql/claims/renew.sql' with { type: 'text' }
import takeSql from '../../sql/claims/take.sql' with { type: 'text' }
import tryHoldSql from '../../sql/claims/try-hold.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'

export interface ClaimRow {
  node_id: string
  agent: string
  expires_at: Date | string
}
export type LockedRow = ClaimRow & { token_hash: string }

export const take = (
  db: Db,
  projectId: string,
  nodeId: string,
  agent: string,
  tokenHash: string,
  expiresAt: Date,
  now: Date,
  leaseSeconds: number,
  keyId: string | null = null,
) => one<ClaimRow>(db, takeSql, [projectId, nodeId, agent, tokenHash, expiresAt, now, leaseSeconds, keyId])
/** Whether the live claim of `nodeId` has this token and was taken with this key. */
export const heldByKey = async (db: Db, projectId: string, nodeId: string, tokenHash: string, keyId: string, now: Date) =>
  !!(await one<{ held: boolean }>(db, heldByKeySql, [projectId, nodeId, tokenHash, keyId, now]))?.held
export const tryHold = async (db: Db, projectId: string, nodeId: string) =>
  !!(await one<{ held: boolean }>(db, tryHoldSql, [projectId, nodeId]))?.held
export const extendTokens = (db: Db, projectId: string, tokenHashes: string[], now: Date) =>
  db.query<ClaimRow>(extendTokensSql, [projectId, tokenHashes, now])
export const extendForReader = (db: Db, projectId: string, nodeId: string, agent: string, now: Date) =>
  db.query<ClaimRow>(extendForReaderSql, [projectId, nodeId, agent, now])
export const live = (db: Db, projectId: string, now: Date) => db.query<ClaimRow>(liveSql, [projectId, now])
export const lockNodes = (db: Db, projectId: string, nodeIds: string[]) => db.query<LockedRow>(lockNodesSql, [projectId, nodeIds])
export const byToken = (db: Db, projectId: string, tokenHash: string) => one<ClaimRow>(db, byTokenSql, [projectId, tokenHash])
export const renew = (db: Db, projectId: string, tokenHash: string, expiresAt: Date, now: Date) =>
  one<ClaimRow>(db, renewSql, [projectId, tokenHash, expiresAt, now])
export const release = (db: Db, projectId: string, tokenHash: string, now: Date) =>
  one<Omit<ClaimRow, 'expires_at'>>(db, releaseSql, [projectId, tokenHash, now])
export const endNodes = (db: Db, projectId: string, nodeIds: string[], now: Date) =>
  db.query<Omit<ClaimRow, 'expires_at'>>(endNodesSql, [projectId, nodeIds, now])
export const nextExpiry = (db: Db, projectId: string, now: Date) =>
  one<{ expires_at: Date | string | null }>(db, nextExpirySql, [projectId, now])
