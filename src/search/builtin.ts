// The built-in search backend: one in-memory ProjectIndex per project searched (or written)
// recently, loaded from the database, kept in step with the events outbox, with vectors read
// from search_vectors or embedded and stored there. Several replicas may share the database:
// each follows the outbox itself, and every search first applies what it has not seen yet,
// so a replica sees another's writes on its next search (on PostgreSQL a replica holding its
// lease skips that read for a project it has heard no change of: src/search/catch-up.ts).

import type { CommitHandOff } from '../ports/commits'
import type { NodeData } from '../ports/node-data'
import { formatRev } from '../ports/rev'
import type { DuplicateAdvisory, SearchAnswer, SearchBackend, SearchDeps, SearchRequest } from '../ports/search'
import { OutboxFollower } from './catch-up'
import { OUTBOX_COMMITTED } from './commits'
import { embeddingTexts } from './document'
import { type EmbedderChoice, type EmbedQueue, within } from './embedder/runtime'
import { Embedding } from './embedding'
import { textHash, vectorFromBytes } from './hash'
import type { KeywordScores } from './keyword-live'
import { ProjectIndex } from './project-index'
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

export class BuiltinSearch implements SearchBackend {
  readonly name = 'builtin' as const
  readonly queue: EmbedQueue
  private readonly indexes = new Map<string, Promise<ProjectIndex>>()
  /** the same indexes once loaded */
  private readonly loaded = new Map<string, ProjectIndex>()
  private readonly backfilled = new Set<string>()
  private discoveredSeq = -1
  /**
   * Where this process starts each round of its loaded indexes (a fraction of the way in).
   * Replicas sharing a database load the same projects in the same order; starting apart, each
   * embeds texts the others have not reached and later finds theirs stored, instead of all three
   * embedding the same batch at once.
   */
  private readonly roundStart = Math.random()
  private readonly embedding: Embedding
  private readonly follower: OutboxFollower
  private readonly following: Promise<unknown>

  constructor(
    private readonly deps: SearchDeps & { commits: CommitHandOff },
    readonly choice: EmbedderChoice,
  ) {
    this.embedding = new Embedding(deps, choice.embedder)
    this.queue = this.embedding.queue
    this.follower = new OutboxFollower(deps, this.loaded, this.embedding)
    this.following =
      deps.db.kind === 'pglite'
        ? deps.db.listen(OUTBOX_COMMITTED, { message: (projectId) => this.follower.onCommit(projectId), up() {}, down() {} })
        : Promise.resolve()
  }

