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
// `bun run search:rebuild` rebuilds the index from the database.

import { randomUUID } from 'node:crypto'
import { type Index, Meilisearch } from 'meilisearch'
import type { Deps } from '../deps'
import { RefusalError } from '../http/errors'
import { BUILTIN_TUNING } from './builtin'
import { embeddingTexts } from './document'
import { type EmbedderChoice, EmbedQueue, within } from './embedder/runtime'
import type { DuplicateAdvisory, SearchAnswer, SearchBackend, SearchRequest } from './port'
import * as q from './queries'

export const MEILI_INDEX = 'arbor_nodes'
const EMBEDDER = 'arbor'
const CURSOR = `meili:${MEILI_INDEX}`
/** how long the sync lease lasts unless renewed (it is renewed before every push) */
export const MEILI_LEASE_MS = 30_000
/** documents embedded and sent per write to Meilisearch (a few seconds of embedding at most) */
const PUSH_CHUNK = 100

interface Doc {
  uid: string
  projectId: string
  id: string
  type: string
  parentId: string | null
  label: string
  description?: string
  notes?: string
  measure?: string
  data: Record<string, any>
  _vectors: Record<string, number[][]>
}

/** Document ids allow letters, digits, - and _: project ids have no _, so this is unambiguous. */
const uid = (projectId: string, id: string) => `${projectId}_${id}`

export class MeiliBackend implements SearchBackend {
  readonly name = 'meilisearch' as const
  readonly queue: EmbedQueue
  readonly client: Meilisearch
  private index: Index<Doc>
  private ready?: Promise<void>
  private seq = -1
  private horizon = new Date(0)
  private readonly recent = new Map<number, number>()
  private failures = 0
  private retryAt = 0
  /** this process, as the holder of the sync lease */
  private readonly holder = randomUUID()
  private readonly lease: string

  constructor(
    private readonly deps: Deps,
    readonly choice: EmbedderChoice,
    indexUid = MEILI_INDEX,
    private readonly leaseMs = MEILI_LEASE_MS,
  ) {
    this.lease = `meili-sync:${indexUid}`
    this.queue = new EmbedQueue(choice.embedder)
    this.client = new Meilisearch({ host: deps.config.meiliUrl!, apiKey: deps.config.meiliApiKey })
    this.index = this.client.index<Doc>(indexUid)
  }

  /** Create the index and its settings once (idempotent); the vector size comes from the embedder. */
  setup(): Promise<void> {
    this.ready ??= (async () => {
      const dims = (await this.queue.embed(['dimensions probe'], true))[0]!.length
      await this.client.createIndex(this.index.uid, { primaryKey: 'uid' }).waitTask()
      const task = await this.index
        .updateSettings({
          filterableAttributes: ['projectId', 'type'],
          searchableAttributes: ['label', 'description', 'measure', 'notes'],
          embedders: { [EMBEDDER]: { source: 'userProvided', dimensions: dims } },
        })
        .waitTask()
      if (task.status !== 'succeeded') throw new Error(`meilisearch settings: ${JSON.stringify(task.error)}`)
    })().catch((err) => {
      this.ready = undefined
      throw err
    })
    return this.ready
  }

