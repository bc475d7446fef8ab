import lockProjectSql from '../../sql/work/lock-project.sql' with { type: 'text' }
import type { Db } from '../db'

export const lockProject = (db: Db, projectId: string) => db.query(lockProjectSql, [projectId])
