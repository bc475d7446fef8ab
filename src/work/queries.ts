import deferSql from '../../sql/work/defer.sql' with { type: 'text' }
import flushSql from '../../sql/work/flush.sql' with { type: 'text' }
import hasBlockedSql from '../../sql/work/has-blocked.sql' with { type: 'text' }
import lockProjectSql from '../../sql/work/lock-project.sql' with { type: 'text' }
import readyCountsSql from '../../sql/work/ready-counts.sql' with { type: 'text' }
import readyPageSql from '../../sql/work/ready-page.sql' with { type: 'text' }
import readyPageIterationSql from '../../sql/work/ready-page-iteration.sql' with { type: 'text' }
import statesSql from '../../sql/work/states.sql' with { type: 'text' }
import unblockedSql from '../../sql/work/unblocked.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'

export interface ReadyRow {
  node_id: string
  type: string
  approach_id: string | null
  sort_key: unknown[]
}

export const lockProject = (db: Db, projectId: string) => db.query(lockProjectSql, [projectId])
/** A page of GET /ready, of the whole project or of one iteration (two statements: each has an index plan of its own). */
export const readyPage = (db: Db, projectId: string, iteration: string | null, now: Date, after: unknown[] | null, limit: number) => {
  const from = after === null ? null : JSON.stringify(after)
  return iteration === null
    ? db.query<ReadyRow>(readyPageSql, [projectId, now, from, limit])
    : db.query<ReadyRow>(readyPageIterationSql, [projectId, iteration, now, from, limit])
}
export const readyCounts = async (db: Db, projectId: string, iteration: string | null, now: Date) =>
  (await one<{ unblocked: number; claimed: number; blocked: number }>(db, readyCountsSql, [projectId, iteration, now]))!
export const states = (db: Db, projectId: string, nodeIds: string[]) =>
  db.query<{ node_id: string; open: boolean; blocked: boolean }>(statesSql, [projectId, nodeIds])
export const hasBlocked = async (db: Db, projectId: string) => !!(await one<{ blocked: boolean }>(db, hasBlockedSql, [projectId]))?.blocked
export const unblocked = async (db: Db, projectId: string, now: Date) =>
  (await db.query<{ node_id: string }>(unblockedSql, [projectId, now])).map((r) => r.node_id)
/** A batch's or a revert's node writes set their work-state changes aside until `flushWork` (migration 0023). */
export const deferWork = (db: Db) => db.query(deferSql)
export const flushWork = (db: Db) => db.query(flushSql)
