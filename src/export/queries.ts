import listNodesSql from '../../sql/export/list-nodes.sql' with { type: 'text' }
import type { Db } from '../db'
import type { NodeData } from '../ports/node-data'

export interface NodeRow {
  id: string
  type: 'goal' | 'need' | 'approach' | 'job' | 'task'
  parent_id: string | null
  data: NodeData
  created_at: Date
}

export const listNodes = (db: Db, projectId: string) => db.query<NodeRow>(listNodesSql, [projectId])
