/**
 * The two error body shapes of api.md, each an Error that knows its status and body.
 * Services throw them; the error plugin in app.ts turns them into responses.
 */

/** `{success:false, errors:[...]}`: a request that breaks a validation rule. */
export class ValidationError extends Error {
  /** set when an idempotent retry replays this stored answer */
  replayed = false
  constructor(
    readonly errors: string[],
    readonly meta: Record<string, unknown> = {},
    readonly status = 400,
  ) {
    super(errors.join('; '))
  }
  toBody(): Record<string, unknown> {
    return { success: false, errors: this.errors, ...(Object.keys(this.meta).length ? { _meta: this.meta } : {}) }
  }
}

/** `{error, message?, ...}`: access, tier and other refusals. */
export class ApiError extends Error {
  /** set when an idempotent retry replays this stored answer */
  replayed = false
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

export const invalid = (message: string, meta?: Record<string, unknown>) => new ValidationError([message], meta)
export const notFound = (error: string, extra?: Record<string, unknown>) => new ApiError(404, error, extra)
export const forbidden = (error: string, extra?: Record<string, unknown>) => new ApiError(403, error, extra)

export const projectAccessDenied = (message = 'API key does not have access to this project') =>
  new ApiError(403, 'project_access_denied', { message })
