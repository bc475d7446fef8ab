import enqueueSql from '../../sql/view/enqueue.sql' with { type: 'text' }
import getStateSql from '../../sql/view/get-state.sql' with { type: 'text' }
import heartbeatSql from '../../sql/view/heartbeat.sql' with { type: 'text' }
import pendingSql from '../../sql/view/pending.sql' with { type: 'text' }
import pruneSql from '../../sql/view/prune.sql' with { type: 'text' }
import reportSql from '../../sql/view/report.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'
import type { QueuedCommand, ViewName } from './model'

export interface StateRow {
  view_mode: 'tree' | 'matrix'
  selected_iteration: string | null
  expanded_nodes: string[]
  focused_goals: string[]
  selected_node: string | null
  updated_at: Date | string | null
  last_applied: { id: number | string; type: string; at: string } | null
  command_seq: number | string
  last_client_seen: Date | string | null
}

export interface CommandRow {
  seq: number | string
  command: QueuedCommand
  created_at: Date | string
}

export const enqueue = async (db: Db, projectId: string, view: ViewName, command: unknown, now: Date) =>
  Number((await one<{ seq: number | string }>(db, enqueueSql, [projectId, JSON.stringify(command), now, view]))!.seq)
export const getState = (db: Db, projectId: string, view: ViewName) => one<StateRow>(db, getStateSql, [projectId, view])
export const pending = (db: Db, projectId: string, view: ViewName, after: number) =>
  db.query<CommandRow>(pendingSql, [projectId, after, view])
export const heartbeat = (db: Db, projectId: string, view: ViewName, now: Date) => db.query(heartbeatSql, [projectId, now, view])
export const prune = (db: Db, projectId: string, view: ViewName, upto: number) => db.query(pruneSql, [projectId, upto, view])

export interface Report {
  appliedId: number | null
  appliedType: string | null
  viewMode: 'tree' | 'matrix'
  selectedIteration: string | null
  expandedNodes: string[]
  focusedGoals: string[]
  selectedNode: string | null
}
export const report = (db: Db, projectId: string, view: ViewName, now: Date, r: Report) =>
  db.query(reportSql, [
    projectId,
    now,
    r.appliedId,
    r.appliedType,
    r.viewMode,
    r.selectedIteration,
    JSON.stringify(r.expandedNodes),
    JSON.stringify(r.focusedGoals),
    r.selectedNode,
    view,
  ])
