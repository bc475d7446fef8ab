import bumpSql from '../../sql/revisions/bump.sql' with { type: 'text' }
import getSql from '../../sql/revisions/get.sql' with { type: 'text' }
import signalSql from '../../sql/revisions/replica-signal.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'

/** Advance the project's revision (src/revisions/revision.ts). */
export const bumpRevision = (db: Db, projectId: string) => db.query(bumpSql, [projectId])

/** The project's revision as text, or undefined before its first change. */
export const revision = async (db: Db, projectId: string) => (await one<{ revision: string }>(db, getSql, [projectId]))?.revision

/** Send a replica's marker or acknowledgement on `channel` (no wait for the disk). */
export const signal = (db: Db, channel: string, payload: string) => db.query(signalSql, [channel, payload])
