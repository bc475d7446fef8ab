import type { Db } from '../db'
import type { Logger } from '../log'
import type { Waiters } from '../ports/waiters'

/**
 * Held requests (GET /events?wait, the canvas's long poll) wait here, in memory, keyed by what
 * they wait for: no request reads the database while it waits. A commit that concerns a key
 * says so on WAKE_CHANNEL (inside its transaction, so the word leaves at the commit and never on
 * a rollback); every replica listening on the channel (PostgreSQL LISTEN/NOTIFY; on PGlite this
 * process) wakes the waiters of that key, which then read once.
 */
export const WAKE_CHANNEL = 'arbor_wake'

/** The keys: a commit that wrote a project's events, and a view command queued for its canvas. */
export const eventsKey = (projectId: string) => `events:${projectId}`
export const viewKey = (projectId: string) => `view:${projectId}`

/** Woken requests answered per turn of the event loop: /healthz and every other request get a turn between slices. */
export const WAKE_SLICE = 32

export function createWaiters(db: Db, log: Pick<Logger, 'warn' | 'info'>): Waiters {
  const byKey = new Map<string, Set<() => void>>()
  /** wake-ups counted, and the count at each key's last one (one entry per project woken) */
  let clock = 0
  let allWoken = 0
  const lastWake = new Map<string, number>()
  let count = 0
  let closed = false
  const wakeKey = (key: string) => {
    lastWake.set(key, ++clock)
    for (const fn of byKey.get(key) ?? []) fn()
  }
  const wakeAll = () => {
    allWoken = ++clock
    for (const set of byKey.values()) for (const fn of set) fn()
  }
  let listening: Promise<unknown> | null = null
  const listen = () =>
    (listening ??= db
      .listen(WAKE_CHANNEL, {
        message: wakeKey,
        // after a lost connection a word may have been missed: every waiter reads again
        up: wakeAll,
        down() {},
      })
      .catch((err) => {
        listening = null // the next wait tries again; meanwhile waits end on their timers
        log.warn('wake channel unavailable', { error: String(err) })
      }))
  const reads = new Map<string, Promise<unknown>>()
  const turns: (() => void)[] = []
  let turning = false
  /** the run of slices under way: requests let go and slices, logged when it took more than one */
  let run = { answered: 0, slices: 0 }
  const nextSlice = () => {
    const slice = turns.splice(0, WAKE_SLICE)
    run.answered += slice.length
    run.slices++
    for (const go of slice) go()
    if (turns.length) setImmediate(nextSlice)
    else {
      turning = false
      if (run.slices > 1) log.info('woken requests answered in slices', { ...run, perSlice: WAKE_SLICE })
      run = { answered: 0, slices: 0 }
    }
  }
  return {
    waited: new WeakSet(),
    shared<T>(key: string, read: () => Promise<T>): Promise<T> {
      const at = `${clock}\n${key}`
      const running = reads.get(at) as Promise<T> | undefined
      if (running) return running
      const started = read().finally(() => reads.delete(at))
      reads.set(at, started)
      return started
    },
    turn() {
      return new Promise<void>((resolve) => {
        turns.push(resolve)
        if (!turning) {
          turning = true
          setImmediate(nextSlice)
        }
      })
    },
    async wait(keys, ms, since = clock) {
      if (closed || ms <= 0) return false
      await listen()
      if (allWoken > since || keys.some((k) => (lastWake.get(k) ?? 0) > since)) return true
      return new Promise<boolean>((resolve) => {
        count++
        const done = (woken: boolean) => {
          clearTimeout(timer)
          for (const k of keys) byKey.get(k)?.delete(fire)
          for (const k of keys) if (byKey.get(k)?.size === 0) byKey.delete(k)
          count--
          resolve(woken)
        }
        const fire = () => done(!closed)
        const timer = setTimeout(() => done(false), ms)
        for (const k of keys) (byKey.get(k) ?? byKey.set(k, new Set()).get(k)!).add(fire)
      })
    },
    now: () => clock,
    signal: (tx, key) => tx.notify(WAKE_CHANNEL, key),
    size: () => count,
    closed: () => closed,
    close() {
      closed = true
      wakeAll()
    },
  }
}

/**
 * Answer `check()` as soon as it is not null, reading again only when woken, until `until`
 * (a Date.now() time); then the last (null) result. A commit wakes before its rows are
 * readable by every reader's horizon (GET /events shows an event once every older transaction
 * has finished, and on a busy PostgreSQL one may run for seconds), so a read that comes up empty
 * after a wake-up is retried with a growing pause, at most a second, until it finds the rows or
 * the deadline passes: only requests that were woken read again, never the idle ones.
 */
export async function waitFor<T>(
  waiters: Waiters,
  keys: string[],
  until: number,
  check: () => Promise<T | null>,
  /** told once, when the request goes to sleep (the rate limit leaves only such a request uncounted) */
  sleeping: () => void = () => {},
): Promise<T | null> {
  let retry = 0
  let slept = false
  for (;;) {
    const since = waiters.now()
    const found = await check()
    if (found !== null) {
      // a woken request answers in its slice (a thousand woken at once would otherwise all answer in one go)
      if (slept) await waiters.turn()
      return found
    }
    const left = until - Date.now()
    if (left <= 0) return null
    if (!slept) {
      slept = true
      sleeping()
    }
    const woken = await waiters.wait(keys, retry ? Math.min(retry, left) : left, since)
    // the deadline passed, or the server stops (also while pausing after a wake-up found nothing): one last read
    if (!woken && (!retry || waiters.closed())) {
      const last = await check()
      await waiters.turn()
      return last
    }
    retry = woken ? 20 : Math.min(retry * 2, 1000)
  }
}
