import { Cron } from 'croner'
import type { Deps } from './deps'
import { eventRetentionLoop } from './events/loop'
import { pruneHistory } from './history/service'
import { deleteExpiredKeys } from './http/idempotency'
import { presenceExpiryLoop } from './live/loop'
import type { Loop } from './loop'
import { pgliteMaintenanceLoop } from './maintenance/loop'
import { memoryLoop } from './maintenance/memory'
import { tick as classifyTick } from './nodes/classify-loop'
import { importCleanupLoop } from './projects/importing'
import { pruneProposals } from './proposals/service'
import { searchLoop } from './search/loop'
import { shareExpiryLoop } from './share/loop'
import { webhookDeliveryLoop } from './webhooks/loop'
import { forgetSpentStates } from './workflow/spent'

/**
 * The scheduled loops, each a `tick(deps, now)` that tests call with an explicit clock.
 * Croner runs them on their interval; `oneAtATime` keeps each to one run at a time, wake-ups included.
 */
export const loops: Loop[] = [
  {
    // also forgets spent workflow states once expired and changes past HISTORY_DAYS: the same hourly clean-up
    name: 'idempotency-cleanup',
    everySeconds: () => 3600,
    tick: async (deps, now) => ({
      keys: await deleteExpiredKeys(deps.db, now),
      spentStates: await forgetSpentStates(deps.db, now),
      changes: await pruneHistory(deps, now),
      proposals: await pruneProposals(deps, now),
    }),
  },
  {
    // tasks are classified within 5 s: woken after each write, swept every 2 s as a safety net
    name: 'classify-tasks',
    everySeconds: () => 2,
    tick: classifyTick,
    wakeOn: 'classify',
    wakeEveryMs: 250,
  },
  webhookDeliveryLoop,
  shareExpiryLoop,
  eventRetentionLoop,
  searchLoop,
  pgliteMaintenanceLoop,
  memoryLoop,
  presenceExpiryLoop,
  importCleanupLoop,
]

/**
 * `run`, never twice at once: a call while it runs asks for one more run after it (however many
 * calls came in the meantime), and resolves when that run is done. Croner's `protect` covers
 * only its own timer; `Cron.trigger()` (a wake-up) starts a run regardless, so two runs of the
 * search loop could push one node's events to Meilisearch out of order and bring a deleted
 * node back.
 */
export function oneAtATime(run: () => Promise<void>): (() => Promise<void>) & { idle(): Promise<void> } {
  let running: Promise<void> | null = null
  let again = false
  const call = () => {
    if (running) {
      again = true
      return running
    }
    running = (async () => {
      try {
        do {
          again = false
          await run()
        } while (again)
      } finally {
        running = null
      }
    })()
    return running
  }
  /** resolves once no run is going (at once when none is), never rejects */
  const idle = async () => {
    await running?.catch(() => {})
  }
  return Object.assign(call, { idle })
}

/**
 * `fn` at most once every `ms`: a call within `ms` of the last one that ran is put off until
 * `ms` after it, and calls in the meantime fold into that one. `cancel` drops a call put off.
 */
export function atMostEvery(ms: number, fn: () => void): (() => void) & { cancel(): void } {
  let last = Number.NEGATIVE_INFINITY
  let timer: ReturnType<typeof setTimeout> | null = null
  const fire = () => {
    timer = null
    last = performance.now()
    fn()
  }
  const call = () => {
    if (timer) return
    const wait = last + ms - performance.now()
    if (wait <= 0) fire()
    else timer = setTimeout(fire, wait)
  }
  const cancel = () => {
    if (timer) clearTimeout(timer)
    timer = null
  }
  return Object.assign(call, { cancel })
}

/** How long `stop()` waits for runs still going before the caller closes the database anyway. */
const STOP_WAIT_MS = 10_000

export function startScheduler(appDeps: Deps) {
  // the loops run their statements on the database's background handle (PostgreSQL: a pool of
  // their own); every other dependency is the app's, read at each use (tests replace some)
  const background = appDeps.db.background
  const deps: Deps = background ? new Proxy(appDeps, { get: (app, key) => (key === 'db' ? background : Reflect.get(app, key)) }) : appDeps
  let stopped = false
  const runs: ReturnType<typeof oneAtATime>[] = []
  const wakes: ReturnType<typeof atMostEvery>[] = []
  const jobs = loops.map((loop) => {
    const run = oneAtATime(async () => {
      if (stopped) return
      const started = performance.now()
      try {
        await loop.tick(deps, deps.now())
        deps.metrics.loopRun(loop.name, performance.now() - started, true)
      } catch (err) {
        deps.metrics.loopRun(loop.name, performance.now() - started, false)
        deps.log.error('loop failed', { loop: loop.name, error: String(err) })
      }
    })
    const job = new Cron('* * * * * *', { interval: loop.everySeconds(deps) }, run)
    if (loop.wakeOn) {
      const wake = atMostEvery(loop.wakeEveryMs ?? 0, () => !stopped && void run())
      deps.onWake(loop.wakeOn, wake)
      wakes.push(wake)
    }
    runs.push(run)
    return job
  })
  const stops = loops.map((loop) => loop.onStart?.(deps)).filter((s): s is () => Promise<void> => !!s)
  return {
    /** Stop the timers, let runs still going finish (up to STOP_WAIT_MS), then the loops' own stops. */
    async stop() {
      stopped = true
      for (const job of jobs) job.stop()
      for (const wake of wakes) wake.cancel()
      let timer: ReturnType<typeof setTimeout> | undefined
      await Promise.race([
        Promise.all(runs.map((r) => r.idle())),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS))),
      ])
      clearTimeout(timer)
      await Promise.all(stops.map((s) => s()))
    },
  }
}
