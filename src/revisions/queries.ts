import bumpSql from '../../sql/revisions/bump.sql' with { type: 'text' }
import getSql from '../../sql/revisions/get.sql' with { type: 'text' }
import barrierSql from '../../sql/revisions/replica-barrier.sql' with { type: 'text' }
import forgetPredecessorsSql from '../../sql/revisions/replica-forget-predecessors.sql' with { type: 'text' }
import leaveSql from '../../sql/revisions/replica-leave.sql' with { type: 'text' }
import renewSql from '../../sql/revisions/replica-renew.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'

/** Advance the project's revision (src/revisions/revision.ts). */
export const bumpRevision = (db: Db, projectId: string) => db.query(bumpSql, [projectId])

/** The project's revision as text, or undefined before its first change. */
export const revision = async (db: Db, projectId: string) => (await one<{ revision: string }>(db, getSql, [projectId]))?.revision

/** Take or renew replica `id`'s lease for `ms` (src/revisions/replicas.ts). */
export const renewLease = (db: Db, id: string, ms: number) => db.query(renewSql, [id, ms])

/** Give replica `id`'s lease up. */
export const leave = (db: Db, id: string) => db.query(leaveSql, [id])

/** Drop the leases of ids starting with `prefix`, except `id`'s. */
export const forgetPredecessors = (db: Db, prefix: string, id: string) => db.query(forgetPredecessorsSql, [prefix, id])

/** Send `payload` on `channel` and list the replicas whose lease is live: [id, ms it still runs]. */
export const barrier = async (db: Db, channel: string, payload: string) =>
  (await one<{ live: [string, number][] }>(db, barrierSql, [channel, payload]))?.live ?? []
