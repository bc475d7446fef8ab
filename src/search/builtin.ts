// The built-in search backend: one in-memory ProjectIndex per project searched (or written)
// recently, loaded from the database, kept in step with the events outbox, with vectors read
// from search_vectors or embedded and stored there. Several replicas may share the database:
// each follows the outbox itself, and every search first applies what it has not seen yet,
// so a replica sees another's writes on its next search.

import type { CommitHandOff, CommittedEvent } from '../ports/commits'
import type { DuplicateAdvisory, SearchAnswer, SearchBackend, SearchDeps, SearchRequest } from '../ports/search'
import { OUTBOX_COMMITTED } from './commits'
import { embeddingTexts } from './document'
import { type EmbedderChoice, EmbedQueue, within } from './embedder/runtime'
import { textHash, vectorFromBytes } from './hash'
import { type IndexNode, ProjectIndex } from './project-index'
import * as q from './queries'

/** Tuning, measured on the dev set (bench/eval-search.ts); figures in bench/README.md. */
export const BUILTIN_TUNING = {
  parentWeight: 0.5,
  /** a search embeds this many missing texts itself rather than answer keyword-only for them */
  inlineEmbedMax: 8,
  inlineEmbedMs: 1500,
  queryEmbedMs: 5000,
  duplicateEmbedMs: 250,
  /** keyword similarity a node must reach before the duplicate check embeds anything */
  duplicateMinKeyword: 0.3,
  /** background work per scheduler run, and texts per model call (the worker sorts them by length) */
  tickBudgetMs: 1500,
  batch: 64,
  idleEvictMs: 15 * 60_000,
}

const EVENTS_PAGE = 2000

/** Commits told during a read of the outbox; `complete` is false once one came without its events. */
type Arriving = { events: CommittedEvent[]; complete: boolean }
/** hashes per database lookup of stored vectors */
const LOOKUP_PAGE = 5000

export class BuiltinSearch implements SearchBackend {
  readonly name = 'builtin' as const
  readonly queue: EmbedQueue
  private readonly indexes = new Map<string, Promise<ProjectIndex>>()
  /** the same indexes once loaded */
  private readonly loaded = new Map<string, ProjectIndex>()
  private readonly backfilled = new Set<string>()
  private readonly locks = new Map<string, Promise<unknown>>()
  /** vectors embedded by the duplicate check, waiting for their node's event */
  private readonly fresh = new Map<string, Float32Array>()
  private readonly inFlight = new Set<string>()
  private discoveredSeq = -1
  private failures = 0
  private retryAt = 0
  /** background embedding speed, texts per second (moving average), for `_meta.search.etaSeconds` */
  private rate = 0
  /**
   * PGlite only: projects with events committed since their index last read the outbox. A search
   * of any other loaded project needs no database read (see OUTBOX_COMMITTED), so it is not held
   * up behind a long write such as a 1,000-node batch.
   */
  private readonly committed = new Set<string>()
  /**
   * PGlite only: the events of the commits told while a project's index reads the outbox, in
   * commit order. The read stops where they begin and applies them from memory when it ends, so
   * a stream of writes (an import) can neither keep it reading page after page nor queue another
   * read behind it.
   */
  private readonly arriving = new Map<string, Arriving>()
  private readonly following: Promise<unknown>

  constructor(
    private readonly deps: SearchDeps & { commits: CommitHandOff },
    readonly choice: EmbedderChoice,
  ) {
    this.queue = new EmbedQueue(choice.embedder)
    this.following =
      deps.db.kind === 'pglite'
        ? deps.db.listen(OUTBOX_COMMITTED, { message: (projectId) => this.onCommit(projectId), up() {}, down() {} })
        : Promise.resolve()
  }

