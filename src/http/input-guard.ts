import { redactSecrets } from '../log'

/**
 * Checks every request's text before any handler, parser or database sees it: a NUL character
 * anywhere (PostgreSQL refuses it in text, SQLSTATE 22021/22P05) and JSON nested deeper than
 * MAX_JSON_DEPTH (recursive code — canonical JSON, stringify, TypeBox — would overflow the
 * stack). Both are client mistakes: a 400 that names the field, never a 500.
 */

/** The deepest JSON a request body may nest (objects and arrays); documented in the guide and docs/api-guide.md. */
export const MAX_JSON_DEPTH = 64

/** What is wrong with the request, as a message, or null when it is fine. */
export type Refusal = string | null

const NUL = '\u0000'
const nulMessage = (field: string) => `${field} must not contain NUL characters (\\u0000)`

/** A NUL in the path or in a query parameter's name or value. */
export function checkUrl(url: URL): Refusal {
  const raw = url.pathname
  // a path without '%' decodes to itself: no decoding, and no query means no parameters to walk
  let path = raw
  if (raw.includes('%'))
    try {
      path = decodeURIComponent(raw)
    } catch {
      return 'The path is not valid percent-encoding'
    }
  if (path.includes(NUL)) return nulMessage('The path')
  if (url.search === '') return null
  for (const [name, value] of url.searchParams) {
    if (name.includes(NUL)) return nulMessage('A query parameter name')
    if (value.includes(NUL)) return nulMessage(`Query parameter ${name}`)
  }
  return null
}

/** A NUL in one of the headers a handler reads as data. */
export function checkHeaders(headers: Headers): Refusal {
  for (const name of ['idempotency-key', 'x-agent-id', 'x-request-id'])
    if (headers.get(name)?.includes(NUL)) return nulMessage(`Header ${name}`)
  return null
}

/**
 * Scans a JSON text once, without parsing: how deep it nests (outside strings) and whether a
 * string may hold a NUL (raw, or escaped as \u0000) or a lone surrogate (escaped as \ud800, or
 * raw in a text built in-process). Only then is it parsed, to name the field. `strings: false`
 * leaves the strings to the route (POST /workflow answers them as a bad response of the run).
 */
export function checkJsonText(text: string, strings = true): Refusal {
  let depth = 0
  let inString = false
  let suspect = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c /* \ */) {
        if (text.charCodeAt(i + 1) === 0x75 /* u */ && (text.startsWith('0000', i + 2) || /^[dD][89a-fA-F]/.test(text.slice(i + 2, i + 4))))
          suspect = true
        i++
      } else if (c === 0x22 /* " */) inString = false
      else if (c === 0 || (c >= 0xd800 && c <= 0xdfff)) suspect = true
    } else if (c === 0x22) inString = true
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > MAX_JSON_DEPTH)
        return `Request body is nested deeper than ${MAX_JSON_DEPTH} levels; flatten it (the limit is in the guide)`
    } else if (c === 0x7d || c === 0x5d) depth--
  }
  if (!suspect || !strings) return null
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return null // not JSON: the body parser answers that
  }
  return badString(value)?.message ?? null
}

/** A string that no handler may see, and where it stands in the body. */
export interface BadString {
  /** `node.data.label`, `mutations[3].node.id`, `body`; for a key, the object that holds it */
  path: string
  message: string
}

/**
 * The first string or key of a parsed body (depth first, in order) that holds a NUL or a lone
 * surrogate (half of a UTF-16 pair: not a character, and PostgreSQL refuses it in json), or null.
 * The one check of every string that enters: the input guard runs it on every JSON body.
 */
export function badString(root: unknown): BadString | null {
  const stack: [unknown, string][] = [[root, '']]
  while (stack.length) {
    const [value, path] = stack.pop()!
    if (typeof value === 'string') {
      const wrong = stringFault(value)
      if (wrong) return { path: path || 'body', message: `${path || 'body'} ${wrong}` }
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${path}[${i}]`])
    } else if (value && typeof value === 'object') {
      const entries = Object.entries(value)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i]!
        const wrong = stringFault(k)
        if (wrong) return { path: path || 'body', message: `A key in ${path || 'body'} ${wrong}` }
        stack.push([v, path ? `${path}.${k}` : k])
      }
    }
  }
  return null
}

function stringFault(s: string): string | null {
  if (s.includes(NUL)) return 'must not contain NUL characters (\\u0000)'
  if (!s.isWellFormed()) return 'must be well-formed Unicode: a lone surrogate (\\ud800 to \\udfff without its pair) is not a character'
  return null
}

/** What loggablePath may redact: a share path, or the prefix of an API key or webhook secret. */
const MAY_REDACT = /\/s\/|\/public\/share\/|arb_|whsec_/

/**
 * A path fit for a log line: at most 200 characters, with share tokens redacted wherever they
 * stand (a path such as `/zz/s/<token>` answers 404 but still carries the token) and with any
 * API key or webhook secret a client put in it.
 */
export function loggablePath(path: string): string {
  // most paths hold nothing to redact: the regular expressions below run only on those that may
  if (path.length <= 200 && !MAY_REDACT.test(path)) return path
  const redacted = redactSecrets(path.replace(/(\/s\/|\/public\/share\/)[^/?]+/g, '$1[redacted]'))
  return redacted.length > 200 ? `${redacted.slice(0, 200)}…` : redacted
}
