import type { Deps, WakeTopic } from './deps'

/**
 * A scheduled loop: a `tick(deps, now)` that tests call with an explicit clock, run by
 * `scheduler.ts` on its interval. Its own file so that the loops (below the scheduler) and the
 * scheduler (which lists them) both import it without importing each other.
 */
export interface Loop {
  name: string
  /** seconds between runs */
  everySeconds: (deps: Deps) => number
  tick: (deps: Deps, now: Date) => Promise<unknown>
  /** also run at once when this topic is woken (after a write commits) */
  wakeOn?: WakeTopic
  /**
   * Wake-ups run at most this often (default: every one at once): under a stream of writes each
   * write would otherwise pay for a run of its own on PGlite's one connection. The first wake-up
   * after a quiet spell still runs at once.
   */
  wakeEveryMs?: number
  /** Called once when the scheduler starts (e.g. to register its own wake listener); may return a stop function. */
  onStart?: (deps: Deps) => (() => Promise<void>) | void
}
