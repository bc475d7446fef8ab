import changelogGetSql from '../../sql/changelog/get.sql' with { type: 'text' }
import changelogLatestSql from '../../sql/changelog/latest-for-node.sql' with { type: 'text' }
import changelogListSql from '../../sql/changelog/list.sql' with { type: 'text' }
import changelogRestoredSql from '../../sql/changelog/mark-restored.sql' with { type: 'text' }
import allocateIdLockingParentSql from '../../sql/nodes/allocate-id-locking-parent.sql' with { type: 'text' }
import allocateIdsSql from '../../sql/nodes/allocate-ids.sql' with { type: 'text' }
import allocateTaskIdCountingMemosSql from '../../sql/nodes/allocate-task-id-counting-memos.sql' with { type: 'text' }
import ancestorsSql from '../../sql/nodes/ancestors.sql' with { type: 'text' }
import blockerEdgesSql from '../../sql/nodes/blocker-edges.sql' with { type: 'text' }
import claimUnclassifiedSql from '../../sql/nodes/claim-unclassified.sql' with { type: 'text' }
import countByTypeSql from '../../sql/nodes/count-by-type.sql' with { type: 'text' }
import countOpenMemosSql from '../../sql/nodes/count-open-memos.sql' with { type: 'text' }
import countOwnedSql from '../../sql/nodes/count-owned.sql' with { type: 'text' }
import deleteManySql from '../../sql/nodes/delete-many.sql' with { type: 'text' }
import getManySql from '../../sql/nodes/get-many.sql' with { type: 'text' }
import insertManySql from '../../sql/nodes/insert-many.sql' with { type: 'text' }
import listSql from '../../sql/nodes/list.sql' with { type: 'text' }
import lockCapOwnerSql from '../../sql/nodes/lock-cap-owner.sql' with { type: 'text' }
import lockManySql from '../../sql/nodes/lock-many.sql' with { type: 'text' }
import lockOneSql from '../../sql/nodes/lock-one.sql' with { type: 'text' }
import lockWithIntentSql from '../../sql/nodes/lock-with-intent.sql' with { type: 'text' }
import moveIterationSql from '../../sql/nodes/move-iteration.sql' with { type: 'text' }
import reserveIdSql from '../../sql/nodes/reserve-id.sql' with { type: 'text' }
import setClassifiedSql from '../../sql/nodes/set-classified.sql' with { type: 'text' }
import setClassifiedManySql from '../../sql/nodes/set-classified-many.sql' with { type: 'text' }
import siblingsSql from '../../sql/nodes/siblings.sql' with { type: 'text' }
import siblingsOfSql from '../../sql/nodes/siblings-of.sql' with { type: 'text' }
import subtreeSql from '../../sql/nodes/subtree.sql' with { type: 'text' }
import tryLockWorkSql from '../../sql/nodes/try-lock-work.sql' with { type: 'text' }
import updateSql from '../../sql/nodes/update.sql' with { type: 'text' }
import withAncestorsSql from '../../sql/nodes/with-ancestors.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'
import type { NodeData } from '../ports/node-data'
import type { IntentRow } from '../presence/intents'
import type { Node, NodeType } from './model'

export type NodeRow = {
  id: string
  type: NodeType
  parent_id: string | null
  data: NodeData
  created_at: Date
  /** the stored rev (sql/migrations/0020-revisions.sql); field_revs only where a write locks the row */
  rev: string | number
  field_revs?: Record<string, unknown>
}
export type TreeRow = NodeRow & { depth: number }
/** A deletion (the changelog logs nothing else: `action` is its column's default) and the node in full. */
export type ChangelogRow = { id: number; node_id: string; action: 'delete'; node: Node; deleted_at: Date; restored_at: Date | null }

export const getMany = (db: Db, projectId: string, ids: string[]) => db.query<NodeRow>(getManySql, [projectId, ids])
/** Each approach of the project that names blockers, with its blockedBy (the cycle check's graph). */
export const blockerEdges = (db: Db, projectId: string) => db.query<{ id: string; blocked_by: unknown[] }>(blockerEdgesSql, [projectId])
/** getMany for a write: the rows stay locked until its transaction ends (sql/nodes/lock-many.sql). */
export const lockMany = (db: Db, projectId: string, ids: string[]) => db.query<NodeRow>(lockManySql, [projectId, ids])
/** lockMany for one id (sql/nodes/lock-one.sql: its generic plan probes the key whatever the statistics). */
export const lockOne = (db: Db, projectId: string, id: string) => db.query<NodeRow>(lockOneSql, [projectId, id])
/**
 * lockMany for the one node an update names, with the live edit intents on `fields` of it (none
 * looked for when empty), in one statement: the node's columns are null when it does not exist.
 */
export const lockWithIntent = async (db: Db, projectId: string, id: string, fields: string[], now: Date) =>
  (await one<Partial<NodeRow> & { intents: IntentRow[] | null }>(db, lockWithIntentSql, [projectId, id, fields, now]))!
export const withAncestors = (db: Db, projectId: string, ids: string[]) => db.query<NodeRow>(withAncestorsSql, [projectId, ids])
export const list = (db: Db, projectId: string, type: string | null, iteration: string | null) =>
  db.query<NodeRow>(listSql, [projectId, type, iteration])
export const countByType = (db: Db, projectId: string) => db.query<{ type: NodeType; count: number }>(countByTypeSql, [projectId])

