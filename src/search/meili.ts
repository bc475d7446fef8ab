// The Meilisearch backend (MEILI_URL): a thin adapter over the official client. One index,
// `arbor_nodes`, holds every node of every project, `projectId` and `type` filterable. Vectors
// are user-provided by our own embedder (the built-in model, or EMBEDDINGS_URL's), so both
// backends rank with the same vectors and Meilisearch needs no network access to a model;
// hybrid search blends keyword and vector scores with the same semanticRatio, and
// `_rankingScore` is the similarity. Documents follow the events outbox from a cursor kept in
// the database; a failed push is retried with backoff and the cursor only moves past what
// Meilisearch acknowledged. On PostgreSQL one replica at a time pushes, under a lease in the
// database (two pushers could send one node's add after its delete and bring it back); the
// others stand by and take over, from the stored cursor, once the lease has expired.
// The index carries the id of the embedder that built it (meili-index.ts): a server with another
// embedder answers by keyword with the reason in `_meta.search`, and the replica holding the
// lease rebuilds the index for its own embedder first. Replicas that disagree about the embedder
// do not take turns: the index follows the lease holder until it stops. `bun run
// search:rebuild` rebuilds the index from the database (docs/meilisearch.md).

import { randomUUID } from 'node:crypto'
import { type Index, Meilisearch } from 'meilisearch'
import { RefusalError } from '../errors'
import type { NodeData } from '../ports/node-data'
import type { DuplicateAdvisory, SearchAnswer, SearchBackend, SearchDeps, SearchRequest } from '../ports/search'
import { BUILTIN_TUNING } from './builtin'
import { embeddingTexts } from './document'
import { type EmbedderChoice, EmbedQueue, within } from './embedder/runtime'
import { type Doc, pushEvents, toDocs } from './meili-docs'
import { type Embedding, ensureIndex, type IndexState, keywordOnly, readState, rebuildIndex, succeeded } from './meili-index'
import { FIRST_READ, type ReadPoint } from './project-index'
import * as q from './queries'
import { hybridRank } from './rank'

export const MEILI_INDEX = 'arbor_nodes'
/** how long a reading of the index's embedder is trusted (an embedder change is seen within this) */
const STATE_TTL_MS = 2_000
const CURSOR = `meili:${MEILI_INDEX}`
/** how long the sync lease lasts unless renewed (it is renewed before every push) */
export const MEILI_LEASE_MS = 30_000
/** nodes a search with a query vector reads by vector, to give each its parent's score (withParents) */
const CONTEXT_POOL = 50

export class MeiliBackend implements SearchBackend {
  readonly name = 'meilisearch' as const
  readonly queue: EmbedQueue
  readonly client: Meilisearch
  private index: Index<Doc>
  private ready?: Promise<Embedding>
  private state?: { at: number; value: IndexState }
  private seq = -1
  /** where the last read of the outbox stood, and the seqs pushed that a later read may meet again, with their txid */
  private horizon: ReadPoint = FIRST_READ
  private readonly recent = new Map<number, bigint>()
  private failures = 0
  private retryAt = 0
  /** this process, as the holder of the sync lease */
  private readonly holder = randomUUID()
  private readonly lease: string
  /** whether this process held the sync lease at its last try (PGlite: always) */
  private holding: boolean
  /** the index was ours while this process held the lease without a break */
  private owned = false
  /**
   * set when the index, ours while we held the lease, turned into another embedder's: only a
   * server outside our lease (another database sharing this Meilisearch) can have done that, and
   * rebuilding it back would start a tug of war, so this process leaves it and searches by keyword
   */
  private contested?: string
  private contestLogged?: string

  constructor(
    private readonly deps: SearchDeps,
    readonly choice: EmbedderChoice,
    indexUid = MEILI_INDEX,
    private readonly leaseMs = MEILI_LEASE_MS,
  ) {
    this.lease = `meili-sync:${indexUid}`
    this.queue = new EmbedQueue(choice.embedder)
    this.client = new Meilisearch({ host: deps.config.meiliUrl!, apiKey: deps.config.meiliApiKey })
    this.index = this.client.index<Doc>(indexUid)
    this.holding = deps.db.kind === 'pglite'
  }

  /** Our embedder (its vector size from a probe), and the index created when missing (once; idempotent). */
  setup(): Promise<Embedding> {
    this.ready ??= (async () => {
      const dims = (await this.queue.embed(['dimensions probe'], true))[0]!.length
      await ensureIndex(this.client, this.index.uid)
      return { id: this.queue.id, dims }
    })().catch((err) => {
      this.ready = undefined
      throw err
    })
    return this.ready
  }

