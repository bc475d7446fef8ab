import { redactSecrets } from '../log'

/**
 * Checks every request's text before any handler, parser or database sees it: a NUL character
 * anywhere (PostgreSQL refuses it in text, SQLSTATE 22021/22P05) and JSON nested deeper than
 * MAX_JSON_DEPTH (recursive code — canonical JSON, stringify, TypeBox — would overflow the
 * stack). Both are client mistakes: a 400 that names the field, never a 500.
 */

/** The deepest JSON a request body may nest (objects and arrays); documented in the guide and README. */
export const MAX_JSON_DEPTH = 64

/** What is wrong with the request, as a message, or null when it is fine. */
export type Refusal = string | null

const NUL = '\u0000'
const nulMessage = (field: string) => `${field} must not contain NUL characters (\\u0000)`

/** A NUL in the path or in a query parameter's name or value. */
export function checkUrl(url: URL): Refusal {
  let path: string
  try {
    path = decodeURIComponent(url.pathname)
  } catch {
    return 'The path is not valid percent-encoding'
  }
  if (path.includes(NUL)) return nulMessage('The path')
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
 * string holds a NUL (raw, or escaped as \u0000). Only then is it parsed, to name the field.
 */
export function checkJsonText(text: string): Refusal {
  let depth = 0
  let inString = false
  let nul = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c /* \ */) {
        if (text.startsWith('u0000', i + 1)) nul = true
        i++
      } else if (c === 0x22 /* " */) inString = false
      else if (c === 0) nul = true
    } else if (c === 0x22) inString = true
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > MAX_JSON_DEPTH)
        return `Request body is nested deeper than ${MAX_JSON_DEPTH} levels; flatten it (the limit is in the guide)`
    } else if (c === 0x7d || c === 0x5d) depth--
  }
  if (!nul) return null
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return null // not JSON: the body parser answers that
  }
  return nulMessage(nulPath(value) ?? 'A value')
}

/** The path (`node.data.label`, `mutations[3].node.id`) of the first string or key with a NUL. */
function nulPath(root: unknown): string | null {
  const stack: [unknown, string][] = [[root, '']]
  while (stack.length) {
    const [value, path] = stack.pop()!
    if (typeof value === 'string') {
      if (value.includes(NUL)) return path || 'body'
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${path}[${i}]`])
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        const at = path ? `${path}.${k}` : k
        if (k.includes(NUL)) return `A key in ${path || 'body'}`
        stack.push([v, at])
      }
    }
  }
  return null
}

/**
 * A path fit for a log line: at most 200 characters, with share tokens redacted wherever they
 * stand (a path such as `/zz/s/<token>` answers 404 but still carries the token) and with any
 * API key or webhook secret a client put in it.
 */
export function loggablePath(path: string): string {
  const redacted = redactSecrets(path.replace(/(\/s\/|\/public\/share\/)[^/?]+/g, '$1[redacted]'))
  return redacted.length > 200 ? `${redacted.slice(0, 200)}…` : redacted
}