  /**
   * PGlite: a commit wrote events (`token`: see src/search/commits.ts). A loaded index with no read under
   * way applies them from memory at once; during a read they wait in `arriving` for its end;
   * otherwise the project is marked and its index reads the outbox (queued before the next write
   * can start).
   */
  private onCommit(token: string): void {
    const { projectId, events } = this.deps.commits.take(token)
    const idx = this.loaded.get(projectId)
    const arriving = this.arriving.get(projectId)
    if (arriving?.complete) {
      if (events) return void arriving.events.push(...events) // the read under way applies them
      arriving.complete = false
    }
    if (idx && events && !this.committed.has(projectId) && !this.locks.has(projectId)) {
      this.applyCommitted(idx, events)
      return
    }
    this.committed.add(projectId)
    if (idx)
      void this.current(idx).catch((err) =>
        this.deps.log.warn('search: catch-up after a commit failed; the next read retries', { projectId, error: String(err) }),
      )
  }

  /**
   * PGlite: apply events that commits handed over in memory, those above the index's seq only
   * (a read of the outbox may have applied the others already).
   */
  private applyCommitted(idx: ProjectIndex, events: CommittedEvent[]): void {
    const saved: [string, Float32Array][] = []
    this.apply(
      idx,
      events.filter((e) => e.seq > idx.seq),
      this.freshVectors(saved),
    )
    // PGlite runs one transaction at a time, in seq order: every event up to here is applied
    // and none can still commit below it, so there is nothing for a read to skip or re-read
    idx.recent.clear()
    idx.horizon = new Date()
    if (saved.length)
      void q.insertVectors(this.deps.db, idx.projectId, this.queue.id, saved).catch((err) =>
        this.deps.log.warn('search: storing vectors failed; they are embedded again after a restart', {
          projectId: idx.projectId,
          error: String(err),
        }),
      )
  }

  /** Apply node events to `idx`, in seq order, and remember their seqs as applied (catchUp skips them). */
  private apply(
    idx: ProjectIndex,
    events: { seq: number; payload: Record<string, any>; at?: number }[],
    vectorOf: (hash: string) => Float32Array | undefined,
  ): void {
    for (const { seq, payload, at } of events) {
      const node = payload?.node as IndexNode | undefined
      if (node?.id) {
        if (payload.event === 'node.deleted') idx.delete(node.id)
        else idx.upsert({ id: node.id, type: node.type, parentId: node.parentId ?? null, data: node.data ?? {} }, vectorOf)
      }
      idx.recent.set(seq, at ?? Date.now())
      if (seq > idx.seq) idx.seq = seq
    }
  }

  /** Read the outbox into `idx`, unless (PGlite) nothing was committed for it since the last read. */
  private current(idx: ProjectIndex): Promise<unknown> {
    const projectId = idx.projectId
    return this.serial(projectId, async () => {
      if (this.deps.db.kind === 'postgres') return this.catchUp(idx, null)
      if (!this.committed.has(projectId)) return
      this.committed.delete(projectId) // before the read: a commit told without its events marks the project again
      const arriving: Arriving = { events: [], complete: true }
      this.arriving.set(projectId, arriving)
      try {
        await this.catchUp(idx, arriving)
      } catch (err) {
        arriving.complete = false
        throw err
      } finally {
        this.arriving.delete(projectId)
        // the commits told meanwhile come after everything read: applied now, not read again
        if (arriving.complete) this.applyCommitted(idx, arriving.events)
        else this.committed.add(projectId)
      }
    })
  }

