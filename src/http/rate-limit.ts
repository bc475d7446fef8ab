/**
 * Fixed-window request counter per client IP (docs/reference/limits.md).
 * In memory, so each replica counts its own traffic; behind a load balancer the effective
 * limit is per replica, which docs/scaling-out.md says.
 */
export interface RateLimiter {
  /** Count one request; returns the seconds to wait when over the limit, else 0. */
  hit(ip: string, now?: number): number
  /** The seconds to wait when `ip` is already over the limit, else 0; counts nothing. */
  blocked(ip: string, now?: number): number
  /** False when the limit is off (RATE_LIMIT_PER_MINUTE=0): then it needs no client address. */
  readonly on: boolean
}

export function createRateLimiter(perMinute: number, windowMs = 60_000): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>()
  let lastSweep = 0
  return {
    on: perMinute > 0,
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
    blocked(ip, now = Date.now()) {
      const w = windows.get(ip)
      if (perMinute <= 0 || !w || now - w.start >= windowMs) return 0
      return w.count >= perMinute ? Math.max(1, Math.ceil((w.start + windowMs - now) / 1000)) : 0
    },
  }
}

/**
 * Failed attempts per client IP (the admin token): after `max` failures in a window, every
 * request from that IP is refused until the window ends, right token or not, so the token
 * cannot be guessed at request speed.
 */
export function createFailureLimiter(max: number, windowMs = 60_000) {
  const failures = new Map<string, { start: number; count: number }>()
  return {
    /** seconds to wait when `ip` has failed too often, else 0 */
    blocked(ip: string, now = Date.now()): number {
      const f = failures.get(ip)
      if (!f) return 0
      if (now - f.start >= windowMs) {
        failures.delete(ip)
        return 0
      }
      return f.count >= max ? Math.max(1, Math.ceil((f.start + windowMs - now) / 1000)) : 0
    },
    fail(ip: string, now = Date.now()): void {
      const f = failures.get(ip)
      if (!f || now - f.start >= windowMs) failures.set(ip, { start: now, count: 1 })
      else f.count++
    },
  }
}