  /** Whether the index was built with our embedder; read again after STATE_TTL_MS. */
  private async indexState(): Promise<IndexState> {
    const own = await this.setup()
    if (this.state && Date.now() - this.state.at < STATE_TTL_MS) return this.state.value
    const value = await readState(this.client, this.index.uid, own)
    this.state = { at: Date.now(), value }
    if (value.ready) {
      if (this.holding) this.owned = true
      this.contested = undefined
    } else if (this.owned && value.built) this.contested = value.built
    return value
  }

  async search(projectId: string, req: SearchRequest): Promise<SearchAnswer> {
    try {
      try {
        return await this.searchMeili(projectId, req)
      } catch (err) {
        if (err instanceof RefusalError || !this.state?.value.ready) throw err
        // the index may have been rebuilt for another embedder since we looked: look again, once
        this.state = undefined
        return await this.searchMeili(projectId, req)
      }
    } catch (err) {
      if (err instanceof RefusalError) throw err
      this.deps.log.warn('search: meilisearch query failed', { error: String(err) })
      throw new RefusalError(503, 'search_unavailable', {
        message: `the search server (Meilisearch) did not answer: ${(err as Error).message}`,
        _tip: 'Retry shortly; GET /nodes still lists every node.',
      })
    }
  }

  private async searchMeili(projectId: string, req: SearchRequest): Promise<SearchAnswer> {
    const state = await this.indexState()
    let vector: Float32Array | undefined
    if (req.mode !== 'keyword' && state.ready)
      vector = await within(
        this.queue.query(req.q).catch(() => undefined), // no vector: the search answers by keyword and _meta.search says so
        BUILTIN_TUNING.queryEmbedMs,
      )
    const mode = vector ? req.mode : 'keyword'
    const filter = [`projectId = "${projectId}"`, ...(req.type ? [`type = "${req.type}"`] : [])]
    const res = vector
      ? await this.withParents(projectId, req, filter, vector, mode === 'semantic' ? 1 : this.choice.semanticRatio)
      : await this.index.search(req.q, { filter, limit: req.limit, showRankingScore: true })
    const notOurs = state.ready ? undefined : keywordOnly(state, this.queue.id, { holding: this.holding, contested: this.contested })
    const ids = res.hits.map((h) => h.id)
    const ancestors = new Map<string, { id: string; type: string; label: string }[]>()
    for (const r of ids.length ? await q.ancestorsMany(this.deps.db, projectId, ids) : []) {
      if (!ancestors.has(r.node_id)) ancestors.set(r.node_id, [])
      ancestors.get(r.node_id)!.push({ id: r.id, type: r.type, label: r.label ?? '' })
    }
    return {
      hits: res.hits.map((h) => ({
        node: { id: h.id, ...(h.rev ? { rev: h.rev } : {}), type: h.type, parentId: h.parentId, data: h.data },
        similarity: Math.round(Math.min(1, Math.max(0, h._rankingScore ?? 0)) * 10000) / 10000,
        ancestors: ancestors.get(h.id) ?? [],
      })),
      meta: {
        backend: 'meilisearch',
        embedder: this.queue.id,
        mode: req.mode,
        semantic: req.mode === 'keyword' ? 'off' : vector ? 'full' : notOurs ? notOurs.semantic : 'unavailable',
        pendingNodes: 0,
        ...(this.choice.fallback ? { fallback: this.choice.fallback } : {}),
        ...(notOurs ? { reason: notOurs.reason } : {}),
      },
    }
  }