  async search(projectId: string, req: SearchRequest): Promise<SearchAnswer> {
    try {
      return await this.searchMeili(projectId, req)
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
    await this.setup()
    let vector: Float32Array | undefined
    if (req.mode !== 'keyword')
      vector = await within(
        this.queue.query(req.q).catch(() => undefined),
        BUILTIN_TUNING.queryEmbedMs,
      )
    const mode = vector ? req.mode : 'keyword'
    const filter = [`projectId = "${projectId}"`, ...(req.type ? [`type = "${req.type}"`] : [])]
    const res = await this.index.search(mode === 'semantic' ? '' : req.q, {
      filter,
      limit: req.limit,
      showRankingScore: true,
      ...(vector
        ? {
            vector: Array.from(vector),
            hybrid: { embedder: EMBEDDER, semanticRatio: mode === 'semantic' ? 1 : this.choice.semanticRatio },
          }
        : {}),
    })
    const ids = res.hits.map((h) => h.id)
    const ancestors = new Map<string, { id: string; type: string; label: string }[]>()
    for (const r of ids.length ? await q.ancestorsMany(this.deps.db, projectId, ids) : []) {
      if (!ancestors.has(r.node_id)) ancestors.set(r.node_id, [])
      ancestors.get(r.node_id)!.push({ id: r.id, type: r.type, label: r.label ?? '' })
    }
    return {
      hits: res.hits.map((h) => ({
        node: { id: h.id, type: h.type, parentId: h.parentId, data: h.data },
        similarity: Math.round(Math.min(1, Math.max(0, h._rankingScore ?? 0)) * 10000) / 10000,
        ancestors: ancestors.get(h.id) ?? [],
      })),
      meta: {
        backend: 'meilisearch',
        embedder: this.queue.id,
        mode: req.mode,
        semantic: vector || req.mode === 'keyword' ? (req.mode === 'keyword' ? 'off' : 'full') : 'unavailable',
        pendingNodes: 0,
        ...(this.choice.fallback ? { fallback: this.choice.fallback } : {}),
      },
    }
  }

  /** Vector search among same-type nodes; time-boxed like the built-in check. */
  async duplicates(projectId: string, node: { id: string; type: string; data: Record<string, any> }): Promise<DuplicateAdvisory | null> {
    const texts = embeddingTexts(node.data)
    const vector = await within(
      this.queue.embed([texts[texts.length - 1]!], true).then((v) => v[0]!),
      BUILTIN_TUNING.duplicateEmbedMs,
    ).catch(() => undefined)
    if (!vector) return null
    const res = await within(
      this.index.search('', {
        filter: [`projectId = "${projectId}"`, `type = "${node.type}"`],
        vector: Array.from(vector),
        hybrid: { embedder: EMBEDDER, semanticRatio: 1 },
        limit: 3,
        showRankingScore: true,
        // Meilisearch reports a vector hit's score as (1 + cosine) / 2
        rankingScoreThreshold: (1 + this.choice.duplicateCosine) / 2,
      }),
      BUILTIN_TUNING.duplicateEmbedMs,
    ).catch(() => undefined)
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
    if (await q.takeLease(this.deps.db, this.lease, this.holder, this.leaseMs)) return true
    this.seq = -1
    this.recent.clear()
    return false
  }

  async stop(): Promise<void> {
    if (this.deps.db.kind === 'postgres') await q.dropLease(this.deps.db, this.lease, this.holder).catch(() => {})
  }

  /** Push the node events after the cursor to Meilisearch; on failure keep the cursor and back off. */
  async tick(now: Date): Promise<Record<string, number>> {
    if (now.getTime() < this.retryAt) return { pushed: 0 }
    const db = this.deps.db
    try {
      if (!(await this.holdLease())) return { pushed: 0, standby: 1 }
      await this.setup()
      if (this.seq < 0) {
        const cursor = await q.getCursor(db, CURSOR)
        this.seq = Number(cursor?.seq ?? 0)
        // after a restart, re-read a minute before the cursor moved (pushes are idempotent)
        this.horizon = new Date((cursor ? new Date(cursor.updated_at).getTime() : 0) - 60_000)
      }
      let pushed = 0
      for (;;) {
        const horizon = await q.horizon(db)
        const rows = await q.eventsAllSince(db, this.seq, this.horizon, [...this.recent.keys()])
        const done = rows.length ? await this.push(rows) : 0
        if (done === null) return { pushed, standby: 1 } // the lease was lost while it pushed
        pushed += done
        for (const r of rows) {
          this.recent.set(Number(r.seq), new Date(r.created_at).getTime())
          this.seq = Math.max(this.seq, Number(r.seq))
        }
        if (rows.length) await q.setCursor(db, CURSOR, this.seq)
        if (rows.length >= 1000) continue
        this.horizon = horizon
        for (const [seq, at] of this.recent) if (at < horizon.getTime()) this.recent.delete(seq)
        break
      }
      this.failures = 0
      return { pushed }
    } catch (err) {
      this.failures++
      const wait = Math.min(60_000, 1000 * 2 ** Math.min(6, this.failures))
      this.retryAt = now.getTime() + wait
      this.deps.log.warn('search: meilisearch sync failed; retrying later', { error: String(err), retryInMs: wait })
      return { pushed: 0, failed: 1 }
    }
  }

  /** Delete every document and load every node again from the database. */
  async rebuild(log: (msg: string) => void = () => {}): Promise<number> {
    await this.setup()
    const cursorSeq = await q.maxSeq(this.deps.db)
    await this.wait(this.index.deleteAllDocuments())
    let after: [string, string] = ['', '']
    let total = 0
    for (;;) {
      const rows = await q.listAllNodes(this.deps.db, after, 200)
      if (rows.length === 0) break
      await this.wait(
        this.index.addDocuments(
          await this.docs(
            rows.map((r) => ({ projectId: r.project_id, node: { id: r.id, type: r.type, parentId: r.parent_id, data: r.data } })),
          ),
        ),
      )
      total += rows.length
      after = [rows[rows.length - 1]!.project_id, rows[rows.length - 1]!.id]
      log(`indexed ${total} nodes`)
    }
    await q.setCursor(this.deps.db, CURSOR, cursorSeq)
    return total
  }

  memory() {
    return { projects: 0, nodes: 0, vectorBytes: 0, pendingNodes: 0 }
  }

  /**
   * Push what the events say, the newest event per node winning, in chunks of PUSH_CHUNK
   * documents; the lease is renewed before each write (embedding a chunk takes seconds), and
   * null is returned, with nothing more written, once it is lost.
   */
  private async push(rows: q.EventRow[]): Promise<number | null> {
    const last = new Map<string, { projectId: string; payload: any }>()
    for (const r of rows as (q.EventRow & { project_id: string })[]) {
      const node = r.payload?.node
      if (!node?.id) continue
      const key = uid(r.project_id, node.id)
      last.delete(key)
      last.set(key, { projectId: r.project_id, payload: r.payload })
    }
    const deletes = [...last].filter(([, v]) => v.payload.event === 'node.deleted').map(([k]) => k)
    const upserts = [...last.values()]
      .filter((v) => v.payload.event !== 'node.deleted')
      .map((v) => ({ projectId: v.projectId, node: v.payload.node }))
    for (let i = 0; i < upserts.length; i += PUSH_CHUNK) {
      const docs = await this.docs(upserts.slice(i, i + PUSH_CHUNK))
      if (!(await this.holdLease())) return null
      await this.wait(this.index.addDocuments(docs))
    }
    if (deletes.length) {
      if (!(await this.holdLease())) return null
      await this.wait(this.index.deleteDocuments(deletes))
    }
    return last.size
  }

  private async docs(
    items: { projectId: string; node: { id: string; type: string; parentId: string | null; data: Record<string, any> } }[],
  ): Promise<Doc[]> {
    const texts = items.map((i) => embeddingTexts(i.node.data))
    const flat = await this.queue.embed(texts.flat())
    let k = 0
    return items.map(({ projectId, node }, i) => ({
      uid: uid(projectId, node.id),
      projectId,
      id: node.id,
      type: node.type,
      parentId: node.parentId ?? null,
      label: String(node.data.label ?? ''),
      description: node.data.description,
      notes: node.data.notes,
      measure: node.data.measure,
      data: node.data,
      _vectors: { [EMBEDDER]: texts[i]!.map(() => Array.from(flat[k++]!)) },
    }))
  }

  private async wait(p: ReturnType<Index<Doc>['addDocuments']>): Promise<void> {
    const task = await p.waitTask({ timeout: 60_000 })
    if (task.status !== 'succeeded') throw new Error(`meilisearch task ${task.uid} ${task.status}: ${JSON.stringify(task.error)}`)
  }
}
