import type { Deps } from '../deps'
import { invalid, RefusalError } from '../errors'
import { clientIp, type SocketIp } from './client-ip'
import { renderError } from './error-plugin'
import { createFastLane, type FastRead, plainTarget } from './fast-lane'
import { checkHeaders, checkJsonText, checkUrl, loggablePath } from './input-guard'
import { isJsonType } from './json-body'
import { parseJsonBody } from './json-syntax'
import { rateExempt } from './rate-exempt'
import { createFailureLimiter, createRateLimiter } from './rate-limit'
import { requestIdOf, sizeRefusal } from './request-head'
import { json } from './respond'
import { legacyRewrite } from './versioning'

type App = { handle(req: Request): Promise<Response> }

export interface HandlerOptions {
  /** the answers the fast lane may give (src/reads/fast-reads.ts) */
  read?: FastRead
  /** a last change to the request before the checks (app.ts sets the MCP client address header) */
  prepare?: (line: RequestLine, socketIp: SocketIp) => RequestLine
}

export type RequestLine = { req: Request; url: URL }

/** Failed admin authentications from one IP before its admin requests get 429 for the rest of the minute. */
export const ADMIN_FAILURES_PER_MINUTE = 10

/**
 * The transport wrapper around the Elysia app: request id, rate limit, body size, the legacy
 * path rewrite with its Deprecation headers, and one structured log line per request.
 * Both main.ts (Bun.serve) and the tests call the returned function. A GET whose answer `read`
 * already knows takes the fast lane (./fast-lane.ts) and skips all of this.
 */