  /**
   * A search with a query vector, ranked as the built-in index ranks (ProjectIndex.rank): a
   * node's semantic score also draws on its parent's, max(own, (1 - w) * own + w * parent) with
   * the built-in parentWeight, and the keyword and semantic scores are blended as Meilisearch's
   * hybrid search blends them (rank.ts: hybridRank). Meilisearch gives the scores: the best
   * CONTEXT_POOL nodes by vector (of any type when a type is asked for, so that their parents
   * are among them) and, for a hybrid search, the best `limit` by keyword. A parent outside
   * that pool adds nothing. Without the parent's context Meilisearch mode found less than the
   * built-in index on the dev set once a node had one vector (docs/search.md).
   */
  private async withParents(
    projectId: string,
    req: SearchRequest,
    filter: string[],
    vector: Float32Array,
    semanticRatio: number,
  ): Promise<{ hits: (Doc & { _rankingScore?: number })[] }> {
    const byVector = (f: string[]) =>
      this.index.search('', {
        filter: f,
        limit: Math.max(CONTEXT_POOL, req.limit),
        showRankingScore: true,
        vector: Array.from(vector),
        hybrid: { embedder: this.queue.id, semanticRatio: 1 },
      })
    const [semantic, all, keyword] = await Promise.all([
      byVector(filter),
      req.type ? byVector([`projectId = "${projectId}"`]) : undefined,
      semanticRatio < 1 ? this.index.search(req.q, { filter, limit: req.limit, showRankingScore: true }) : undefined,
    ])
    const docs = new Map<string, Doc & { _rankingScore?: number }>()
    const own = new Map<string, number>()
    for (const h of [...(all?.hits ?? []), ...semantic.hits]) {
      docs.set(h.id, h)
      own.set(h.id, h._rankingScore ?? 0)
    }
    const w = BUILTIN_TUNING.parentWeight
    const withParent = new Map<string, number>()
    for (const h of semantic.hits) {
      const o = own.get(h.id)!
      const p = (h.parentId && own.get(h.parentId)) || 0
      withParent.set(h.id, Math.max(o, (1 - w) * o + w * p))
    }
    const keywordScores = new Map<string, number>()
    for (const h of keyword?.hits ?? []) {
      docs.set(h.id, h)
      keywordScores.set(h.id, h._rankingScore ?? 0)
    }
    const ranked = hybridRank({ keyword: keywordScores, semantic: withParent, semanticRatio, limit: req.limit })
    return { hits: ranked.map((r) => ({ ...docs.get(r.id)!, _rankingScore: r.similarity })) }
  }

  /** Vector search among same-type nodes; time-boxed like the built-in check. */
  async duplicates(projectId: string, node: { id: string; type: string; data: NodeData }): Promise<DuplicateAdvisory | null> {
    // advisory only (the add has succeeded): whatever fails or comes too late below means no
    // advisory, said at debug level (a slow step is common and harmless; a failure repeats in
    // the sync's and the search's own warnings)
    const giveUp = (step: string) => (err: unknown) => {
      this.deps.log.debug('search: near-duplicate check gave up', { step, projectId, error: String(err) })
      return undefined
    }
    const state = await within(this.indexState(), BUILTIN_TUNING.duplicateEmbedMs).catch(giveUp('index state'))
    if (!state?.ready) return null // no vectors of ours to compare with (yet)
    const texts = embeddingTexts(node.data)
    const vector = await within(
      this.queue.embed([texts[texts.length - 1]!], true).then((v) => v[0]!),
      BUILTIN_TUNING.duplicateEmbedMs,
    ).catch(giveUp('embedding'))
    if (!vector) return null
    const res = await within(
      this.index.search('', {
        filter: [`projectId = "${projectId}"`, `type = "${node.type}"`],
        vector: Array.from(vector),
        hybrid: { embedder: this.queue.id, semanticRatio: 1 },
        limit: 3,
        showRankingScore: true,
        // Meilisearch reports a vector hit's score as (1 + cosine) / 2
        rankingScoreThreshold: (1 + this.choice.duplicateCosine) / 2,
      }),
      BUILTIN_TUNING.duplicateEmbedMs,
    ).catch(giveUp('search'))
    const hits = (res?.hits ?? []).filter((h) => h.id !== node.id)
    if (hits.length === 0) return null
    return {
      type: 'possible_duplicate',
      nodes: hits.map((h) => ({ id: h.id, label: h.label, similarity: Math.round((2 * (h._rankingScore ?? 0) - 1) * 10000) / 10000 })),
    }
  }

  /**
   * True while this process may push. PGlite has one process by construction; on PostgreSQL the
   * lease decides, and a replica that was standing by re-reads the stored cursor when it takes over.
   */
  private async holdLease(): Promise<boolean> {
    if (this.deps.db.kind === 'pglite') return true
    this.holding = await q.takeLease(this.deps.db, this.lease, this.holder, this.leaseMs)
    if (this.holding) return true
    this.owned = false
    this.seq = -1
    this.recent.clear()
    return false
  }

  async stop(): Promise<void> {
    this.owned = false
    if (this.deps.db.kind !== 'postgres') return
    this.holding = false
    // at shutdown the database may be going away: a lease not given up expires after leaseMs anyway
    await q.dropLease(this.deps.db, this.lease, this.holder).catch(() => {})
  }

