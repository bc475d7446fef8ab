import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { afterAccess } from '../http/action-schema'
import { requireProject } from '../projects/access'
import { CURSOR, DEFAULT_LIMIT, EventsQuery } from './model'
import { orderPayload } from './payload'
import * as q from './queries'
import { eventsKey, waitFor } from './waiters'

/** Events stay readable for at least this long (the pull feed's promise). */
export const RETENTION_DAYS = 7
export { MAX_WAIT_SECONDS } from './model'
export { type EventPayload, orderPayload } from './payload'

/** Cursors are opaque to clients; inside they are the (transaction id, seq) of the last event read. */
const encodeCursor = (row: Pick<q.EventRow, 'txid' | 'seq'>) => `${row.txid}_${row.seq}`

/** A cursor EventsQuery accepted ('' and absent: from the start). */
function decodeCursor(after: string | undefined) {
  const m = after ? CURSOR.exec(after) : null
  return m ? { txid: m[1]!, seq: Number(m[2]) } : null
}

/** GET /events: the project's events after a cursor, oldest first, the same payloads webhooks carry. */
export async function listEvents(
  deps: Deps,
  user: User,
  query: Record<string, string>,
  /** told when the request goes to sleep waiting for events (only then does the rate limit leave it uncounted) */
  sleeping: () => void = () => {},
) {
  const { project, input: checked } = await afterAccess((id) => requireProject(deps, user, id), 'query', EventsQuery, query)
  const limit = checked.limit === undefined ? DEFAULT_LIMIT : Number(checked.limit)
  const wait = checked.wait ? Number(checked.wait) : 0
  const after = decodeCursor(checked.after)
  if (!wait) return json(pageOf(await listed(deps, project.id, after, limit), query.after, limit))
  // with wait, an empty page is held until a commit of this project wakes it (no polling
  // meanwhile); the requests one commit wakes with the same cursor read their page once, and
  // send the same bytes, serialised once
  const read = () =>
    deps.waiters.shared(`events\n${project.id}\n${query.after ?? ''}\n${limit}`, async () => {
      const rows = await listed(deps, project.id, after, limit)
      return { rows, body: new Blob([JSON.stringify(pageOf(rows, query.after, limit))]) }
    })
  const found = await waitFor(
    deps.waiters,
    [eventsKey(project.id)],
    Date.now() + wait * 1000,
    async () => {
      const page = await read()
      return page.rows.length ? page : null
    },
    sleeping,
  )
  return found ? new Response(found.body, { headers: JSON_HEADERS }) : json(pageOf([], query.after, limit))
}

/**
 * A page of the project's events after `after`. Whoever reads an event may read the plan next: on
 * PostgreSQL this replica may not have heard that commit yet, so its read cache is told
 * (src/reads/cache.ts `sawCommit`) and answers that read from no earlier than the event.
 */
async function listed(deps: Pick<Deps, 'db' | 'reads'>, projectId: string, after: ReturnType<typeof decodeCursor>, limit: number) {
  const rows = await q.listPage(deps.db, projectId, after, limit)
  if (rows.length > 0) deps.reads.sawCommit(projectId)
  return rows
}

/** what Elysia sends with an object, so a shared page reads the same as one built for its request */
const JSON_HEADERS = { 'content-type': 'application/json;charset=utf-8' }
const json = (body: unknown) => new Response(JSON.stringify(body), { headers: JSON_HEADERS })

function pageOf(rows: q.EventRow[], after: string | undefined, limit: number) {
  const last = rows.at(-1)
  return {
    events: rows.map((r) => orderPayload(r.payload)),
    nextCursor: last ? encodeCursor(last) : after || null,
    hasMore: rows.length === limit,
    _meta: {
      _tip:
        rows.length === limit
          ? 'More events wait: call again at once with after=nextCursor.'
          : 'Up to date. Poll again later with after=nextCursor; events are kept for 7 days.',
    },
  }
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

/** The stream (live.md, 2): the project's events after `after` (a cursor EventsQuery accepts), each with the cursor that follows it. */
export async function eventsAfter(deps: Pick<Deps, 'db' | 'reads'>, projectId: string, after: string | undefined, limit: number) {
  const rows = await listed(deps, projectId, decodeCursor(after), limit)
  return rows.map((r) => ({ cursor: encodeCursor(r), payload: orderPayload(r.payload) }))
}

/** Is the event at `cursor` still kept ('' and absent: the start, always)? A cursor whose event is gone is older than the events kept. */
export async function cursorKept(deps: Pick<Deps, 'db'>, projectId: string, cursor: string | undefined): Promise<boolean> {
  const at = decodeCursor(cursor)
  return at === null || (await q.hasCursor(deps.db, projectId, at))
}

/** The retention loop: drop events past the window (see sql/events/delete-expired.sql). */
export async function deleteExpiredEvents(deps: Deps, now: Date) {
  const deleted = await q.deleteExpired(deps.db, new Date(now.getTime() - RETENTION_DAYS * 86_400_000))
  if (deleted) deps.log.info('events expired', { deleted })
  return deleted
}