  async search(projectId: string, req: SearchRequest): Promise<SearchAnswer> {
    // the query's vector is asked for first: the model's process embeds it while the index
    // catches up (on PostgreSQL, two reads of the outbox that used to come before it)
    const queried = req.mode === 'keyword' ? undefined : this.queue.query(req.q).catch(() => undefined) // no vector: answered by keyword, and _meta.search says so
    const idx = await this.ready(projectId)
    idx.lastUsed = Date.now()
    let semantic: SearchAnswer['meta']['semantic'] = req.mode === 'keyword' ? 'off' : 'full'
    let vector: Float32Array | null = null
    let keyword: KeywordScores | undefined
    if (req.mode !== 'keyword') {
      const missing = idx.missingCount
      if (missing > 0 && missing <= BUILTIN_TUNING.inlineEmbedMax && Date.now() >= this.embedding.retryAt)
        await within(
          // a failed inline embedding leaves the texts to the background loop, which logs it and backs off
          this.embedding.embedMissing(idx, BUILTIN_TUNING.inlineEmbedMax, true).catch(() => 0),
          BUILTIN_TUNING.inlineEmbedMs,
        )
      const embedding = within(queried!, BUILTIN_TUNING.queryEmbedMs)
      // the keyword half is scored here while the model's process embeds the query
      keyword = idx.keywordScores(req.q, { type: req.type, mode: req.mode })
      vector = (await embedding) ?? null
      if (!vector) semantic = 'unavailable'
      else if (idx.pendingNodes > 0) semantic = 'partial'
    }
    const mode = vector ? req.mode : 'keyword'
    const options = {
      type: req.type,
      limit: req.limit,
      mode,
      semanticRatio: this.choice.semanticRatio,
      parentWeight: BUILTIN_TUNING.parentWeight,
      calibration: this.choice.calibration,
    }
    // a semantic-only search that got no vector answers by keyword: its keyword half is scored now
    const hits = idx.rank(req.q, vector, options, keyword && !(mode === 'keyword' && req.mode === 'semantic') ? keyword : undefined)
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
        ...(idx.pendingNodes > 0 ? { etaSeconds: this.embedding.eta(this.loaded.values()) } : {}),
        ...(this.choice.fallback ? { fallback: this.choice.fallback } : {}),
      },
    }
  }

  /**
   * Same-type nodes whose label-and-description vector is within the duplicate threshold of
   * the new node's. Uses only what is already in memory (no database read: the caller is
   * inside its write transaction) and gives up after duplicateEmbedMs, so adds stay fast.
   */
  async duplicates(projectId: string, node: { id: string; type: string; data: NodeData }): Promise<DuplicateAdvisory | null> {
    const idx = this.loaded.get(projectId)
    this.follower.applyTold()
    if (!idx) {
      void this.load(projectId).catch((err) => this.deps.log.warn('search: warming an index failed', { projectId, error: String(err) })) // for the next add
      return null
    }
    const texts = embeddingTexts(node.data)
    const full = texts[texts.length - 1]!
    const hash = textHash(full)
    // a text the project already has (the same label added twice) is not embedded again
    const known = idx.vectorFor(hash) ?? this.embedding.fresh.get(hash)
    if (!known) {
      // a near-duplicate shares most of its words with the original: without a keyword match
      // there is nothing to compare, and the add pays nothing for the check
      const lexical = idx.keyword.score(full, (id) => id !== node.id && idx.nodes.get(id)?.node.type === node.type)
      if (lexical.best() < BUILTIN_TUNING.duplicateMinKeyword) return null
    }
    const vector =
      known ??
      (await within(
        this.queue.embed([full], true).then((v) => v[0]!),
        BUILTIN_TUNING.duplicateEmbedMs,
      ).catch(() => undefined)) // no vector in time: no advisory, the add itself has succeeded
    if (!vector) return null
    if (!known) this.embedding.remember(hash, vector)
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
    const embedNow = () => budgetLeft() && Date.now() >= this.embedding.retryAt
    const loaded = [...this.loaded]
    const first = Math.floor(this.roundStart * loaded.length)
    for (const [projectId, idx] of [...loaded.slice(first), ...loaded.slice(0, first)]) {
      // an index with texts to embed catches up only when this run embeds (its texts current
      // first): thousands of them waiting must not each read the outbox every second
      if (written.has(projectId) || (idx.missingCount > 0 && embedNow())) {
        await this.ready(projectId)
        stats.caughtUp++
      }
      while (idx.missingCount > 0 && embedNow()) {
        const t0 = performance.now()
        const n = await this.embedding.embedMissing(idx, BUILTIN_TUNING.batch, false).catch((err) => this.embedding.failed(err))
        if (!n) break
        this.embedding.measured(n, performance.now() - t0)
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
    if (embedNow()) {
      const busy = [...this.indexes.keys()]
      for (const id of await q.listUnbackfilled(this.deps.db, this.queue.id, busy.length + 1))
        if (!this.indexes.has(id)) {
          await this.ready(id)
          break
        }
    }
    return stats
  }

  async backfillProgress() {
    return { embedder: this.queue.id, ...(await q.backfillProgress(this.deps.db, this.queue.id)) }
  }

  outboxReads(): number {
    return this.follower.reads
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
    this.follower.applyTold() // PGlite: the commits told that this process's writes answered before applying them
    // on PGlite with nothing new committed, only a read already under way (it may hold a write
    // the caller just made) is waited for
    if (this.deps.db.kind === 'postgres' || this.follower.committed.has(projectId)) await this.follower.current(idx)
    else await this.follower.locks.get(projectId)?.catch(() => undefined) // only its end matters here; its caller got the error
    return idx
  }

  private load(projectId: string): Promise<ProjectIndex> {
    let p = this.indexes.get(projectId)
    if (!p) {
      p = this.snapshot(projectId)
      // a failed load is the caller's error (it awaits p); forgotten here, so the next call loads again
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
    for (const r of rows)
      idx.upsert({ id: r.id, rev: formatRev('node', r.id, r.rev), type: r.type, parentId: r.parent_id, data: r.data }, (h) =>
        vectors.get(h),
      )
    idx.takeUnchecked() // every stored vector was just read
    return idx
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
}

function round(x: number): number {
  return Math.round(x * 10000) / 10000
}
