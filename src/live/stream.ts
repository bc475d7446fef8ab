import { AUTH_CHANNEL } from '../accounts/auth-cache'
import type { User } from '../accounts/model'
import { authenticate } from '../accounts/service'
import type { Deps } from '../deps'
import { RefusalError } from '../errors'
import { cursorKept, type EventPayload, eventsAfter, latestCursor } from '../events/service'
import { eventsKey } from '../events/waiters'
import { afterAccess, checkInput } from '../http/action-schema'
import { json } from '../http/respond'
import { PRESENCE_CHANNEL, type PresenceMessage } from '../presence/store'
import { requireProject } from '../projects/access'
import { ACCESS_CHECK_MS, KEEP_ALIVE_MS, MAX_STREAMS_PER_KEY, STREAM_PAGE, StreamParams, StreamQuery } from './model'

/**
 * GET /stream (live.md, 2): the events of GET /events as server-sent events, with presence.
 *
 * Each open stream waits in the same waiter list as GET /events?wait (src/events/waiters.ts): a
 * commit of the project on any replica wakes it (NOTIFY), it reads the events after its cursor
 * (streams at the same cursor share one read and one encoding of it) and sends them, each with
 * its cursor as `id:`. Presence changes come on PRESENCE_CHANNEL and go to the project's streams
 * at once. The hub (one per app, built by the routes) counts streams per key, checks every
 * ACCESS_CHECK_MS that each stream's key and membership still hold, and ends a stream that lost
 * them; on SIGTERM the waiters close and every stream ends.
 */
interface Conn {
  projectId: string
  keyId: string
  authorization: string
  send: (bytes: Uint8Array) => void
  end: () => void
}

const encoder = new TextEncoder()
const KEEP_ALIVE = encoder.encode(': keep-alive\n\n')
/** a client that reads nothing is dropped once this much waits for it */
const MAX_BUFFERED = 4 * 1024 * 1024

const message = (event: string, data: unknown, id?: string) =>
  `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`

/** The presence a claim event means: its agent is here (taken) or gone (ended), on the claimed node. */
function claimPresence(p: EventPayload): PresenceMessage | null {
  const e = p as EventPayload & { nodeId?: string; agent?: string; actor?: { userId?: string; userName?: string; via?: string } }
  if ((e.event !== 'node.claimed' && e.event !== 'node.released') || !e.nodeId || !e.agent) return null
  return {
    actor: { userId: e.actor?.userId ?? '', userName: e.actor?.userName ?? e.agent, agent: e.agent, via: e.actor?.via ?? 'api' },
    nodeId: e.nodeId,
    state: e.event === 'node.claimed' ? 'here' : 'gone',
    claim: true,
  }
}

