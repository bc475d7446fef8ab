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
  ) {
    super(message)
  }
}

let key = ''

/** Take the key from the fragment (and drop it from the address bar), or from storage. */
export function loadKey(): string {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('key')
  if (fromHash) {
    localStorage.setItem(KEY_STORE, fromHash)
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

export async function api<T = any>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const res = await fetch(API + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
  })
  if (res.status === 401) throw new Unauthorized('Missing or invalid API key')
  const json = await res.json().catch(() => ({}))
  if (!res.ok) throw new Refused(res.status, json.error ?? `HTTP ${res.status}`, json.message ?? json.error ?? `HTTP ${res.status}`)
  return json as T
}

export const q = encodeURIComponent
