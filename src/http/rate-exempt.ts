/**
 * Requests the per-IP rate limit does not count (agents-and-app.md, 3 and 7): those that wait.
 * A held GET /events?wait=N (N ≥ 1) and the canvas's long poll GET /view/commands?wait=N (its
 * heartbeat too) spend their time asleep in the waiter list, not in the database, and an agent
 * or an open page would otherwise use up the limit it needs for real work by waiting. Only a
 * GET of exactly those paths with a positive whole `wait` within the route's own range is
 * exempt, so no ordinary read gets past the limit by adding a parameter; anything the route
 * would refuse (wait=abc, wait=99) is counted.
 */
const WAITING = new Map<string, number>([
  ['/events', 60], // seconds
  ['/view/commands', 15_000], // milliseconds
])

export function rateExempt(method: string, url: URL): boolean {
  if (method !== 'GET') return false
  const path = url.pathname.replace(/^\/api(\/v1)?/, '')
  const max = WAITING.get(path)
  if (max === undefined || !/^\/api\//.test(url.pathname)) return false
  const waits = url.searchParams.getAll('wait')
  if (waits.length !== 1 || !/^[1-9]\d{0,4}$/.test(waits[0]!)) return false
  return Number(waits[0]) <= max
}
