/**
 * Calls to Arbor's API. The key comes from the address's #key= (removed from the address bar at
 * once) or from what this browser stored; it only ever travels in the Authorization header.
 */
const API = '/api/v1'
const KEY_STORE = 'arbor.apiKey'

export class Unauthorized extends Error {}
export class Refused extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** seconds the server asked to wait (429) */
    readonly retryAfter = 0,
    /** the refusal's whole JSON body (a revert_conflict's `conflicts`) */
    readonly body: Record<string, unknown> = {},
  ) {
    super(message)
  }
}
/** The network is down or the server unreachable. */
export class Offline extends Error {}

let key = ''

/** Take the key from the fragment (and drop it from the address bar), or from storage. */
export function loadKey(): string {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('key')
  if (fromHash) {
    localStorage.setItem(KEY_STORE, fromHash.trim())
    history.replaceState(null, '', location.pathname + location.search)
  }
  key = localStorage.getItem(KEY_STORE) ?? ''
  return key
}

export function setKey(value: string) {
  key = value.trim()
  localStorage.setItem(KEY_STORE, key)
}

export function forgetKey() {
  key = ''
  localStorage.removeItem(KEY_STORE)
}

/** What a person reads for a refusal: the API's own words, without codes. */
/** The parts of a refusal's body a person reads (either error shape of docs/reference/errors.md). */
interface RefusalJson {
  errors?: unknown
  message?: unknown
  error?: unknown
  _meta?: { _tip?: unknown; tip?: unknown }
}

function message(status: number, json: RefusalJson): string {
  const errors: string[] = Array.isArray(json.errors) ? json.errors.map(String) : []
  const tip = json._meta?._tip ?? json._meta?.tip
  let text = errors.length ? errors.join('; ') : String(json.message ?? json.error ?? '')
  if (status === 404 && !text) text = 'That item no longer exists; it may have been deleted elsewhere.'
  if (status === 429) text = 'Too many requests from this address right now. Wait a moment and try again.'
  if (status === 403 && !text) text = 'Your plan or role does not allow this.'
  if (!text) text = `The server answered ${status}.`
  return tip && typeof tip === 'string' ? `${text} ${tip}` : text
}

export async function api<T = unknown>(
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  /** the request outlives the page (a presence ended as the page goes) */
  keepalive = false,
): Promise<T> {
  let res: Response
  try {
    res = await fetch(API + path, {
      keepalive,
      method,
      headers: {
        authorization: `Bearer ${key}`,
        'x-arbor-via': 'app',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
    })
  } catch {
    throw new Offline('No connection to the server.')
  }
  if (res.status === 401) throw new Unauthorized('Missing or invalid API key')
  const json: unknown = await res.json().catch(() => ({}))
  if (!res.ok) {
    const refusal = (json && typeof json === 'object' ? json : {}) as RefusalJson
    throw new Refused(
      res.status,
      String(refusal.error ?? `HTTP ${res.status}`),
      message(res.status, refusal),
      Number(res.headers.get('retry-after')) || 0,
      refusal as Record<string, unknown>,
    )
  }
  return json as T
}

/** A random key (crypto.randomUUID exists only in secure contexts; a LAN http:// page is not one). */
export function uuid(): string {
  const b = crypto.getRandomValues(new Uint8Array(16))
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join('')
}

/**
 * One change: POST /mutate with an Idempotency-Key, so a retry of the same change is applied once.
 * `Prefer: change-ids` has the answer name the changes it recorded: Ctrl+Z takes them back.
 */
export const mutate = <T = unknown>(body: Record<string, unknown>, idempotencyKey = uuid()): Promise<T> =>
  api<T>('POST', '/mutate', body, { 'idempotency-key': idempotencyKey, prefer: 'change-ids' })

/** A failure in words, for the place it happened. */
export function describe(err: unknown): string {
  if (err instanceof Refused || err instanceof Offline) return err.message
  if (err instanceof Unauthorized) return 'Your API key is no longer valid.'
  return String((err as Error)?.message ?? err)
}

export const q = encodeURIComponent

/** One message of GET /stream (server-sent events): its id (events only), its name and its data. */
export interface StreamMessage {
  id?: string
  event: string
  data: unknown
}

/**
 * Read GET /stream (live.md, 2) until it ends: `fetch`, not EventSource, so the key travels in the
 * Authorization header. Resolves when the server ends it (a replica stopping); throws as `api`
 * does when it is refused before it starts (401, 403, 429) or the network fails.
 */
export async function readStream(
  path: string,
  lastEventId: string | undefined,
  onMessage: (m: StreamMessage) => void,
  signal: AbortSignal,
) {
  let res: Response
  try {
    res = await fetch(API + path, {
      headers: {
        authorization: `Bearer ${key}`,
        'x-arbor-via': 'app',
        accept: 'text/event-stream',
        ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
      },
      cache: 'no-store',
      signal,
    })
  } catch {
    throw new Offline('No connection to the server.')
  }
  if (res.status === 401) throw new Unauthorized('Missing or invalid API key')
  if (!res.ok || !res.body) {
    const json = ((await res.json().catch(() => ({}))) ?? {}) as RefusalJson
    throw new Refused(
      res.status,
      String(json.error ?? `HTTP ${res.status}`),
      message(res.status, json),
      Number(res.headers.get('retry-after')) || 0,
    )
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
  let buf = ''
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      buf += value
      let at = buf.indexOf('\n\n')
      while (at >= 0) {
        const block = buf.slice(0, at)
        buf = buf.slice(at + 2)
        at = buf.indexOf('\n\n')
        let id: string | undefined
        let event = ''
        let data = ''
        for (const line of block.split('\n')) {
          if (line.startsWith('id: ')) id = line.slice(4)
          else if (line.startsWith('event: ')) event = line.slice(7)
          else if (line.startsWith('data: ')) data += line.slice(6)
        }
        if (event) onMessage({ id, event, data: data ? JSON.parse(data) : null })
      }
    }
  } catch (err) {
    if (signal.aborted) return
    throw new Offline(`The stream broke off: ${(err as Error).message}`)
  }
}
