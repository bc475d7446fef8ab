// The embedding side of the built-in index: the model's queue, the texts being embedded, the
// vectors the duplicate check embedded ahead of their node's event, the backoff after a failure
// and the measured rate behind `_meta.search.etaSeconds`.

import type { SearchDeps } from '../ports/search'
import { type EmbedderChoice, EmbedQueue } from './embedder/runtime'
import { vectorFromBytes } from './hash'
import type { ProjectIndex } from './project-index'
import * as q from './queries'

export class Embedding {
  readonly queue: EmbedQueue
  /** vectors embedded by the duplicate check, waiting for their node's event */
  readonly fresh = new Map<string, Float32Array>()
  /** texts being embedded now: a catch-up does not look their vectors up meanwhile */
  readonly inFlight = new Set<string>()
  private failures = 0
  /** no embedding before this time (ms), after a failure */
  retryAt = 0
  /** background embedding speed, texts per second (moving average), for `_meta.search.etaSeconds` */
  private rate = 0

  constructor(
    private readonly deps: SearchDeps,
    embedder: EmbedderChoice['embedder'],
  ) {
    this.queue = new EmbedQueue(embedder)
  }

  /** Embed up to `max` missing texts of an index, store and apply them; returns how many. */
  async embedMissing(idx: ProjectIndex, max: number, urgent: boolean): Promise<number> {
    const taken = idx.missingTexts(max, (h) => this.inFlight.has(h))
    if (taken.length === 0) return 0
    for (const [h] of taken) this.inFlight.add(h)
    let todo = taken
    try {
      if (!urgent) {
        // another replica sharing the database may have embedded these since they were looked up
        const stored = await q.loadVectors(
          this.deps.db,
          idx.projectId,
          this.queue.id,
          todo.map(([h]) => h),
        )
        for (const r of stored) idx.supply(r.text_hash, vectorFromBytes(r.vector))
        if (stored.length) {
          const found = new Set(stored.map((r) => r.text_hash))
          todo = todo.filter(([h]) => !found.has(h))
          if (todo.length === 0) return stored.length
        }
      }
      const vectors = await this.queue.embed(
        todo.map(([, t]) => t),
        urgent,
      )
      const rows = todo.map(([h], i) => [h, vectors[i]!] as [string, Float32Array])
      await q.insertVectors(this.deps.db, idx.projectId, this.queue.id, rows)
      for (const [h, v] of rows) idx.supply(h, v)
      this.failures = 0
      return rows.length
    } finally {
      for (const [h] of taken) this.inFlight.delete(h)
    }
  }

  /** `n` texts embedded and stored in `ms`: folded into the moving average of the rate. */
  measured(n: number, ms: number): void {
    const r = (n * 1000) / Math.max(1, ms)
    this.rate = this.rate === 0 ? r : 0.8 * this.rate + 0.2 * r
  }

  /** Seconds until every text waiting in the loaded indexes is embedded at the measured rate; null before a first batch. */
  eta(loaded: Iterable<ProjectIndex>): number | null {
    if (this.rate === 0) return null
    let waiting = 0
    for (const idx of loaded) waiting += idx.missingCount
    return Math.ceil(waiting / this.rate)
  }

  failed(err: unknown): number {
    this.failures++
    const wait = Math.min(60_000, 1000 * 2 ** Math.min(6, this.failures))
    this.retryAt = Date.now() + wait
    this.deps.log.warn('search: embedding failed; retrying later', { error: String(err), retryInMs: wait })
    return 0
  }

  /** Vectors the duplicate check embedded, for upsert; each one taken is added to `saved` (to store). */
  freshVectors(saved: [string, Float32Array][]): (hash: string) => Float32Array | undefined {
    return (h) => {
      const v = this.fresh.get(h)
      if (v) {
        saved.push([h, v])
        this.fresh.delete(h)
      }
      return v
    }
  }

  remember(hash: string, vector: Float32Array): void {
    this.fresh.set(hash, vector)
    if (this.fresh.size > 256) this.fresh.delete(this.fresh.keys().next().value!)
  }
}
