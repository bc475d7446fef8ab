import type { Config } from './config'
import type { Db } from './db'
import type { Logger } from './log'

/**
 * What services need from the outside world. Built once in main.ts (or a test helper)
 * and passed down; services never see the HTTP context.
 */
export interface Deps {
  config: Config
  db: Db
  log: Logger
  /** the clock; tests move it instead of sleeping */
  now: () => Date
  /** Wake the background workers after a commit (webhook deliveries, classification, search). */
  wake: (topic: WakeTopic) => void
  /** Listeners for `wake`, registered by the loops at start. */
  onWake: (topic: WakeTopic, fn: () => void) => void
}

export type WakeTopic = 'events' | 'classify'

export function createWaker(): Pick<Deps, 'wake' | 'onWake'> {
  const listeners = new Map<WakeTopic, Set<() => void>>()
  return {
    wake(topic) {
      for (const fn of listeners.get(topic) ?? []) queueMicrotask(fn)
    },
    onWake(topic, fn) {
      if (!listeners.has(topic)) listeners.set(topic, new Set())
      listeners.get(topic)!.add(fn)
    },
  }
}