  async search(projectId: string, req: SearchRequest): Promise<SearchAnswer> {
    const idx = await this.ready(projectId)
    idx.lastUsed = Date.now()
    let semantic: SearchAnswer['meta']['semantic'] = req.mode === 'keyword' ? 'off' : 'full'
    let vector: Float32Array | null = null
    if (req.mode !== 'keyword') {
      const missing = idx.missingCount
      if (missing > 0 && missing <= BUILTIN_TUNING.inlineEmbedMax && Date.now() >= this.retryAt)
        await within(
          this.embedMissing(idx, BUILTIN_TUNING.inlineEmbedMax, true).catch(() => 0),
          BUILTIN_TUNING.inlineEmbedMs,
        )
      vector =
        (await within(
          this.queue.query(req.q).catch(() => undefined), // no vector: the search answers by keyword and _meta.search says so
          BUILTIN_TUNING.queryEmbedMs,
        )) ?? null
      if (!vector) semantic = 'unavailable'
      else if (idx.pendingNodes > 0) semantic = 'partial'
    }
    const hits = idx.rank(req.q, vector, {
      type: req.type,
      limit: req.limit,
      mode: vector ? req.mode : 'keyword',
      semanticRatio: this.choice.semanticRatio,
      parentWeight: BUILTIN_TUNING.parentWeight,
      calibration: this.choice.calibration,
    })
    return {
      hits: hits.map((h) => {
        const node = idx.nodes.get(h.id)!.node
        return { node: { ...node }, similarity: round(h.similarity), ancestors: idx.ancestors(h.id) }
      }),
      meta: {
        backend: 'builtin',
        embedder: this.queue.id,
        mode: req.mode,
        semantic,
        pendingNodes: idx.pendingNodes,
        ...(idx.pendingNodes > 0 ? { etaSeconds: this.eta() } : {}),
        ...(this.choice.fallback ? { fallback: this.choice.fallback } : {}),
      },
    }
  }

  /**
   * Same-type nodes whose label-and-description vector is within the duplicate threshold of
   * the new node's. Uses only what is already in memory (no database read: the caller is
   * inside its write transaction) and gives up after duplicateEmbedMs, so adds stay fast.
   */
  async duplicates(projectId: string, node: { id: string; type: string; data: Record<string, any> }): Promise<DuplicateAdvisory | null> {
    const idx = this.loaded.get(projectId)
    if (!idx) {
      void this.load(projectId).catch((err) => this.deps.log.warn('search: warming an index failed', { projectId, error: String(err) })) // for the next add
      return null
    }
    const texts = embeddingTexts(node.data)
    const full = texts[texts.length - 1]!
    const hash = textHash(full)
    // a text the project already has (the same label added twice) is not embedded again
    const known = idx.vectorFor(hash) ?? this.fresh.get(hash)
    if (!known) {
      // a near-duplicate shares most of its words with the original: without a keyword match
      // there is nothing to compare, and the add pays nothing for the check
      const lexical = idx.keyword.score(full, (id) => id !== node.id && idx.nodes.get(id)?.node.type === node.type)
      if (Math.max(0, ...lexical.values()) < BUILTIN_TUNING.duplicateMinKeyword) return null
    }
    const vector =
      known ??
      (await within(
        this.queue.embed([full], true).then((v) => v[0]!),
        BUILTIN_TUNING.duplicateEmbedMs,
      ).catch(() => undefined)) // no vector in time: no advisory, the add itself has succeeded
    if (!vector) return null
    if (!known) this.remember(hash, vector)
    const near = idx.nearest(vector, node.type, this.choice.duplicateCosine, 4).filter((n) => n.id !== node.id)
    if (near.length === 0) return null
    return {
      type: 'possible_duplicate',
      nodes: near.slice(0, 3).map((n) => ({
        id: n.id,
        label: String(idx.nodes.get(n.id)!.node.data.label ?? ''),
        similarity: round(Math.min(1, n.cosine)),
      })),
    }
  }

