/**
 * The one error class of a refusal (`Refused`) and its two body shapes of docs/reference/errors.md,
 * each an Error that knows its status and body, named after the body it answers with. The checker
 * (src/http/action-schema.ts) and the services throw them; the error plugin (src/http/error-plugin.ts)
 * draws every one the same way: its status and `toBody()`.
 */

/** A refusal: its status and the body it answers with. */
export abstract class Refused extends Error {
  /** set when an idempotent retry replays this stored answer */
  replayed = false
  abstract readonly status: number
  abstract toBody(): Record<string, unknown>
}

/**
 * Answers `{success:false, errors:[...]}`: mostly a request that breaks a rule (400), and also the
 * few other statuses docs/reference/errors.md words this way (409 on a reused Idempotency-Key, the 500 of a
 * failed batch or restore).
 */
export class ErrorListError extends Refused {
  constructor(
    readonly errors: string[],
    readonly meta: Record<string, unknown> = {},
    readonly status = 400,
    /** seconds after which the same request may succeed (a Retry-After header) */
    readonly retryAfter?: number,
    /**
     * the index in `errors` of the message that refuses a request's body as a whole (src/http/action-schema.ts
     * `checkInput`), which the error plugin words by the request's Content-Type when the body was not sent as JSON
     */
    readonly wholeBody?: number,
  ) {
    super(errors.join('; '))
  }
  toBody(): Record<string, unknown> {
    return { success: false, errors: this.errors, ...(Object.keys(this.meta).length ? { _meta: this.meta } : {}) }
  }
}

/**
 * Answers `{error, message?, ...}`: access, tier and other refusals. `error` is a code
 * (`project_access_denied`) or, where docs/reference/errors.md words it so, a sentence (`Node <id> not found`,
 * `Invalid command`, 'REST API access requires Builder or Team tier').
 */
export class RefusalError extends Refused {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(typeof extra.message === 'string' ? extra.message : error)
  }
  toBody(): Record<string, unknown> {
    return { error: this.error, ...this.extra }
  }
}

/**
 * `err` with each of its messages named by `label` (`mutations[2]: …`, `change 41: …`), when it is
 * a list of messages (its meta `meta` when given, else its own); any other error as it is.
 */
export function prefixed(label: string, err: unknown, meta?: Record<string, unknown>): unknown {
  if (!(err instanceof ErrorListError)) return err
  return new ErrorListError(
    err.errors.map((e) => `${label}: ${e}`),
    meta ?? err.meta,
    err.status,
  )
}

export const invalid = (message: string, meta?: Record<string, unknown>) => new ErrorListError([message], meta)
export const notFound = (error: string, extra?: Record<string, unknown>) => new RefusalError(404, error, extra)
export const forbidden = (error: string, extra?: Record<string, unknown>) => new RefusalError(403, error, extra)

/** The message for a project the key cannot access (docs/reference/authentication.md, 4). */
export const PROJECT_ACCESS_DENIED = 'API key does not have access to this project'

export const projectAccessDenied = (message = PROJECT_ACCESS_DENIED) => new RefusalError(403, 'project_access_denied', { message })
