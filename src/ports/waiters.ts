import type { Db } from '../db'

/** Held requests (GET /events?wait, the canvas's long poll), woken by commits on any replica; built by events/waiters.ts. */
export interface Waiters {
  /**
   * Resolves true when one of `keys` is woken after `since` (a `now()` taken before the caller
   * last read: a wake-up that came while it read is not lost), false once `ms` have passed (or
   * the server stops).
   */
  wait(keys: string[], ms: number, since?: number): Promise<boolean>
  /** The count of wake-ups so far: pass it to `wait` as `since`. */
  now(): number
  /** Tell every replica's waiters of `key`, when `db`'s transaction commits (at once outside one). */
  signal(db: Db, key: string): Promise<void>
  /** Requests waiting now. */
  size(): number
  /**
   * Requests that asked to wait but found their answer at once (they never waited): the
   * per-IP rate limit counts these after the fact, so `wait` is no way around it.
   */
  readonly answeredAtOnce: WeakSet<Request>
  /** Release every waiter (shutdown: held requests answer at once instead of holding the drain). */
  close(): void
}
