import type { Config } from './config'
import type { Db } from './db'
import type { Logger } from './log'
import type { Metrics } from './metrics/service'
import type { Author } from './ports/actor'
import type { AuthCache } from './ports/auth'
import type { CommitHandOff } from './ports/commits'
import type { ReadCache } from './ports/reads'
import type { ReplicaLease } from './ports/replicas'
import type { SearchBackend } from './ports/search'
import type { Waiters } from './ports/waiters'
import type { WebhookSender } from './ports/webhooks'

/**
 * What services need from the outside world. Built once by `createDeps` (src/create-deps.ts, in
 * main.ts or a test helper) and passed down; services never see the HTTP context. It names what it
 * carries by the interfaces of src/ports, so it imports no module that takes it.
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
  /** Users, keys and project access kept in memory, emptied by every write to them on any replica. */
  auth: AuthCache
  /** set only on the deps of an import's writes: the project it writes, which nobody else may see yet (src/projects/importing.ts) */
  importing?: string
  /** PGlite: the events of each transaction, handed to the built-in search at its commit (src/events/outbox.ts `saveOwn` announces them). */
  commits: CommitHandOff
  /** Where webhook attempts run: a worker thread of their own, off the thread that serves requests. */
  webhookSender: WebhookSender
  /** Held requests (GET /events?wait, the canvas's long poll), woken by commits on any replica. */
  waiters: Waiters
  /** the Prometheus registry and its recorders (GET /metrics) */
  metrics: Metrics
  /** Answers of project reads, kept while the project's revision is unchanged (src/reads/cache.ts). */
  reads: ReadCache
  /**
   * PostgreSQL: this process's lease among the replicas, which lets it answer kept reads without
   * a lookup while every write waits to be heard by it (src/revisions/replicas.ts); null on PGlite.
   */
  replicas: ReplicaLease | null
  /**
   * Inside a write: who makes it and its request id (history.md), set per request by the route
   * on its copy of the deps. Absent: a write of Arbor's own (the task classifier).
   */
  author?: Author
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
