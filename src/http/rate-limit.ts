/**
 * Fixed-window request counter per client IP (api.md Limits: 100 requests per 60 s per IP).
 * In memory, so each replica counts its own traffic; behind a load balancer the effective
 * limit is per replica, which the README says.
 */
export interface RateLimiter {
  /** Count one request; returns the seconds to wait when over the limit, else 0. */
  hit(ip: string, now?: number): number
}

export function createRateLimiter(perMinute: number, windowMs = 60_000): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>()
  let lastSweep = 0
  return {
    hit(ip, now = Date.now()) {
      if (perMinute <= 0) return 0
      if (now - lastSweep > windowMs) {
        // drop finished windows so memory follows the number of active clients
        for (const [key, w] of windows) if (now - w.start >= windowMs) windows.delete(key)
        lastSweep = now
      }
      let w = windows.get(ip)
      if (!w || now - w.start >= windowMs) {
        w = { start: now, count: 0 }
        windows.set(ip, w)
      }
      w.count++
      return w.count > perMinute ? Math.max(1, Math.ceil((w.start + windowMs - now) / 1000)) : 0
    },
  }
}
