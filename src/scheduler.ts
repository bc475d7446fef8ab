import { Cron } from 'croner'
import type { Deps, WakeTopic } from './deps'
import { eventRetentionLoop } from './events/loop'
import { deleteExpiredKeys } from './http/idempotency'
import { tick as classifyTick } from './nodes/classify-loop'
import { searchLoop } from './search/loop'
import { shareExpiryLoop } from './share/loop'
import { webhookDeliveryLoop } from './webhooks/loop'

/**
 * The scheduled loops, each a `tick(deps, now)` that tests call with an explicit clock.
 * Croner runs them; `protect: true` skips a run while the previous one is still going.
 */
export interface Loop {
  name: string
  /** seconds between runs */
  everySeconds: (deps: Deps) => number
  tick: (deps: Deps, now: Date) => Promise<unknown>
  /** also run at once when this topic is woken (after a write commits) */
  wakeOn?: WakeTopic
  /** Called once when the scheduler starts (e.g. to register its own wake listener); may return a stop function. */
  onStart?: (deps: Deps) => (() => Promise<void>) | void
}

export const loops: Loop[] = [
  {
    name: 'idempotency-cleanup',
    everySeconds: () => 3600,
    tick: (deps, now) => deleteExpiredKeys(deps.db, now),
  },
  {
    // tasks are classified within 5 s: woken after each write, swept every 2 s as a safety net
    name: 'classify-tasks',
    everySeconds: () => 2,
    tick: classifyTick,
    wakeOn: 'classify',
  },
  webhookDeliveryLoop,
  shareExpiryLoop,
  eventRetentionLoop,
  searchLoop,
]

export function startScheduler(deps: Deps) {
  let stopped = false
  const jobs = loops.map((loop) => {
    const job = new Cron(
      '* * * * * *',
      {
        interval: loop.everySeconds(deps),
        protect: true,
        catch: (err) => deps.log.error('loop failed', { loop: loop.name, error: String(err) }),
      },
      async () => {
        await loop.tick(deps, deps.now())
      },
    )
    if (loop.wakeOn) deps.onWake(loop.wakeOn, () => !stopped && job.trigger())
    return job
  })
  const stops = loops.map((loop) => loop.onStart?.(deps)).filter((s): s is () => Promise<void> => !!s)
  return {
    async stop() {
      stopped = true
      for (const job of jobs) job.stop()
      await Promise.all(stops.map((s) => s()))
    },
  }
}
