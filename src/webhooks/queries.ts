import claimDueSql from '../../sql/webhooks/claim-due.sql' with { type: 'text' }
import countByProjectSql from '../../sql/webhooks/count-by-project.sql' with { type: 'text' }
import deleteSql from '../../sql/webhooks/delete.sql' with { type: 'text' }
import fanOutSql from '../../sql/webhooks/fan-out.sql' with { type: 'text' }
import insertSql from '../../sql/webhooks/insert.sql' with { type: 'text' }
import listByProjectSql from '../../sql/webhooks/list-by-project.sql' with { type: 'text' }
import listDeliveriesSql from '../../sql/webhooks/list-deliveries.sql' with { type: 'text' }
import lockProjectSql from '../../sql/webhooks/lock-project.sql' with { type: 'text' }
import recordAttemptsSql from '../../sql/webhooks/record-attempts.sql' with { type: 'text' }
import updateSql from '../../sql/webhooks/update.sql' with { type: 'text' }
import type { Db } from '../db'
import { one, withoutFlushWait } from '../db/port'

export interface WebhookRow {
  id: string
  url: string
  events: string[]
  secret?: string
  created_at: Date
  last_delivery_at: Date | null
  last_status: number | null
  last_error: string | null
}

export interface ClaimedDelivery {
  id: string
  webhook_id: string
  attempts: number
  url: string
  secret: string
  event: string
  /** the event's payload as stored (JSON text) */
  payload: string
}

export interface DeliveryRow {
  id: string
  event: string
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  last_status: number | null
  last_error: string | null
  last_attempt_at: Date | null
  next_attempt_at: Date
  created_at: Date
}

export const lockProject = (db: Db, projectId: string) => db.query(lockProjectSql, [projectId])
export const countByProject = async (db: Db, projectId: string) => (await one<{ count: number }>(db, countByProjectSql, [projectId]))!.count
export const insert = (db: Db, w: { id: string; projectId: string; url: string; events: string[]; secret: string; now: Date }) =>
  one<WebhookRow>(db, insertSql, [w.id, w.projectId, w.url, JSON.stringify(w.events), w.secret, w.now])
export const listByProject = (db: Db, projectId: string) => db.query<WebhookRow>(listByProjectSql, [projectId])
export const update = (db: Db, projectId: string, id: string, set: { url?: string; events?: string[]; secret?: string }) =>
  one<WebhookRow>(db, updateSql, [projectId, id, set.url ?? null, set.events ? JSON.stringify(set.events) : null, set.secret ?? null])
export const remove = async (db: Db, projectId: string, id: string) => (await db.query(deleteSql, [projectId, id])).length > 0
export const listDeliveries = (db: Db, projectId: string, webhookId: string, limit: number) =>
  db.query<DeliveryRow>(listDeliveriesSql, [projectId, webhookId, limit])

// The fan-out, the claims and the outcomes are bookkeeping a crash may undo: a lost fan-out is
// made again from the cursor it did not move, a lost claim or outcome means the attempt runs
// again (with the same delivery id, which receivers dedupe on). So their commits do not wait
// for the disk, and the users' writes share fewer flushes with them (withoutFlushWait).

/**
 * Fan the committed events of projects with webhooks out into deliveries (at most `limit`
 * events per project), claiming the first `claim` of them for the caller until `leaseUntil`;
 * `held`: a committed event waits behind an older transaction still running.
 */
export const fanOut = (db: Db, limit: number, leaseUntil: Date, claim: number) =>
  withoutFlushWait(db, async (tx) => {
    const rows = await tx.query<
      { events: number; made: number; held: boolean } & { [K in keyof ClaimedDelivery]: ClaimedDelivery[K] | null }
    >(fanOutSql, [limit, leaseUntil, claim])
    const claimed = rows.filter((r): r is typeof r & ClaimedDelivery => r.id !== null)
    return { events: rows[0]!.events, made: rows[0]!.made, held: rows[0]!.held, claimed }
  })

export const claimDue = (db: Db, now: Date, leaseUntil: Date, limit: number) =>
  withoutFlushWait(db, (tx) => tx.query<ClaimedDelivery>(claimDueSql, [now, leaseUntil, limit]))

export interface AttemptOutcome {
  id: string
  /** the claim's attempts count: only that claim may record */
  attempts: number
  status: 'pending' | 'delivered' | 'failed'
  httpStatus: number | null
  error: string | null
  attemptedAt: Date
  nextAttemptAt: Date
}

/** Record the outcomes of a round in one statement, `outcomes` in the order they finished. */
export const recordAttempts = (db: Db, outcomes: AttemptOutcome[]) =>
  withoutFlushWait(db, (tx) =>
    tx.query(recordAttemptsSql, [
      JSON.stringify(
        outcomes.map((o, n) => ({
          n,
          id: o.id,
          attempts: o.attempts,
          status: o.status,
          http_status: o.httpStatus,
          error: o.error,
          attempted_at: o.attemptedAt.toISOString(),
          next_attempt_at: o.nextAttemptAt.toISOString(),
        })),
      ),
    ]),
  )