export function createStreamHub(deps: Deps) {
  const byProject = new Map<string, Set<Conn>>()
  const perKey = new Map<string, number>()
  let listening: Promise<unknown> | null = null
  let checker: ReturnType<typeof setInterval> | null = null

  // a change of keys or members (any replica) has open streams check their access at once, a
  // moment after the auth cache forgot (the timer every ACCESS_CHECK_MS stays as the safety net)
  let soon: ReturnType<typeof setTimeout> | null = null
  const checkSoon = () => {
    if (soon || byProject.size === 0) return
    soon = setTimeout(() => {
      soon = null
      void checkAccess()
    }, 100)
  }
  let followingAuth = false
  const listen = () => {
    if (!followingAuth) {
      followingAuth = true
      deps.db.listen(AUTH_CHANNEL, { message: checkSoon, up() {}, down() {} }).catch(() => {
        followingAuth = false
      })
    }
    return (listening ??= deps.db
      .listen(PRESENCE_CHANNEL, {
        message(payload) {
          let parsed: { projectId?: string; message?: PresenceMessage }
          try {
            parsed = JSON.parse(payload)
          } catch {
            return
          }
          const conns = parsed.projectId ? byProject.get(parsed.projectId) : undefined
          if (!conns?.size) return
          const bytes = encoder.encode(message('presence', parsed.message))
          for (const c of conns) c.send(bytes)
        },
        up() {},
        down() {},
      })
      .catch((err) => {
        listening = null
        deps.log.warn('presence channel unavailable', { error: String(err) })
      }))
  }

  /** End every stream whose key was revoked or whose user is no longer a member (or owner). */
  async function checkAccess() {
    const groups = new Map<string, Conn[]>()
    for (const conns of byProject.values())
      for (const c of conns) {
        const k = `${c.authorization}\n${c.projectId}`
        ;(groups.get(k) ?? groups.set(k, []).get(k)!).push(c)
      }
    for (const conns of groups.values()) {
      const { authorization, projectId } = conns[0]!
      try {
        const user = await authenticate(deps, authorization)
        await requireProject(deps, user, projectId)
      } catch (err) {
        // a refusal ends the streams; the database being away does not
        if (err instanceof RefusalError && (err.status === 401 || err.status === 403)) for (const c of conns) c.end()
      }
    }
  }

  function add(c: Conn) {
    ;(byProject.get(c.projectId) ?? byProject.set(c.projectId, new Set()).get(c.projectId)!).add(c)
    perKey.set(c.keyId, (perKey.get(c.keyId) ?? 0) + 1)
    if (!checker) {
      let running = false
      checker = setInterval(() => {
        if (running) return
        running = true
        void checkAccess().finally(() => {
          running = false
        })
      }, ACCESS_CHECK_MS)
      checker.unref?.()
    }
  }

  function remove(c: Conn) {
    const set = byProject.get(c.projectId)
    if (!set?.delete(c)) return
    if (set.size === 0) byProject.delete(c.projectId)
    const n = (perKey.get(c.keyId) ?? 1) - 1
    if (n > 0) perKey.set(c.keyId, n)
    else perKey.delete(c.keyId)
    if (byProject.size === 0 && checker) {
      clearInterval(checker)
      checker = null
    }
  }

  /** Open a stream: the checks of GET /events answer JSON before anything streams. */
  async function open(user: User, authorization: string, raw: unknown, lastEventId: string | null, request: Request) {
    const { project, input: query } = await afterAccess((id) => requireProject(deps, user, id), 'query', StreamParams, raw)
    // Last-Event-ID (a reconnecting EventSource) wins over `after`
    const after = lastEventId !== null && lastEventId !== '' ? lastEventId : query.after
    checkInput('query', StreamQuery, after === undefined ? {} : { after })
    const keyId = user.keyId ?? authorization
    if ((perKey.get(keyId) ?? 0) >= MAX_STREAMS_PER_KEY)
      return json(
        429,
        {
          error: 'too_many_streams',
          message: `This key has ${MAX_STREAMS_PER_KEY} streams open on this server, the most it may`,
          _meta: { _tip: 'Close a stream you no longer read, or use GET /events?wait=30 (the long poll) for this one.' },
        },
        { 'retry-after': '5' },
      )
    await listen()
    // the stream's own reads in the waiter list are not held against the per-minute rate limit
    deps.waiters.waited.add(request)
    return streamResponse(project.id, keyId, authorization, after || undefined, request)
  }

  function streamResponse(projectId: string, keyId: string, authorization: string, after: string | undefined, request: Request) {
    let ended = false
    let controller!: ReadableStreamDefaultController<Uint8Array>
    const conn: Conn = {
      projectId,
      keyId,
      authorization,
      send(bytes) {
        if (ended) return
        if ((controller.desiredSize ?? 0) < -MAX_BUFFERED) return conn.end()
        try {
          controller.enqueue(bytes)
        } catch {
          conn.end()
        }
      },
      end() {
        if (ended) return
        ended = true
        remove(conn)
        try {
          controller.close()
        } catch {
          // the client closed it first (Bun cancelled the stream): nothing is left to close
        }
        wakeUp()
      },
    }
    // the loop sleeps in the waiter list; `end` lets it go at once
    let wakeUp = () => {}
    const sleep = (ms: number, since: number) =>
      Promise.race([
        deps.waiters.wait([eventsKey(projectId)], ms, since),
        new Promise<boolean>((resolve) => {
          wakeUp = () => resolve(false)
        }),
      ])

    const run = async () => {
      let cursor = after
      if (cursor !== undefined && !(await cursorKept(deps, projectId, cursor))) {
        conn.send(encoder.encode(message('reset', { reason: 'cursor_expired' })))
        cursor = undefined
      }
      // streams that open together (a reconnect storm after a replica stopped) share one read of it
      if (cursor === undefined)
        cursor = (await deps.waiters.shared(`stream-latest\n${projectId}`, () => latestCursor(deps, projectId))) || undefined
      let keepAliveAt = Date.now() + KEEP_ALIVE_MS
      /** after a wake-up that found nothing yet (an older transaction still running), read again after this long */
      let retry = 0
      let retried = 0
      let slept = false
      while (!ended && !deps.waiters.closed()) {
        const since = deps.waiters.now()
        const from = cursor
        const page = await deps.waiters.shared(`stream\n${projectId}\n${from ?? ''}`, async () => {
          const rows = await eventsAfter(deps, projectId, from, STREAM_PAGE)
          let text = ''
          for (const r of rows) {
            text += message(r.payload.event, r.payload, r.cursor)
            const claim = claimPresence(r.payload)
            if (claim) text += message('presence', claim)
          }
          return { count: rows.length, cursor: rows.at(-1)?.cursor, bytes: encoder.encode(text) }
        })
        if (ended) break
        if (page.count > 0) {
          if (slept) await deps.waiters.turn()
          conn.send(page.bytes)
          cursor = page.cursor
          keepAliveAt = Date.now() + KEEP_ALIVE_MS
          retry = 0
          retried = 0
          if (page.count === STREAM_PAGE) continue
        }
        let left = keepAliveAt - Date.now()
        if (left <= 0) {
          conn.send(KEEP_ALIVE)
          keepAliveAt = Date.now() + KEEP_ALIVE_MS
          left = KEEP_ALIVE_MS
        }
        slept = true
        const woken = await sleep(retry ? Math.min(retry, left) : left, since)
        if (woken) {
          retry = 20
          retried = 0
        } else if (retry) {
          // the wake-up's events may take a while to be readable; give up after about 10 s
          retry = ++retried > 12 ? 0 : Math.min(retry * 2, 1000)
        }
      }
    }

    const body = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c
        add(conn)
        // the first bytes: proxies and clients see the stream open at once
        c.enqueue(encoder.encode(': open\nretry: 1000\n\n'))
        run()
          .catch((err) => deps.log.warn('stream ended by an error', { projectId, error: String(err) }))
          .finally(() => conn.end())
      },
      cancel() {
        conn.end()
      },
    })
    request.signal?.addEventListener?.('abort', () => conn.end())
    return new Response(body, {
      headers: {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        // nginx: do not buffer the stream
        'x-accel-buffering': 'no',
      },
    })
  }

  return { open, size: () => [...byProject.values()].reduce((n, s) => n + s.size, 0) }
}

export type StreamHub = ReturnType<typeof createStreamHub>
