import { Cron } from 'croner'
import type { Deps } from './deps'
import { deleteExpiredKeys } from './http/idempotency'

/**
 * The scheduled loops, each a `tick(deps, now)` that tests call with an explicit clock.
 * Croner runs them; `protect: true` skips a run while the previous one is still going.
 */
export interface Loop {
  name: string
  /** seconds between runs */
  everySeconds: (deps: Deps) => number
  tick: (deps: Deps, now: Date) => Promise<unknown>
}

export const loops: Loop[] = [
  {
    name: 'idempotency-cleanup',
    everySeconds: () => 3600,
    tick: (deps, now) => deleteExpiredKeys(deps.db, now),
  },
]

export function startScheduler(deps: Deps) {
  const jobs = loops.map(
    (loop) =>
      new Cron(
        '* * * * * *',
        { interval: loop.everySeconds(deps), protect: true, catch: (err) => deps.log.error('loop failed', { loop: loop.name, error: String(err) }) },
        async () => {
          await loop.tick(deps, deps.now())
        },
      ),
  )
  return {
    async stop() {
      for (const job of jobs) job.stop()
    },
  }
}
