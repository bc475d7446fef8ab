import bumpSql from '../../sql/revisions/bump.sql' with { type: 'text' }
import getSql from '../../sql/revisions/get.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'

/** Advance the project's revision (src/revisions/revision.ts). */
export const bumpRevision = (db: Db, projectId: string) => db.query(bumpSql, [projectId])

/** The project's revision as text, or undefined before its first change. */
export const revision = async (db: Db, projectId: string) => (await one<{ revision: string }>(db, getSql, [projectId]))?.revision
