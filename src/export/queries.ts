import listNodesSql from '../../sql/export/list-nodes.sql' with { type: 'text' }
import type { Db } from '../db'

export interface NodeRow {
  id: string
  type: 'goal' | 'need' | 'approach' | 'job' | 'task'
  parent_id: string | null
  data: Record<string, any>
  created_at: Date
}

export const listNodes = (db: Db, projectId: string) => db.query<NodeRow>(listNodesSql, [projectId])
