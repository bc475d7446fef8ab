import type { Deps } from '../deps'
import { clientIp } from './client-ip'
import { checkHeaders, checkJsonText, checkUrl, loggablePath } from './input-guard'
import { guideUrl, isGuidedPath } from './meta'
import { rateExempt } from './rate-exempt'
import { createFailureLimiter, createRateLimiter } from './rate-limit'
import { json } from './respond'
import { legacyRewrite } from './versioning'

type App = { handle(req: Request): Promise<Response> }

/** Failed admin authentications from one IP before its admin requests get 429 for the rest of the minute. */
export const ADMIN_FAILURES_PER_MINUTE = 10

/**
 * The transport wrapper around the Elysia app: request id, rate limit, body size, the legacy
 * path rewrite with its Deprecation headers, and one structured log line per request.
 * Both main.ts (Bun.serve) and the tests call the returned function.
 */
export function createHandler(deps: Deps, app: App) {
  const { config, log } = deps
  const limiter = createRateLimiter(config.rateLimitPerMinute)
  const adminFailures = createFailureLimiter(ADMIN_FAILURES_PER_MINUTE)
  return async function handle(req: Request, socketIp?: string): Promise<Response> {
    const started = performance.now()
    const requestId = req.headers.get('x-request-id')?.slice(0, 128) || crypto.randomUUID()
    const url = new URL(req.url)
    const ip = clientIp(req, socketIp, config.trustProxy)
    let res: Response | undefined
    let link: string | undefined
    const admin = url.pathname.startsWith('/admin/')
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
    if (url.pathname.startsWith('/api/') && !rateExempt(req.method, url)) {
      const wait = limiter.hit(ip)
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
      const sized = await limitBody(req, config.maxBodyBytes)
      if (sized) req = sized
      else if (/^\/api\/(v1\/)?workflow$/.test(url.pathname))
        // api.md, Errors: an oversized workflow request is a 400, with the guide like its other 400s
        res = json(400, {
          error: `Request body is over the limit of ${config.maxBodyBytes} bytes`,
          _meta: {
            _tip: 'Send a smaller response: GET /api/v1/workflow lists the limits of every flow.',
            guide: guideUrl(config.publicBaseUrl),
          },
        })
      else
        res = json(413, {
          error: 'payload_too_large',
          message: `Request body is over the limit of ${config.maxBodyBytes} bytes`,
          _meta: { _tip: 'Send a smaller body; split a large batch into several calls.' },
        })
    }
    if (!res) {
      // NUL characters and deep nesting: a 400 naming the field before anything parses or stores it
      let refusal = checkUrl(url) ?? checkHeaders(req.headers)
      if (!refusal && req.body && req.method !== 'GET' && req.method !== 'HEAD') {
        const text = await req.text()
        refusal = checkJsonText(text)
        req = new Request(req.url, { method: req.method, headers: req.headers, body: text })
      }
      if (refusal)
        res = json(400, {
          success: false,
          errors: [refusal],
          ...(isGuidedPath(url.pathname) ? { _meta: { guide: guideUrl(config.publicBaseUrl) } } : {}),
        })
    }
    if (!res) {
      const rewrite = legacyRewrite(url.pathname)
      if (rewrite) {
        if (rewrite.deprecated) link = `<${config.publicBaseUrl}${rewrite.path}>; rel="successor-version"`
        url.pathname = rewrite.path
        req = new Request(url.toString(), req)
      }
      res = await app.handle(req)
      if (admin && res.status === 401) adminFailures.fail(ip)
    }
    res.headers.set('x-request-id', requestId)
    res.headers.set('x-content-type-options', 'nosniff')
    if (url.pathname.startsWith('/api/') || url.pathname.startsWith('/admin/')) res.headers.set('cache-control', 'no-store')
    if (link) {
      res.headers.set('deprecation', 'true')
      res.headers.set('link', link)
    }
    log.request(requestId, req.method, loggablePath(url.pathname), res.status, Math.round((performance.now() - started) * 10) / 10, ip)
    return res
  }
}

/**
 * The request with its body checked against the size limit, or null when it is too large.
 * A declared Content-Length is checked up front; a body without one (chunked) is read up to
 * the limit, so streaming cannot get past it either.
 */
async function limitBody(req: Request, max: number): Promise<Request | null> {
  const declared = req.headers.get('content-length')
  if (declared !== null) return Number(declared) > max ? null : req
  if (!req.body) return req
  const reader = req.body.getReader()
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
