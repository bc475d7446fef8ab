import allVectorsSql from '../../sql/search/all-vectors.sql' with { type: 'text' }
import ancestorsManySql from '../../sql/search/ancestors-many.sql' with { type: 'text' }
import backfillProgressSql from '../../sql/search/backfill-progress.sql' with { type: 'text' }
import dropLeaseSql from '../../sql/search/drop-lease.sql' with { type: 'text' }
import eventsAllSinceSql from '../../sql/search/events-all-since.sql' with { type: 'text' }
import eventsSinceSql from '../../sql/search/events-since.sql' with { type: 'text' }
import forgetBackfillSql from '../../sql/search/forget-backfill.sql' with { type: 'text' }
import forgetVectorsSql from '../../sql/search/forget-vectors.sql' with { type: 'text' }
import getCursorSql from '../../sql/search/get-cursor.sql' with { type: 'text' }
import headSql from '../../sql/search/head.sql' with { type: 'text' }
import horizonSql from '../../sql/search/horizon.sql' with { type: 'text' }
import insertVectorsSql from '../../sql/search/insert-vectors.sql' with { type: 'text' }
import listAllNodesSql from '../../sql/search/list-all-nodes.sql' with { type: 'text' }
import listNodesSql from '../../sql/search/list-nodes.sql' with { type: 'text' }
import listUnbackfilledSql from '../../sql/search/list-unbackfilled.sql' with { type: 'text' }
import loadVectorsSql from '../../sql/search/load-vectors.sql' with { type: 'text' }
import markBackfilledSql from '../../sql/search/mark-backfilled.sql' with { type: 'text' }
import maxSeqSql from '../../sql/search/max-seq.sql' with { type: 'text' }
import pruneVectorsSql from '../../sql/search/prune-vectors.sql' with { type: 'text' }
import recentProjectsSql from '../../sql/search/recent-projects.sql' with { type: 'text' }
import setCursorSql from '../../sql/search/set-cursor.sql' with { type: 'text' }
import takeLeaseSql from '../../sql/search/take-lease.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'
import type { NodeData } from '../ports/node-data'
import { vectorToBase64 } from './hash'
import type { ReadPoint } from './project-index'

/** rev: the stored rev (sql/migrations/0020-revisions.sql), shown with formatRev */
export type NodeRow = { id: string; type: string; parent_id: string | null; data: NodeData; rev: string | number }
/** What search reads of an outbox payload (src/events/payload.ts): its event and, for a node event, the node. */
export type NodeEvent = { event: string; node?: { id: string; rev?: string; type: string; parentId: string | null; data: NodeData } }
export type EventRow = { seq: number; txid: string; payload: NodeEvent }

export const listNodes = (db: Db, projectId: string) => db.query<NodeRow>(listNodesSql, [projectId])
export const listAllNodes = (db: Db, after: [string, string], limit: number) =>
  db.query<NodeRow & { project_id: string }>(listAllNodesSql, [after[0], after[1], limit])
export const head = async (db: Db, projectId: string) => Number((await one<{ seq: number }>(db, headSql, [projectId]))!.seq)
export const maxSeq = async (db: Db) => Number((await one<{ seq: number }>(db, maxSeqSql))!.seq)
export const horizon = async (db: Db): Promise<ReadPoint> => {
  const row = (await one<{ horizon: Date; xmin: string }>(db, horizonSql))!
  return { at: new Date(row.horizon), xmin: BigInt(row.xmin) }
}
/** The read point after a read that started at `next`: xmin never moves back (see horizon.sql). */
export const advance = (last: ReadPoint, next: ReadPoint): ReadPoint => ({
  at: next.at,
  // biome-ignore lint/complexity/useMathMinMax: Math.max takes no bigint
  xmin: next.xmin > last.xmin ? next.xmin : last.xmin,
})
export const eventsSince = (db: Db, projectId: string, seq: number, since: ReadPoint, skip: number[]) =>
  db.query<EventRow>(eventsSinceSql, [projectId, seq, since.at.toISOString(), skip, String(since.xmin)])
export const eventsAllSince = (db: Db, seq: number, since: ReadPoint, skip: number[]) =>
  db.query<EventRow & { project_id: string }>(eventsAllSinceSql, [seq, since.at.toISOString(), skip, String(since.xmin)])
export const recentProjects = (db: Db, seq: number) => db.query<{ project_id: string; seq: number }>(recentProjectsSql, [seq])

/** Stored vectors of these texts, or all of the project's (`hashes` null): two statements, so each keeps a plan on its key. */
export const loadVectors = (db: Db, projectId: string, embedder: string, hashes: string[] | null) =>
  hashes === null
    ? db.query<{ text_hash: string; vector: Uint8Array }>(allVectorsSql, [projectId, embedder])
    : db.query<{ text_hash: string; vector: Uint8Array }>(loadVectorsSql, [projectId, embedder, hashes])
export const insertVectors = (db: Db, projectId: string, embedder: string, rows: [string, Float32Array][]) =>
  db.query(insertVectorsSql, [projectId, embedder, rows.map((r) => r[0]), rows.map((r) => vectorToBase64(r[1]))])
export const pruneVectors = (db: Db, projectId: string, embedder: string, live: string[]) =>
  db.query(pruneVectorsSql, [projectId, embedder, live])
export const markBackfilled = (db: Db, projectId: string, embedder: string) => db.query(markBackfilledSql, [projectId, embedder])
export const listUnbackfilled = async (db: Db, embedder: string, limit: number) =>
  (await db.query<{ id: string }>(listUnbackfilledSql, [embedder, limit])).map((r) => r.id)

/** How far the background backfill is for `embedder`: projects with nodes, those still waiting, and their nodes. */
export type BackfillProgress = { projects: number; waiting: number; waitingNodes: number }
export const backfillProgress = async (db: Db, embedder: string): Promise<BackfillProgress> => {
  const row = (await one<{ projects: number; waiting: number; waiting_nodes: number }>(db, backfillProgressSql, [embedder]))!
  return { projects: Number(row.projects), waiting: Number(row.waiting), waitingNodes: Number(row.waiting_nodes) }
}

export const ancestorsMany = (db: Db, projectId: string, ids: string[]) =>
  db.query<{ node_id: string; depth: number; id: string; type: string; label: string | null }>(ancestorsManySql, [projectId, ids])

export const getCursor = (db: Db, consumer: string) => one<{ seq: number; updated_at: Date }>(db, getCursorSql, [consumer])
export const setCursor = (db: Db, consumer: string, seq: number) => db.query(setCursorSql, [consumer, seq])
export const forgetEmbedder = async (db: Db, embedder: string) => {
  await db.query(forgetVectorsSql, [embedder])
  await db.query(forgetBackfillSql, [embedder])
}

/** Take or renew the lease `name` for `holder` for `ttlMs`; true when `holder` holds it. */
export const takeLease = async (db: Db, name: string, holder: string, ttlMs: number) =>
  (await db.query(takeLeaseSql, [name, holder, ttlMs])).length > 0
export const dropLease = (db: Db, name: string, holder: string) => db.query(dropLeaseSql, [name, holder])