export function createHandler(deps: Deps, app: App, options: HandlerOptions = {}) {
  const { config, log } = deps
  const limiter = createRateLimiter(config.rateLimitPerMinute)
  const adminFailures = createFailureLimiter(ADMIN_FAILURES_PER_MINUTE)
  const fast = options.read && createFastLane(deps, limiter, options.read)
  /** A Response itself when the fast lane had it at hand (Bun sends it without a tick), else a promise. */
  return function handle(received: Request, socketIp?: SocketIp): Response | Promise<Response> {
    const answer = fast?.(received, socketIp)
    if (answer === undefined) return full(received, socketIp)
    if (answer instanceof Response) return answer
    return answer.then((res) => res ?? full(received, socketIp))
  }

  async function full(received: Request, socketIp?: SocketIp): Promise<Response> {
    const started = performance.now()
    // the request as Bun gave it: its signal says when the client went away
    const original = received
    let line = requestLine(received)
    if (line) {
      if (options.prepare) line = options.prepare(line, socketIp)
      received = line.req
    }
    const requestId = requestIdOf(received.headers)
    const ip = clientIp(received, socketIp, config.trustProxy)
    if (!line) {
      const res = renderError(deps, invalid('The Host header is not a valid host name'), received)
      res.headers.set('x-request-id', requestId)
      res.headers.set('x-content-type-options', 'nosniff')
      res.headers.set('cache-control', 'no-store')
      log.request(requestId, received.method, '(invalid host)', res.status, Math.round((performance.now() - started) * 10) / 10, ip)
      return res
    }
    let { req, url } = line
    let res: Response | undefined
    let link: string | undefined
    const admin = url.pathname.startsWith('/admin/')
    const exempt = url.pathname.startsWith('/api/') ? rateExempt(req.method, url) : false
    try {
      const tooBig = sizeRefusal(url, req.headers)
      if (tooBig) throw tooBig
      if (admin) {
        const wait = adminFailures.blocked(ip)
        if (wait)
          res = json(
            429,
            {
              error: 'rate_limited',
              message: `More than ${ADMIN_FAILURES_PER_MINUTE} failed admin authentications in 60 seconds from ${ip}`,
              _meta: { _tip: `Check ADMIN_TOKEN, then retry after ${wait} seconds.` },
            },
            { 'retry-after': String(wait) },
          )
      }
      if (url.pathname.startsWith('/api/') && !res) {
        // a request that may wait is counted once it is known not to have waited (below), but an
        // address past the limit gets no more reads, waiting or not
        const wait = exempt ? limiter.blocked(ip) : limiter.hit(ip)
        if (wait)
          res = json(
            429,
            {
              error: 'rate_limited',
              message: `More than ${config.rateLimitPerMinute} requests in 60 seconds from ${ip}`,
              _meta: { _tip: `Back off and retry after ${wait} seconds.` },
            },
            { 'retry-after': String(wait) },
          )
      }
      if (!res) {
        // a body that does not arrive by the deadline is answered 408 (the body is read only here)
        const deadline = started + config.bodyTimeoutMs
        // a request without a body (most GETs) is checked without a promise
        let sized = limitBody(req, config.maxBodyBytes)
        if (sized instanceof Promise) sized = await inTime(sized, deadline)
        if (!sized) throw bodyTooLarge(url, config.maxBodyBytes)
        req = sized
        // NUL characters, lone surrogates and deep nesting: a 400 naming the field before anything parses or stores it
        let refusal = checkUrl(url) ?? checkHeaders(req.headers)
        if (!refusal && req.body && req.method !== 'GET' && req.method !== 'HEAD') {
          const text = await inTime(req.text(), deadline)
          refusal = checkJsonText(text, !OWN_STRING_CHECK.test(url.pathname))
          // a JSON syntax error, answered with where and what (Elysia's parser would say neither);
          // /mcp answers its own (a JSON-RPC parse error)
          const parsed =
            !refusal && url.pathname !== '/mcp' && text.trim() !== '' && isJsonType(req.headers.get('content-type') ?? undefined)
              ? parseJsonBody(text)
              : undefined
          if (parsed && 'refusal' in parsed) refusal = parsed.refusal
          req = withBody(req, text, parsed && 'value' in parsed ? parsed : undefined)
        }
        if (refusal) throw invalid(refusal)
      }
    } catch (err) {
      if (err instanceof BodyTimeout) res = bodyTimeout(config.bodyTimeoutMs)
      else if (original.signal.aborted || (err as Error)?.name === 'AbortError') {
        // the client went away before its body arrived: nobody hears an answer, and it is no error of ours
        log.info('client went away before its request body arrived', {
          requestId,
          method: req.method,
          path: loggablePath(url.pathname),
          ms: Math.round((performance.now() - started) * 10) / 10,
          ip,
        })
        return new Response(null, { status: CLIENT_GONE })
      }
      // the early refusals above answered as the error plugin answers
      else res = renderError(deps, err, req)
    }
    if (!res) {
      const rewrite = legacyRewrite(url.pathname)
      if (rewrite) {
        if (rewrite.deprecated) link = `<${config.publicBaseUrl}${rewrite.path}>; rel="successor-version"`
        url.pathname = rewrite.path
        req = new Request(url.href, req)
      }
      // the error plugin logs an unexpected error with the id the response carries
      if (req.headers.get('x-request-id') !== requestId) req.headers.set('x-request-id', requestId)
      res = await app.handle(req)
      if (admin && res.status === 401) adminFailures.fail(ip)
      // a project read answered from the read cache: the fast lane may answer its next asks
      if (fast && res.status === 200 && req.method === 'GET' && !link) noteRequest(received, res)
      // only a request that slept in the waiter list goes uncounted: one answered at once,
      // refused or failed did not wait, and counts like any request
      if (exempt && !deps.waiters.waited.has(req)) limiter.hit(ip)
    }
    res.headers.set('x-request-id', requestId)
    res.headers.set('x-content-type-options', 'nosniff')
    if (url.pathname.startsWith('/api/') || url.pathname.startsWith('/admin/')) res.headers.set('cache-control', 'no-store')
    if (link) {
      res.headers.set('deprecation', 'true')
      res.headers.set('link', link)
    }
    deps.metrics.request(req.method, url.pathname, res.status, performance.now() - started)
    log.request(requestId, req.method, loggablePath(url.pathname), res.status, Math.round((performance.now() - started) * 10) / 10, ip)
    return res
  }

  function noteRequest(received: Request, res: Response): void {
    const target = plainTarget(received.url)
    if (target?.path.startsWith('/api/v1/')) deps.reads.noteRequest(target.path + target.search, res)
  }
}

const WORKFLOW = /^\/api\/(v1\/)?workflow$/

/**
 * The request rebuilt on its body's text, read once by the wrapper. For a JSON body the wrapper
 * has parsed, the router's `json()` (Elysia reads a JSON body with it) gets that value instead of
 * parsing the text a second time; a second read parses the text, as any other reader does.
 */
function withBody(req: Request, text: string, parsed?: { value: unknown }): Request {
  if (parsed) return new ParsedRequest(req, text, parsed)
  return new Request(req.url, { method: req.method, headers: req.headers, body: text })
}

class ParsedRequest extends Request {
  /** the body's value, until json() hands it over */
  parsed: { value: unknown } | undefined

