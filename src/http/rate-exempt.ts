/**
 * Requests the per-IP rate limit does not count (docs/agents.md): those that wait.
 * A held GET /events?wait=N (N ≥ 1) and the canvas's long poll GET /view/commands?wait=N (its
 * heartbeat too) spend their time asleep in the waiter list, not in the database, and an agent
 * or an open page would otherwise use up the limit it needs for real work by waiting. Only a
 * GET of exactly those paths with a positive whole `wait` within the route's own range is
 * exempt, so no ordinary read gets past the limit by adding a parameter; anything the route
 * would refuse (wait=abc, wait=99) is counted.
 */
const WAITING = new Map<string, { max: number; kind: Waiting }>([
  ['/events', { max: 60, kind: 'feed' }], // seconds
  ['/view/commands', { max: 15_000, kind: 'canvas' }], // milliseconds
])

/**
 * What kind of waiting request this is, or false. Exempt means "may go uncounted": the caller
 * checks the limit first (an address past it gets 429), and counts the request after the fact
 * unless it really slept in the waiter list (answered at once, refused or failed: counted).
 */
export type Waiting = 'feed' | 'canvas'

export function rateExempt(method: string, url: URL): Waiting | false {
  if (method !== 'GET') return false
  const path = url.pathname.replace(/^\/api(\/v1)?/, '')
  const route = WAITING.get(path)
  if (route === undefined || !/^\/api\//.test(url.pathname)) return false
  const waits = url.searchParams.getAll('wait')
  if (waits.length !== 1 || !/^[1-9]\d{0,4}$/.test(waits[0]!)) return false
  return Number(waits[0]) <= route.max ? route.kind : false
}
