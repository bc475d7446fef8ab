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
   * Requests that went to sleep in the waiter list: the only ones the per-IP rate limit leaves
   * uncounted. One that asked to wait but was answered at once, refused (401, 403) or failed
   * (400) never waited and is counted after the fact, so `wait` is no way around the limit.
   */
  readonly waited: WeakSet<Request>
  /**
   * One read for every caller that asks with the same `key` while it runs and since the same
   * wake-up (`now()`): a thousand requests woken by one commit that read the same page read it
   * once and share its answer (a read begun before a wake-up they heard is never shared with them).
   */
  shared<T>(key: string, read: () => Promise<T>): Promise<T>
  /**
   * Resolves when this woken request may send its answer: at most a slice of them per turn of the
   * event loop, so answering a thousand woken requests never holds other requests up for long.
   */
  turn(): Promise<void>
  /** Release every waiter (shutdown: held requests answer at once instead of holding the drain). */
  close(): void
  /** True once `close` ran (the server stops): a woken request answers now, and streams end instead of waiting again. */
  closed(): boolean
}
