import { Elysia, type ValidationError } from 'elysia'
import { SQLSTATE, sqlState, transient } from '../db/sqlstate'
import type { Deps } from '../deps'
import { ErrorListError, RefusalError, Refused } from '../errors'
import { allowedMethods, type RouteEntry } from './allowed-methods'
import { loggablePath } from './input-guard'
import { isJsonType, notReadAsJson } from './json-body'
import { guideUrl, isGuidedPath } from './meta'
import { json } from './respond'

/** An error's stack (its message when it has none), bounded for a log line. */
const stackOf = (err: unknown) => String((err && typeof err === 'object' && 'stack' in err ? err.stack : undefined) ?? err).slice(0, 2000)

/**
 * The one place that builds error responses: our refusals (src/errors.ts `Refused`, whose
 * status and body are their own: the checker's and the services' alike), Elysia's own errors
 * (parse, not found, a response that failed its schema), SQLSTATE codes that mean a client
 * mistake, and anything else as a logged 500. Under /api/ nothing here ever answers HTML. The
 * request wrapper (server.ts) renders its early refusals (Host, size, URL, headers, body) here
 * too, through `renderError`, before Elysia sees the request.
 */
export const errorPlugin = (deps: Deps, routes: () => readonly RouteEntry[] = () => []) =>
  new Elysia({ name: 'errors' }).onError({ as: 'global' }, ({ code, error, request }) => renderError(deps, error, request, code, routes))

/**
 * The response for an error thrown while answering `request`; `code` is Elysia's name for it, when
 * Elysia caught it; `routes`, the app's route table, tells a wrong method (405) from an unknown path (404).
 */
export function renderError(
  deps: Deps,
  err: unknown,
  request: Request,
  code?: string | number,
  routes: () => readonly RouteEntry[] = () => [],
): Response {
  // a request whose Host made no URL (server.ts refuses it) still gets its answer
  let url: URL | null = null
  try {
    url = new URL(request.url)
  } catch {
    // no URL to read: no guide link, and the log line names no path
  }
  const guided = url !== null && isGuidedPath(url.pathname)
  const withGuide = (status: number, body: Record<string, unknown>) => {
    if (guided && (status === 400 || status === 401 || status === 403))
      body._meta = { ...(body._meta ?? {}), guide: guideUrl(deps.config.publicBaseUrl) }
    return json(status, body)
  }
  const where = {
    requestId: request.headers.get('x-request-id') ?? undefined,
    method: request.method,
    path: url ? loggablePath(url.pathname) : '(invalid host)',
  }
  if (err instanceof Refused) {
    // a 500 the code words itself (a batch rolled back) still means something failed unexpectedly
    if (err.status >= 500) deps.log.error('unhandled error', { ...where, status: err.status, error: stackOf(err.cause ?? err) })
    const res =
      err instanceof RefusalError && err.status === 401
        ? withGuide(401, { ...err.toBody(), _meta: { guide: guideUrl(deps.config.publicBaseUrl) } })
        : withGuide(err.status, bodyAsSent(err, request))
    if (err.replayed) res.headers.set('idempotent-replayed', 'true')
    if (err instanceof ErrorListError && err.retryAfter !== undefined) res.headers.set('retry-after', String(err.retryAfter))
    return res
  }
  switch (code) {
    case 'NOT_FOUND': {
      const allow = url ? allowedMethods(routes(), url.pathname) : []
      if (allow.length)
        return json(
          405,
          {
            error: 'method_not_allowed',
            message: `${url?.pathname} answers ${allow.filter((m) => m !== 'HEAD').join(', ')}, not ${request.method.slice(0, 20)}`,
            _meta: {
              _tip: `Send ${allow.filter((m) => m !== 'HEAD').join(' or ')} ${url?.pathname}; see ${guideUrl(deps.config.publicBaseUrl)}.`,
            },
          },
          { allow: allow.join(', ') },
        )
      return json(404, {
        error: 'unknown_endpoint',
        message: `No endpoint ${request.method} ${url?.pathname ?? ''}`,
        _meta: { _tip: `See ${guideUrl(deps.config.publicBaseUrl)} for every endpoint, or /openapi.json.` },
      })
    }
    case 'VALIDATION':
      // Elysia checks no route's query or body (the checker does, in the services); only the admin API's and the
      // share page's path parameters, strings a path always has. A response that failed its schema is a 500, below.
      if ((err as ValidationError).type === 'response') break
      return withGuide(400, { success: false, errors: ['Invalid request'] })
    case 'PARSE':
      return withGuide(400, { success: false, errors: ['Request body is not valid JSON'] })
  }
  const state = sqlState(err)
  if (state === SQLSTATE.uniqueViolation) return json(409, { error: 'conflict', message: 'That resource already exists' })
  if (state === SQLSTATE.invalidTextRepresentation || state === SQLSTATE.checkViolation)
    return withGuide(400, { success: false, errors: ['A value has the wrong format'] })
  // a number a column cannot hold (the route's schema should have refused it first)
  if (state === SQLSTATE.numericOutOfRange) return withGuide(400, { success: false, errors: ['A number is out of range'] })
  // the database restarting, a connection dropped, a lost race: the same request may be sent again
  if (transient(err)) {
    deps.log.warn('database unavailable for a moment', { ...where, status: 503, error: String((err as Error)?.message ?? err) })
    return json(
      503,
      {
        error: 'unavailable',
        message:
          'The database is out of reach for a moment; send the same request again (with the same Idempotency-Key) after Retry-After seconds',
      },
      { 'retry-after': '1' },
    )
  }
  // Never the whole error of a failed response check: its message carries the value that failed,
  // which may be anything a handler returned. The path and the rule are enough to find it.
  const detail =
    code === 'VALIDATION'
      ? `response failed its schema at ${String((err as ValidationError).valueError?.path ?? (err as ValidationError).all?.[0]?.path ?? '?').slice(0, 200)}`
      : stackOf(err)
  deps.log.error('unhandled error', { ...where, status: 500, error: detail })
  return json(500, { error: 'internal_error', message: 'Something went wrong on our side; the request may be retried' })
}

/**
 * A refusal's body, where the checker refused the request's body as a whole (`wholeBody`) and the
 * request's Content-Type says it was not sent as JSON: that message then says how it was read. The
 * checker runs in the services, which never see the request's headers.
 */
function bodyAsSent(err: Refused, request: Request): Record<string, unknown> {
  const body = err.toBody()
  if (!(err instanceof ErrorListError) || err.wholeBody === undefined) return body
  const contentType = request.headers.get('content-type')
  if (contentType === null || isJsonType(contentType)) return body
  return { ...body, errors: err.errors.map((e, i) => (i === err.wholeBody ? notReadAsJson(contentType) : e)) }
}
