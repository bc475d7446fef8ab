import type { Deps } from '../deps'
import { clientIp } from './client-ip'
import { createRateLimiter } from './rate-limit'
import { json } from './respond'
import { legacyRewrite } from './versioning'

type App = { handle(req: Request): Promise<Response> }

/**
 * The transport wrapper around the Elysia app: request id, rate limit, body size, the legacy
 * path rewrite with its Deprecation headers, and one structured log line per request.
 * Both main.ts (Bun.serve) and the tests call the returned function.
 */
export function createHandler(deps: Deps, app: App) {
  const { config, log } = deps
  const limiter = createRateLimiter(config.rateLimitPerMinute)
  return async function handle(req: Request, socketIp?: string): Promise<Response> {
    const started = performance.now()
    const requestId = req.headers.get('x-request-id')?.slice(0, 128) || crypto.randomUUID()
    const url = new URL(req.url)
    const ip = clientIp(req, socketIp, config.trustProxy)
    let res: Response | undefined
    let link: string | undefined
    if (url.pathname.startsWith('/api/')) {
      const wait = limiter.hit(ip)
      if (wait)
        res = json(
          429,
          { error: 'rate_limited', message: `More than ${config.rateLimitPerMinute} requests in 60 seconds from ${ip}`, _meta: { _tip: `Back off and retry after ${wait} seconds.` } },
          { 'retry-after': String(wait) },
        )
    }
    const length = Number(req.headers.get('content-length') ?? 0)
    if (!res && length > config.maxBodyBytes)
      res = json(413, { error: 'payload_too_large', message: `Request body is ${length} bytes; the limit is ${config.maxBodyBytes}` })
    if (!res) {
      const rewrite = legacyRewrite(url.pathname)
      if (rewrite) {
        if (rewrite.deprecated) link = `<${config.publicBaseUrl}${rewrite.path}>; rel="successor-version"`
        url.pathname = rewrite.path
        req = new Request(url.toString(), req)
      }
      res = await app.handle(req)
    }
    res.headers.set('x-request-id', requestId)
    if (link) {
      res.headers.set('deprecation', 'true')
      res.headers.set('link', link)
    }
    log.info('request', {
      requestId,
      method: req.method,
      path: url.pathname,
      status: res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      ip,
    })
    return res
  }
}