  async tick(now: Date): Promise<Record<string, number>> {
    const started = Date.now()
    const stats = { caughtUp: 0, embedded: 0, evicted: 0, backfilled: 0 }
    const written = await this.discover()
    const budgetLeft = () => Date.now() - started < BUILTIN_TUNING.tickBudgetMs
    for (const [projectId, idx] of this.loaded) {
      if (written.has(projectId) || idx.missingCount > 0) {
        await this.ready(projectId)
        stats.caughtUp++
      }
      while (budgetLeft() && idx.missingCount > 0 && Date.now() >= this.retryAt) {
        const t0 = performance.now()
        const n = await this.embedMissing(idx, BUILTIN_TUNING.batch, false).catch((err) => this.failed(err))
        if (!n) break
        this.measured(n, performance.now() - t0)
        stats.embedded += n
      }
      if (idx.missingCount === 0 && !this.backfilled.has(projectId)) {
        await q.markBackfilled(this.deps.db, projectId, this.queue.id)
        await q.pruneVectors(this.deps.db, projectId, this.queue.id, idx.liveHashes())
        this.backfilled.add(projectId)
        stats.backfilled++
      }
      if (idx.missingCount === 0 && now.getTime() - idx.lastUsed > BUILTIN_TUNING.idleEvictMs) {
        this.indexes.delete(projectId)
        this.loaded.delete(projectId)
        this.backfilled.delete(projectId)
        stats.evicted++
      }
    }
    // projects whose vectors from this embedder are incomplete (first start, embedder changed)
    if (budgetLeft() && Date.now() >= this.retryAt) {
      const busy = [...this.indexes.keys()]
      for (const id of await q.listUnbackfilled(this.deps.db, this.queue.id, busy.length + 1))
        if (!this.indexes.has(id)) {
          await this.ready(id)
          break
        }
    }
    return stats
  }

  memory() {
    let nodes = 0
    let vectorBytes = 0
    let pendingNodes = 0
    for (const idx of this.loaded.values()) {
      nodes += idx.nodes.size
      vectorBytes += idx.vectorBytes
      pendingNodes += idx.pendingNodes
    }
    return { projects: this.loaded.size, nodes, vectorBytes, pendingNodes }
  }

  /** The project's index, loaded and caught up with every committed node event. */
  async ready(projectId: string): Promise<ProjectIndex> {
    await this.following
    const idx = await this.load(projectId)
    // on PGlite with nothing new committed, only a read already under way (it may hold a write
    // the caller just made) is waited for
    if (this.deps.db.kind === 'postgres' || this.committed.has(projectId)) await this.current(idx)
    else await this.locks.get(projectId)?.catch(() => undefined) // only its end matters here; its caller got the error
    return idx
  }

  private load(projectId: string): Promise<ProjectIndex> {
    let p = this.indexes.get(projectId)
    if (!p) {
      p = this.snapshot(projectId)
      p.then((idx) => this.loaded.set(projectId, idx)).catch(() => this.indexes.delete(projectId))
      this.indexes.set(projectId, p)
    }
    return p
  }

  private async snapshot(projectId: string): Promise<ProjectIndex> {
    const db = this.deps.db
    // horizon and head first: whatever commits while the nodes are read is replayed after
    const horizon = await q.horizon(db)
    const seq = await q.head(db, projectId)
    const [rows, vectorRows] = await Promise.all([q.listNodes(db, projectId), q.loadVectors(db, projectId, this.queue.id, null)])
    const vectors = new Map(vectorRows.map((r) => [r.text_hash, vectorFromBytes(r.vector)]))
    const idx = new ProjectIndex(projectId)
    idx.seq = seq
    idx.horizon = horizon
    for (const r of rows) idx.upsert({ id: r.id, type: r.type, parentId: r.parent_id, data: r.data }, (h) => vectors.get(h))
    idx.takeUnchecked() // every stored vector was just read
    return idx
  }

