import type { Config } from './config'
import type { Db } from './db'
import { createWaiters, type Waiters } from './events/waiters'
import type { Logger } from './log'
import { createMetrics, type Metrics } from './metrics/service'
import { ReadCache } from './reads/cache'
import { createSearch } from './search/engine'
import type { SearchBackend } from './search/port'
import { createWebhookSender, type WebhookSender } from './webhooks/sender'

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
  /** Listeners for `wake` (the loops at start; a waiting view poll); returns the function that removes it. */
  onWake: (topic: WakeTopic, fn: () => void) => () => void
  /** The search backend (built-in index or Meilisearch), built once with the app's own database handle. */
  search: SearchBackend
  /** Where webhook attempts run: a worker thread of their own, off the thread that serves requests. */
  webhookSender: WebhookSender
  /** Held requests (GET /events?wait, the canvas's long poll), woken by commits on any replica. */
  waiters: Waiters
  /** the Prometheus registry and its recorders (GET /metrics) */
  metrics: Metrics
  /** Answers of project reads, kept while the project's revision is unchanged (src/reads/cache.ts). */
  reads: ReadCache
}

export type WakeTopic = 'events' | 'classify' | 'view'

export function createWaker(): Pick<Deps, 'wake' | 'onWake'> {
  const listeners = new Map<WakeTopic, Set<() => void>>()
  return {
    wake(topic) {
      for (const fn of listeners.get(topic) ?? []) queueMicrotask(fn)
    },
    onWake(topic, fn) {
      if (!listeners.has(topic)) listeners.set(topic, new Set())
      listeners.get(topic)!.add(fn)
      return () => listeners.get(topic)!.delete(fn)
    },
  }
}

/**
 * The dependencies of one app, built once where it is composed (main.ts, a test, a bench).
 * Services get copies with a transaction as `db`; the search backend keeps this, the app's own.
 */
export function createDeps(base: Pick<Deps, 'config' | 'db' | 'log'> & Partial<Pick<Deps, 'now'>>): Deps {
  const search = createSearch(base)
  const deps: Deps = {
    now: () => new Date(),
    ...createWaker(),
    ...base,
    search,
    // the clock is read through deps: tests move it by replacing deps.now
    reads: new ReadCache({ db: base.db, now: () => deps.now(), log: base.log, maxBytes: base.config.readCacheBytes }),
    waiters: createWaiters(base.db, base.log),
    metrics: createMetrics({ db: base.db, searchPending: () => search.memory().pendingNodes }),
    // read at every batch: tests and benches allow insecure receivers after the app is built
    webhookSender: createWebhookSender(() => base.config.webhookAllowInsecure),
  }
  return deps
}