  constructor(req: Request, text: string, parsed: { value: unknown }) {
    super(req.url, { method: req.method, headers: req.headers, body: text })
    this.parsed = parsed
  }
}
// json() on the prototype, defined once (Bun's types declare it a read-only property)
const readJson = Request.prototype.json
Object.defineProperty(ParsedRequest.prototype, 'json', {
  value(this: ParsedRequest) {
    const parsed = this.parsed
    if (!parsed) return readJson.call(this)
    this.parsed = undefined
    return Promise.resolve(parsed.value)
  },
})

/** A request body that did not arrive by its deadline (BODY_TIMEOUT_SECONDS, from when its headers came). */
class BodyTimeout extends Error {}

/** The status of what is returned for a request whose client went away (nginx's "client closed request"): nobody receives it. */
const CLIENT_GONE = 499

/** `p`, or a BodyTimeout at `deadline` (performance.now() time) if it has not settled by then. */
async function inTime<T>(p: Promise<T>, deadline: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BodyTimeout()), Math.max(0, deadline - performance.now()))
  })
  p.catch(() => {}) // settling after the deadline is no unhandled rejection
  try {
    return await Promise.race([p, late])
  } finally {
    clearTimeout(timer)
  }
}

/** 408, and the connection closed: what is left of the body is never read (docs/http-trust.md). */
function bodyTimeout(ms: number): Response {
  return json(
    408,
    {
      error: 'request_timeout',
      message: `The request body did not arrive within ${ms / 1000} seconds`,
      _meta: { _tip: 'Send the whole body at once, right after the headers; on a slow link, send a smaller one.' },
    },
    { connection: 'close' },
  )
}

/** The refusal of a body over the size limit: docs/reference/errors.md makes an oversized workflow request a 400 with the guide like its other 400s. */
function bodyTooLarge(url: URL, max: number): RefusalError {
  if (WORKFLOW.test(url.pathname))
    return new RefusalError(400, `Request body is over the limit of ${max} bytes`, {
      _meta: { _tip: 'Send a smaller response: GET /api/v1/workflow lists the limits of every flow.' },
    })
  return new RefusalError(413, 'payload_too_large', {
    message: `Request body is over the limit of ${max} bytes`,
    _meta: { _tip: 'Send a smaller body; split a large batch into several calls.' },
  })
}
/**
 * Routes that check the strings of their body themselves (badString): POST /workflow answers a bad
 * string in a run's answer as a bad response that keeps the run, and /mcp lets the REST call of
 * its tool refuse it, so the agent gets a tool error instead of a failed JSON-RPC request.
 */
const OWN_STRING_CHECK = /^(\/api\/(v1\/)?workflow|\/mcp)$/

/** Elysia finds the path it routes on at the first '/' of request.url from this offset (past "https://a.b"), without parsing. */
const ROUTER_OFFSET = 11
/** The origin of a request rebuilt for the router; no handler reads the origin (PUBLIC_BASE_URL makes links). */
const CANONICAL_ORIGIN = 'http://localhost'

/**
 * The one reading of the request line, shared by the checks here and by the router: the URL
 * parsed once, and a Request whose url the router reads the same way. Bun builds request.url
 * from the Host header, and Elysia slices it at a fixed offset; with a Host of 1–3 characters
 * (`http://x/zz/api/…`) the router would see `/api/…` while the checks saw `/zz/api/…`. Such a
 * request is rebuilt on a canonical origin. Null when Bun cannot build a URL at all (a Host
 * such as `a/b` or an empty one): the caller answers 400.
 */
export function requestLine(req: Request): RequestLine | null {
  let raw: string
  let url: URL
  try {
    raw = req.url
    url = new URL(raw)
  } catch {
    return null
  }
  if (url.origin.length >= ROUTER_OFFSET && raw === url.origin + url.pathname + url.search) return { req, url }
  url = new URL(CANONICAL_ORIGIN + url.pathname + url.search) // concatenated: a path `//host/…` stays a path
  return { req: new Request(url.href, req), url }
}

/**
 * The request with its body checked against the size limit, or null when it is too large.
 * A declared Content-Length is checked up front; a body without one (chunked) is read up to
 * the limit, so streaming cannot get past it either.
 */
export function limitBody(req: Request, max: number): Request | null | Promise<Request | null> {
  const declared = req.headers.get('content-length')
  if (declared !== null) return Number(declared) > max ? null : req
  return req.body ? readLimited(req, req.body, max) : req
}

async function readLimited(req: Request, body: ReadableStream<Uint8Array>, max: number): Promise<Request | null> {
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > max) {
      await reader.cancel().catch(() => {})
      return null
    }
    chunks.push(value)
  }
  return new Request(req.url, { method: req.method, headers: req.headers, body: Buffer.concat(chunks) })
}
