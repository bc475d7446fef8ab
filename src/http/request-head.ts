import { RefusalError } from '../errors'

/**
 * What the wrapper reads of every request's head before anything else: its id, and the size
 * limits of its line and headers (main.ts lets Bun read more, so these answer JSON, rendered by
 * the error plugin's renderError).
 */

/** The caller's X-Request-Id when it is a plain token (it is echoed and logged), else a fresh one. */
export function requestIdOf(headers: Headers): string {
  const sent = headers.get('x-request-id')
  return sent && REQUEST_ID.test(sent) ? sent : crypto.randomUUID()
}
const REQUEST_ID = /^[\w.:@+=/-]{1,128}$/

/** The longest path and query, and the most header bytes, a request may send (main.ts lets Bun read more, so these answer JSON). */
export const MAX_URL_BYTES = 16 * 1024
export const MAX_HEADER_BYTES = 32 * 1024

/** The 414 or 431 refusal (for the wrapper to throw) of a request line or headers over the limits, or undefined. */
export function sizeRefusal(url: URL, headers: Headers): RefusalError | undefined {
  const urlBytes = url.pathname.length + url.search.length
  if (urlBytes > MAX_URL_BYTES)
    return new RefusalError(414, 'uri_too_long', {
      message: `The path and query are ${urlBytes} bytes; at most ${MAX_URL_BYTES} are allowed`,
      _meta: { _tip: 'Send long values in a POST body instead of the URL.' },
    })
  const bytes = headerBytes(headers)
  if (bytes > MAX_HEADER_BYTES)
    return new RefusalError(431, 'headers_too_large', {
      message: `The headers are ${bytes} bytes; at most ${MAX_HEADER_BYTES} are allowed`,
      _meta: { _tip: 'Send fewer or shorter headers.' },
    })
  return undefined
}

/** The bytes of the headers as the 431 check counts them (name, value, ": " and CRLF), without an array per header. */
export function headerBytes(headers: Headers): number {
  // Bun's toJSON: an array only for Set-Cookie, which iteration joins with ', '
  const all: Record<string, string | string[]> = headers.toJSON()
  let bytes = 0
  for (const name in all) {
    const value = all[name]!
    bytes += name.length + (typeof value === 'string' ? value.length : value.join(', ').length) + 4
  }
  return bytes
}
