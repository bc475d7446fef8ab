import type { Deps } from '../deps'
import { clientIp, type SocketIp } from './client-ip'
import type { RateLimiter } from './rate-limit'
import { headerBytes, MAX_HEADER_BYTES, requestIdOf } from './request-head'

/**
 * The fast lane: a GET whose answer is already known (GET /healthz, a cached project read, the
 * caller's project list) is answered here, before the URL is parsed, the checks are run one by
 * one and Elysia routes it. It answers only what the full path would answer with the same bytes
 * and status 200, with the same headers, rate limit, metrics and log line; anything else, or
 * anything unusual about the request, goes the full way (src/http/server.ts).
 *
 * `read` (src/reads/fast-reads.ts) knows the answers; this file knows the transport.
 */
export type FastRead = ((path: string, search: string, headers: Headers) => FastAnswer | undefined | Promise<FastAnswer | undefined>) & {
  /**
   * Paths whose answer reads nothing of the request (GET /healthz): the input guard (NUL
   * characters, the 431 header limit) protects handlers that read input, so it is skipped.
   */
  inputFree?: ReadonlySet<string>
}

export interface FastAnswer {
  body: Blob | string
  /** the Content-Type the route would send */
  type: string
}

/** The longest request target the fast lane takes; a longer one goes the full way (414 is checked there). */
export const FAST_TARGET_MAX = 2048

/**
 * A Host the fast lane takes as it is: a name or IPv4 address, or a bracketed IPv6 address,
 * with an optional port. Anything else (empty, `a/b`, `a?b`, user info) goes the full way,
 * which answers it as src/http/server.ts requestLine says.
 */
const PLAIN_HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/**
 * The path and query of `raw` (request.url, which Bun builds as scheme://Host/target) when the
 * Host is plain and the path needs no decoding (no `%`), the target holds no `#` and is at most
 * FAST_TARGET_MAX long. The query is kept as sent, percent-encoding and all: it is only compared
 * with queries the full path answered with 200 before (one with a NUL, `%00`, got its 400 there).
 */
export function plainTarget(raw: string): { path: string; search: string } | undefined {
  const hostStart = raw.indexOf('://') + 3
  const pathStart = raw.indexOf('/', hostStart)
  if (hostStart < 3 || pathStart < 0 || raw.length - pathStart > FAST_TARGET_MAX) return undefined
  if (!PLAIN_HOST.test(raw.slice(hostStart, pathStart))) return undefined
  const target = raw.slice(pathStart)
  if (target.includes('#')) return undefined
  const q = target.indexOf('?')
  const path = q < 0 ? target : target.slice(0, q)
  if (path.includes('%')) return undefined
  return { path, search: q < 0 ? '' : target.slice(q) }
}

export function createFastLane(deps: Pick<Deps, 'config' | 'log' | 'metrics'>, limiter: RateLimiter, read: FastRead) {
  const { config, log, metrics } = deps
  /**
   * The answer, or undefined for the full way. Nothing is counted or logged before the answer
   * is known, so a request that goes on is counted and logged once, there.
   */
  return function fast(req: Request, socketIp: SocketIp): Response | undefined | Promise<Response | undefined> {
    const started = performance.now()
    if (req.method !== 'GET') return undefined
    const target = plainTarget(req.url)
    if (!target) return undefined
    const { headers } = req
    // a GET with a body, headers over the limit: the full way says why (a NUL in a header never
    // gets here: Bun's parser answers it with its own 400, so checkHeaders guards in-process callers only)
    if (!read.inputFree?.has(target.path)) {
      if (headers.has('content-length') || headers.has('transfer-encoding')) return undefined
      if (headerBytes(headers) > MAX_HEADER_BYTES) return undefined
    }
    // the client address is asked for only when the rate limit or the log line uses it: Bun
    // makes a system call for it (main.ts), a tenth of a cheap read's time
    const api = target.path.startsWith('/api/')
    const limited = api && limiter.on
    const ip = limited || log.requests ? clientIp(req, socketIp, config.trustProxy) : ''
    // an address over the limit gets its 429 the full way (blocked counts nothing)
    if (limited && limiter.blocked(ip)) return undefined
    const finish = (answer: FastAnswer | undefined): Response | undefined => {
      if (!answer) return undefined
      if (limited) limiter.hit(ip)
      const requestId = requestIdOf(headers)
      const res = new Response(answer.body, {
        headers: api
          ? { 'content-type': answer.type, 'x-request-id': requestId, 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' }
          : { 'content-type': answer.type, 'x-request-id': requestId, 'x-content-type-options': 'nosniff' },
      })
      const ms = performance.now() - started
      metrics.request('GET', target.path, 200, ms)
      // `read` answers only paths it names (no share token, no secret): nothing to redact
      log.request(requestId, 'GET', target.path, 200, Math.round(ms * 10) / 10, ip)
      return res
    }
    let answer: ReturnType<FastRead>
    try {
      answer = read(target.path, target.search, headers)
    } catch {
      return undefined // a refusal (no key, no access): the full way answers it, with its message
    }
    return answer instanceof Promise ? answer.then(finish, () => undefined) : finish(answer)
  }
}
