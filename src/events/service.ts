import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { invalid } from '../errors'
import { requireProject } from '../projects/access'
import { orderPayload } from './payload'
import * as q from './queries'
import { eventsKey, waitFor } from './waiters'

/** Events stay readable for at least this long (the pull feed's promise). */
export const RETENTION_DAYS = 7
export const DEFAULT_LIMIT = 100
export const MAX_LIMIT = 500
/** GET /events?wait: the longest an empty page is held open (agents-and-app.md, 3). */
export const MAX_WAIT_SECONDS = 60

export { type EventPayload, orderPayload } from './payload'

const CURSOR = /^(\d{1,20})_(\d{1,20})$/
const MAX_BIGINT = 2n ** 63n - 1n

/** Cursors are opaque to clients; inside they are the (transaction id, seq) of the last event read. */
const encodeCursor = (row: Pick<q.EventRow, 'txid' | 'seq'>) => `${row.txid}_${row.seq}`

function decodeCursor(after: string | undefined) {
  if (after === undefined || after === '') return null
  const m = CURSOR.exec(after)
  if (!m)
    throw invalid('after must be a nextCursor returned by this endpoint', {
      _tip: 'Omit after to start from the oldest event kept (7 days).',
    })
  // both are bigints in the database: a number past their range is no cursor of ours
  if (BigInt(m[1]!) > MAX_BIGINT || BigInt(m[2]!) > BigInt(Number.MAX_SAFE_INTEGER))
    throw invalid('after must be a nextCursor returned by this endpoint', {
      _tip: 'Omit after to start from the oldest event kept (7 days).',
    })
  return { txid: m[1]!, seq: Number(m[2]) }
}

/** GET /events: the project's events after a cursor, oldest first, the same payloads webhooks carry. */
export async function listEvents(
  deps: Deps,
  user: User,
  query: { projectId: string; after?: string; limit?: string; wait?: string },
  /** told when a request that asked to wait found events at once (it is then counted by the rate limit) */
  answeredAtOnce: () => void = () => {},
) {
  const { project } = await requireProject(deps, user, query.projectId)
  const limit = query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit)
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw invalid(`limit must be an integer from 1 to ${MAX_LIMIT}`)
  const wait = parseWait(query.wait)
  const after = decodeCursor(query.after)
  const read = () => q.listPage(deps.db, project.id, after, limit)
  // with wait, an empty page is held until a commit of this project wakes it (no polling meanwhile)
  let reads = 0
  const rows = wait
    ? ((await waitFor(deps.waiters, [eventsKey(project.id)], Date.now() + wait * 1000, async () => {
        const page = await read()
        if (++reads === 1 && page.length) answeredAtOnce()
        return page.length ? page : null
      })) ?? [])
    : await read()
  const last = rows.at(-1)
  return {
    events: rows.map((r) => orderPayload(r.payload)),
    nextCursor: last ? encodeCursor(last) : query.after || null,
    hasMore: rows.length === limit,
    _meta: {
      _tip:
        rows.length === limit
          ? 'More events wait: call again at once with after=nextCursor.'
          : 'Up to date. Poll again later with after=nextCursor; events are kept for 7 days.',
    },
  }
}

/** `wait` of GET /events: whole seconds, 0 to MAX_WAIT_SECONDS (absent: 0). */
export function parseWait(wait: string | undefined): number {
  if (wait === undefined || wait === '') return 0
  const n = Number(wait)
  if (!/^\d{1,2}$/.test(wait) || n > MAX_WAIT_SECONDS) throw invalid(`wait must be an integer from 0 to ${MAX_WAIT_SECONDS} (seconds)`)
  return n
}

/**
 * The cursor of the project's newest readable event ('' before any): it changes whenever the
 * tree or its iterations change, so the live canvas's long poll can tell the page to reload.
 * It is also a valid `after` for GET /events.
 */
export async function latestCursor(deps: Deps, projectId: string): Promise<string> {
  const row = await q.latest(deps.db, projectId)
  return row ? encodeCursor(row) : ''
}

/** The retention loop: drop events past the window (see sql/events/delete-expired.sql). */
export async function deleteExpiredEvents(deps: Deps, now: Date) {
  const deleted = await q.deleteExpired(deps.db, new Date(now.getTime() - RETENTION_DAYS * 86_400_000))
  if (deleted) deps.log.info('events expired', { deleted })
  return deleted
}