  /** Push the node events after the cursor to Meilisearch; on failure keep the cursor and back off. */
  async tick(now: Date): Promise<Record<string, number>> {
    if (now.getTime() < this.retryAt) return { pushed: 0 }
    const db = this.deps.db
    try {
      if (!(await this.holdLease())) return { pushed: 0, standby: 1 }
      let rebuilt: number | undefined
      const state = await this.indexState()
      if (!state.ready && this.contested) {
        if (this.contestLogged !== this.contested)
          this.deps.log.error(
            'search: the Meilisearch index was rebuilt for another embedder by a server outside this sync lease; not rebuilding it back',
            { index: this.index.uid, embedder: this.contested, own: this.queue.id },
          )
        this.contestLogged = this.contested
        return { pushed: 0, contested: 1 }
      } else if (!state.ready) {
        this.deps.log.warn(
          state.built
            ? `search: the Meilisearch index was built with embedder ${state.built}; rebuilding it for ${this.queue.id} under the sync lease`
            : `search: building the Meilisearch index for embedder ${this.queue.id} under the sync lease`,
          { index: this.index.uid, searchMeanwhile: 'keyword' },
        )
        const started = Date.now()
        const done = await this.rebuildIndex(() => this.holdLease())
        if (done === null) return { pushed: 0, standby: 1 }
        this.deps.log.info('search: the Meilisearch index is rebuilt', { nodes: done, embedder: this.queue.id, ms: Date.now() - started })
        rebuilt = done
        this.owned = true
      }
      if (this.seq < 0) {
        const cursor = await q.getCursor(db, CURSOR)
        this.seq = Number(cursor?.seq ?? 0)
        // after a restart, re-read a minute before the cursor moved (pushes are idempotent)
        this.horizon = { at: new Date((cursor ? new Date(cursor.updated_at).getTime() : 0) - 60_000), xmin: 0n }
      }
      let pushed = 0
      for (;;) {
        const horizon = await q.horizon(db)
        const rows = await q.eventsAllSince(db, this.seq, this.horizon, [...this.recent.keys()])
        const done = rows.length ? await pushEvents(this.index, this.queue, rows, () => this.holdLease()) : 0
        if (done === null) return { pushed, standby: 1 } // the lease was lost while it pushed
        pushed += done
        for (const r of rows) {
          this.recent.set(Number(r.seq), BigInt(r.txid))
          this.seq = Math.max(this.seq, Number(r.seq))
        }
        if (rows.length) await q.setCursor(db, CURSOR, this.seq)
        if (rows.length >= 1000) continue
        this.horizon = q.advance(this.horizon, horizon)
        // only what no later read can meet again (see src/search/catch-up.ts)
        for (const [seq, txid] of this.recent) if (txid < this.horizon.xmin) this.recent.delete(seq)
        break
      }
      this.failures = 0
      return rebuilt === undefined ? { pushed } : { pushed, rebuilt }
    } catch (err) {
      this.state = undefined // a write refused for another embedder's index: look again next time
      this.failures++
      const wait = Math.min(60_000, 1000 * 2 ** Math.min(6, this.failures))
      this.retryAt = now.getTime() + wait
      this.deps.log.warn('search: meilisearch sync failed; retrying later', { error: String(err), retryInMs: wait })
      return { pushed: 0, failed: 1 }
    }
  }

  /**
   * Load every node again from the database into a side index for our embedder and swap it in
   * (search keeps answering from the old index meanwhile); the sync carries on from the newest
   * event the rebuild saw, re-reading the minute before it started (pushes are idempotent).
   * `mayWrite` false (the lease was lost) stops it: null.
   */
  async rebuildIndex(mayWrite: () => Promise<boolean> = async () => true, log: (msg: string) => void = () => {}): Promise<number | null> {
    const own = await this.setup()
    const started = Date.now()
    const done = await rebuildIndex({
      client: this.client,
      db: this.deps.db,
      uid: this.index.uid,
      own,
      docs: (rows) => toDocs(this.queue, rows),
      mayWrite,
      log,
    })
    this.state = undefined
    if (!done) return null
    await q.setCursor(this.deps.db, CURSOR, done.seq)
    this.seq = done.seq
    this.horizon = { at: new Date(started - 60_000), xmin: 0n }
    this.recent.clear()
    return done.total
  }

  /**
   * `bun run search:rebuild`: rebuild now when this process can take the sync lease (PGlite, or
   * every server stopped); while a server holds it, drop the index's embedder instead, which
   * that server sees within seconds and rebuilds (searching by keyword meanwhile).
   */
  async rebuild(log: (msg: string) => void = () => {}): Promise<{ rebuilt: number } | { requested: true }> {
    if (!(await this.holdLease())) {
      await this.setup()
      await succeeded(this.index.resetEmbedders())
      return { requested: true }
    }
    try {
      const total = await this.rebuildIndex(() => this.holdLease(), log)
      if (total === null) throw new Error('the sync lease was taken by a server during the rebuild; it rebuilds the index itself')
      return { rebuilt: total }
    } finally {
      await this.stop()
    }
  }

  memory() {
    return { projects: 0, nodes: 0, vectorBytes: 0, pendingNodes: 0 }
  }
}