export interface InsertRow {
  id: string
  type: NodeType
  parent_id: string | null
  data: Record<string, unknown>
  created_at: string | null
  classified: boolean
}
/** Rows per insert statement: on PGlite a statement holds the server's thread while it runs (src/db/pglite.ts). */
const INSERT_CHUNK = 200

/** Insert `rows`; returns each one's id and stored rev (in no promised order): the rest is what was sent. */
export async function insertMany(db: Db, projectId: string, rows: InsertRow[]): Promise<Pick<NodeRow, 'id' | 'rev'>[]> {
  const out: Pick<NodeRow, 'id' | 'rev'>[] = []
  for (let i = 0; i < rows.length; i += INSERT_CHUNK)
    out.push(...(await db.query<Pick<NodeRow, 'id' | 'rev'>>(insertManySql, [projectId, JSON.stringify(rows.slice(i, i + INSERT_CHUNK))])))
  return out
}
/** `key`: the one key of `data` the caller expects to change, if it knows one (a hint the statement checks). */
export const update = (
  db: Db,
  projectId: string,
  id: string,
  parentId: string | null,
  data: unknown,
  classified: boolean,
  key: string | null = null,
) => one<NodeRow>(db, updateSql, [projectId, id, parentId, JSON.stringify(data), classified, key])
export const subtree = (db: Db, projectId: string, rootIds: string[]) => db.query<TreeRow>(subtreeSql, [projectId, rootIds])
export const ancestors = (db: Db, projectId: string, id: string) => db.query<NodeRow>(ancestorsSql, [projectId, id])
export const siblings = (db: Db, projectId: string, parentId: string, id: string) =>
  db.query<NodeRow>(siblingsSql, [projectId, parentId, id])
export const siblingsOf = (db: Db, projectId: string, id: string) => db.query<NodeRow>(siblingsOfSql, [projectId, id])
export const deleteMany = (db: Db, projectId: string, ids: string[]) => db.query(deleteManySql, [projectId, ids, null, null])
/** deleteMany, and `node` (deleted by name) logged to the changelog in the same statement: the changelog entry's id. */
export const deleteLogged = async (db: Db, projectId: string, ids: string[], node: Node) => {
  const rows = await db.query<{ changelog_id: number | null }>(deleteManySql, [projectId, ids, node.id, JSON.stringify(node)])
  return rows.find((r) => r.changelog_id !== null)!.changelog_id!
}

/** Reserve `n` new numbers for a type; returns the first one. */
export async function allocateIds(db: Db, projectId: string, type: NodeType, n: number): Promise<number> {
  const last = (await one<{ last: number }>(db, allocateIdsSql, [projectId, type, n]))!.last
  return last - n + 1
}
/** One new number for a type, and the parent the new node goes under read and locked (null columns: no such node), in one statement. */
export const allocateIdLockingParent = async (db: Db, projectId: string, type: NodeType, parentId: string) =>
  (await one<Partial<NodeRow> & { last: number }>(db, allocateIdLockingParentSql, [projectId, type, parentId]))!
/** One new task number, and the project's open memos (their kept count), in one statement. */
export const allocateTaskIdCountingMemos = async (db: Db, projectId: string) =>
  (await one<{ last: number; memos: number }>(db, allocateTaskIdCountingMemosSql, [projectId]))!
export const reserveId = (db: Db, projectId: string, type: NodeType, n: number) => db.query(reserveIdSql, [projectId, type, n])

export const countOwned = async (db: Db, ownerId: string) => (await one<{ count: number }>(db, countOwnedSql, [ownerId]))!.count
/** Inside a transaction: holds the owner's cap lock until it ends. */
export const lockCapOwner = async (db: Db, ownerId: string) => {
  await db.query(lockCapOwnerSql, [ownerId])
}
export const countOpenMemos = async (db: Db, projectId: string) => (await one<{ count: number }>(db, countOpenMemosSql, [projectId]))!.count
export const claimUnclassified = (db: Db, limit: number) =>
  db.query<{ project_id: string; id: string; data: NodeData }>(claimUnclassifiedSql, [limit])
export const setClassified = (db: Db, projectId: string, id: string, data: unknown) =>
  one<NodeRow>(db, setClassifiedSql, [projectId, id, JSON.stringify(data)])
export const setClassifiedMany = (db: Db, rows: { project_id: string; id: string; data: unknown }[]) =>
  db.query<NodeRow & { project_id: string }>(setClassifiedManySql, [JSON.stringify(rows)])
/** Of these projects, those whose work lock this transaction now holds: each tried, none waited for (PostgreSQL). */
export const tryLockWork = async (db: Db, projectIds: string[]) =>
  (await one<{ locked: string[] }>(db, tryLockWorkSql, [projectIds]))!.locked
export const moveIteration = (db: Db, projectId: string, from: string, to: string) =>
  db.query<NodeRow>(moveIterationSql, [projectId, from, to])

export const changelogGet = (db: Db, projectId: string, id: number) => one<ChangelogRow>(db, changelogGetSql, [projectId, id])
export const changelogLatest = (db: Db, projectId: string, nodeId: string) => one<ChangelogRow>(db, changelogLatestSql, [projectId, nodeId])
export const changelogMarkRestored = (db: Db, id: number) => db.query(changelogRestoredSql, [id])
export const changelogList = (db: Db, projectId: string, limit: number) => db.query<ChangelogRow>(changelogListSql, [projectId, limit])