  /** Apply the node events this index has not seen, in seq order (see sql/search/horizon.sql). */
  private async catchUp(idx: ProjectIndex, arriving: Arriving | null): Promise<void> {
    const db = this.deps.db
    const saved: [string, Float32Array][] = []
    const vectorOf = this.freshVectors(saved)
    for (;;) {
      const horizon = await q.horizon(db)
      const rows = await q.eventsSince(db, idx.projectId, idx.seq, idx.horizon, [...idx.recent.keys()])
      this.apply(
        idx,
        rows.map((r) => ({ seq: Number(r.seq), payload: r.payload, at: new Date(r.created_at).getTime() })),
        vectorOf,
      )
      // PGlite: from the first commit told during this read on, the events are in memory
      const first = arriving?.complete ? arriving.events[0] : undefined
      if (rows.length >= EVENTS_PAGE && !(first && idx.seq >= first.seq)) continue // more to read; keep the old horizon until done
      idx.horizon = horizon
      for (const [seq, at] of idx.recent) if (at < horizon.getTime()) idx.recent.delete(seq)
      break
    }
    if (saved.length) await q.insertVectors(db, idx.projectId, this.queue.id, saved)
    // vectors another replica (or an earlier run) already stored, for texts that started waiting
    // in this catch-up only: a text still waiting after its lookup is the embedder's to do, and
    // no later search or tick reads it again (embedMissing looks once more, per batch)
    const unknown = idx.takeUnchecked().filter((h) => !this.inFlight.has(h))
    for (let i = 0; i < unknown.length; i += LOOKUP_PAGE)
      for (const r of await q.loadVectors(db, idx.projectId, this.queue.id, unknown.slice(i, i + LOOKUP_PAGE)))
        idx.supply(r.text_hash, vectorFromBytes(r.vector))
  }

  /** Embed up to `max` missing texts of an index, store and apply them; returns how many. */
  private async embedMissing(idx: ProjectIndex, max: number, urgent: boolean): Promise<number> {
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
  private measured(n: number, ms: number): void {
    const r = (n * 1000) / Math.max(1, ms)
    this.rate = this.rate === 0 ? r : 0.8 * this.rate + 0.2 * r
  }

  /** Seconds until every text waiting in the loaded indexes is embedded at the measured rate; null before a first batch. */
  private eta(): number | null {
    if (this.rate === 0) return null
    let waiting = 0
    for (const idx of this.loaded.values()) waiting += idx.missingCount
    return Math.ceil(waiting / this.rate)
  }

  private failed(err: unknown): number {
    this.failures++
    const wait = Math.min(60_000, 1000 * 2 ** Math.min(6, this.failures))
    this.retryAt = Date.now() + wait
    this.deps.log.warn('search: embedding failed; retrying later', { error: String(err), retryInMs: wait })
    return 0
  }

  /**
   * Projects with node events since the last run (from any replica). Their indexes are loaded
   * (so duplicate checks are warm) and caught up; others wait for their next search.
   */
  private async discover(): Promise<Set<string>> {
    const db = this.deps.db
    const written = new Set<string>()
    if (this.discoveredSeq < 0) {
      // first run: start from now (no loading every project at boot); catch up what is loaded
      this.discoveredSeq = await q.maxSeq(db)
      return new Set(this.loaded.keys())
    }
    for (const r of await q.recentProjects(db, this.discoveredSeq)) {
      this.discoveredSeq = Math.max(this.discoveredSeq, Number(r.seq))
      written.add(r.project_id)
      if (!this.indexes.has(r.project_id))
        await this.load(r.project_id).catch((err) =>
          this.deps.log.warn('search: loading an index failed; retried on its next search', {
            projectId: r.project_id,
            error: String(err),
          }),
        )
    }
    return written
  }

  /** Vectors the duplicate check embedded, for upsert; each one taken is added to `saved` (to store). */
  private freshVectors(saved: [string, Float32Array][]): (hash: string) => Float32Array | undefined {
    return (h) => {
      const v = this.fresh.get(h)
      if (v) {
        saved.push([h, v])
        this.fresh.delete(h)
      }
      return v
    }
  }

  private remember(hash: string, vector: Float32Array): void {
    this.fresh.set(hash, vector)
    if (this.fresh.size > 256) this.fresh.delete(this.fresh.keys().next().value!)
  }

  /** Run `fn` after every earlier call for the same project (catch-ups never interleave). */
  private serial<T>(projectId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(projectId) ?? Promise.resolve()
    const next = prev.catch(() => undefined).then(fn) // the earlier call's caller got its error; this one runs regardless
    this.locks.set(projectId, next)
    next.finally(() => this.locks.get(projectId) === next && this.locks.delete(projectId)).catch(() => undefined) // returned to the caller below
    return next
  }
}

function round(x: number): number {
  return Math.round(x * 10000) / 10000
}
