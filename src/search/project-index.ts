// The built-in index of one project: every node with its keyword entry and its sentence
// vectors, kept in step with the project's node events. Pure and in memory; builtin.ts loads
// it, feeds it events and vectors, and persists what it embeds.

import type { NodeData } from '../ports/node-data'
import { embeddingTexts, keywordDoc } from './document.ts'
import { textHash } from './hash.ts'
import { KeywordScores, LiveKeywordIndex } from './keyword-live.ts'
import { calibrate, cutFor, type Hit, hybridRank, type RankOptions, TopCut } from './rank.ts'
import { VectorStore } from './vector-store.ts'

/**
 * Where a read of the events outbox stands (sql/search/horizon.sql): the next read re-reads the
 * events of transactions at or after `xmin` that started at or after `at`, skipping those applied.
 */
export type ReadPoint = { at: Date; xmin: bigint }
/** before the first read: everything is read */
export const FIRST_READ: ReadPoint = { at: new Date(0), xmin: 0n }

export interface IndexNode {
  id: string
  /** its rev as the event or row it was read from carried it (live.md, 1): a search hit answers it */
  rev?: string
  type: string
  parentId: string | null
  data: NodeData
}

interface Entry {
  node: IndexNode
  hashes: string[]
  /** vector slot per text, -1 while its vector is missing */
  slots: number[]
  /** how many of its slots are -1 */
  missing: number
  /**
   * Scratch of rank(): the query (its generation) the next two were set for, the node's best
   * calibrated cosine over its texts, and its semantic score with its parent's context
   */
  gen: number
  own: number
  semantic: number
  /** the parent's entry, as of `linked` (see scoreSemantic) */
  parent: Entry | undefined
}

export class ProjectIndex {
  readonly nodes = new Map<string, Entry>()
  readonly keyword = new LiveKeywordIndex()
  private store?: VectorStore
  /** the entry holding each vector slot */
  private slotOwner: (Entry | undefined)[] = []
  /** counts the queries rank() has scored (Entry.gen) */
  private generation = 0
  /** counts upserts and deletes; `linked` is its value when every Entry.parent was last set */
  private changes = 0
  private linked = -1
  /** text hash -> the slots holding that text's vector (vectorFor) */
  private readonly slotsOfHash = new Map<string, number[]>()
  /** text hash -> text, for texts some node waits a vector for */
  private readonly waiting = new Map<string, { text: string; nodes: Set<string> }>()
  /** waiting hashes not yet looked up in the database (takeUnchecked) */
  private unchecked = new Set<string>()
  /** nodes with at least one missing vector, kept as a count (a 50k-node backlog is asked on every search) */
  private pending = 0

  /** last applied event seq, where the last read of the outbox stood, and the seqs applied that it may read again, with their txid (catch-up.ts) */
  seq = 0
  horizon: ReadPoint = FIRST_READ
  recent = new Map<number, bigint>()
  lastUsed = Date.now()

  constructor(readonly projectId: string) {}

  /** Add or replace a node. `vectorOf` supplies already known vectors by text hash. */
  upsert(node: IndexNode, vectorOf: (hash: string) => Float32Array | undefined = () => undefined): void {
    const texts = embeddingTexts(node.data)
    const hashes = texts.map(textHash)
    const old = this.nodes.get(node.id)
    this.keyword.set(keywordDoc(node.id, node.data))
    this.changes++
    if (old && sameList(old.hashes, hashes)) {
      old.node = node
      return
    }
    // looked up before the old entry lets go of its vectors: an edit that keeps a text keeps its vector
    const known = hashes.map((h) => vectorOf(h) ?? this.vectorFor(h))
    if (old) this.detach(old)
    const entry: Entry = { node, hashes, slots: hashes.map(() => -1), missing: 0, gen: 0, own: 0, semantic: 0, parent: undefined }
    this.nodes.set(node.id, entry)
    hashes.forEach((h, i) => {
      const v = known[i]
      if (v) this.place(entry, i, v)
      else {
        entry.missing++
        this.wait(h, texts[i]!, node.id)
      }
    })
    if (entry.missing > 0) this.pending++
  }

  delete(id: string): void {
    const old = this.nodes.get(id)
    if (!old) return
    this.changes++
    this.detach(old)
    this.keyword.remove(id)
    this.nodes.delete(id)
  }

  /** How many texts still need a vector. */
  get missingCount(): number {
    return this.waiting.size
  }

  /** Up to `max` texts that still need a vector, [hash, text], skipping hashes `skip` says are taken. */
  missingTexts(max: number, skip: (hash: string) => boolean = () => false): [string, string][] {
    const out: [string, string][] = []
    if (max <= 0) return out
    for (const [h, w] of this.waiting) {
      if (skip(h)) continue
      out.push([h, w.text])
      if (out.length >= max) break
    }
    return out
  }

  /**
   * Hashes that started waiting since the last call, each returned once: the caller looks them
   * up in the database (another replica may have embedded them) and never asks again.
   */
  takeUnchecked(): string[] {
    const out = [...this.unchecked]
    this.unchecked = new Set()
    return out
  }

  /**
   * The vector of a text some node of this index already has (a copy), or undefined: a node
   * that repeats another's text (a copied label, the same job under two bets) needs no embedding.
   */
  vectorFor(hash: string): Float32Array | undefined {
    const slot = this.slotsOfHash.get(hash)?.[0]
    return slot === undefined ? undefined : this.store!.row(slot)
  }

  /** Nodes with at least one text still lacking its vector. */
  get pendingNodes(): number {
    return this.pending
  }

  /** A vector arrived (embedded here, or read from the database). */
  supply(hash: string, vector: Float32Array): void {
    const w = this.waiting.get(hash)
    if (!w) return
    this.waiting.delete(hash)
    this.unchecked.delete(hash)
    for (const id of w.nodes) {
      const entry = this.nodes.get(id)
      if (!entry) continue
      entry.hashes.forEach((h, i) => {
        if (h !== hash || entry.slots[i] !== -1) return
        this.place(entry, i, vector)
        if (--entry.missing === 0) this.pending--
      })
    }
  }

  /** Every text hash in use (to prune vectors of texts that are gone). */
  liveHashes(): string[] {
    const out = new Set<string>()
    for (const e of this.nodes.values()) for (const h of e.hashes) out.add(h)
    return [...out]
  }

  /** Ancestors from the parent up to the root, as api.md's search result wants them. */
  ancestors(id: string): { id: string; type: string; label: string }[] {
    const out: { id: string; type: string; label: string }[] = []
    let parentId = this.nodes.get(id)?.node.parentId ?? null
    const seen = new Set<string>()
    while (parentId && !seen.has(parentId)) {
      seen.add(parentId)
      const p = this.nodes.get(parentId)
      if (!p) break
      out.push({ id: p.node.id, type: p.node.type, label: String(p.node.data.label ?? '') })
      parentId = p.node.parentId
    }
    return out
  }

  /** Bytes held by the vectors. */
  get vectorBytes(): number {
    return this.store?.bytes ?? 0
  }

  /**
   * Rank nodes for a query: keyword similarity, semantic similarity (best cosine over a
   * node's texts, calibrated to [0, 1]), blended as Meilisearch's hybrid search does.
   *
   * Ancestor context: a node's semantic score may also draw on its parent's. A job like
   * "Payers in the eurozone can pay by SEPA Direct Debit" says little on its own about the
   * payment checkout it belongs to; with parentWeight w its score is the larger of its own
   * and (1-w)*own + w*parent. Computed at query time, so a move or a parent's edit never
   * leaves stale vectors behind. Measured on the dev set (bench/eval-search.ts).
   */
  rank(query: string, queryVector: Float32Array | null, o: RankOptions, keyword = this.keywordScores(query, o)): Hit[] {
    const scored = o.mode !== 'keyword' && queryVector !== null && this.store !== undefined
    // A blended score is the larger of the two weighted scores (rank.ts), so the blend's best
    // `limit` are among the best `limit` of either side, ties included: only those are blended.
    // At 50,000 nodes, maps of every node per query were most of a search's time and garbage.
    const semanticTop = new Map<string, number>()
    if (scored) for (const e of this.semanticBest(queryVector, o)) semanticTop.set(e.node.id, e.semantic)
    const keywordTop = new Map<string, number>()
    const { ids, scores } = keyword
    const keywordCut = cutFor(scores, o.limit)
    // the scores are scanned as numbers: only the ids of the best few are read (thousands of
    // matches' ids, each its own object in memory, cost a search more than the scan)
    const semanticBests = [...semanticTop.keys()]
    for (let i = 0; i < scores.length; i++) {
      const k = scores[i]!
      if (k < keywordCut) continue
      const id = ids[i]!
      const e = this.nodes.get(id)
      if (!e) continue // removed while the query's vector was computed
      keywordTop.set(id, k)
      if (scored && e.gen === this.generation && e.semantic > 0) semanticTop.set(id, e.semantic)
    }
    // a semantic best under the keyword cut is blended with its keyword score
    for (const id of semanticBests)
      if (!keywordTop.has(id)) {
        const k = keyword.scoreOf(id)
        if (k !== undefined) keywordTop.set(id, k)
      }
    const ratio = o.mode === 'keyword' ? 0 : o.mode === 'semantic' ? 1 : o.semanticRatio
    return hybridRank({ keyword: keywordTop, semantic: semanticTop, semanticRatio: ratio, limit: o.limit }).map((h) => ({
      id: h.id,
      similarity: h.similarity,
    }))
  }

  /**
   * The keyword half of `rank`, on its own so a search can score it while the query's vector is
   * being computed in the model's process (pass it back to `rank`).
   */
  keywordScores(query: string, o: Pick<RankOptions, 'type' | 'mode'>): KeywordScores {
    if (o.mode === 'semantic') return KeywordScores.NONE
    const allow = o.type ? (id: string) => this.nodes.get(id)?.node.type === o.type : undefined
    return this.keyword.score(query, allow)
  }

  /**
   * Sets `own` and `semantic` on every node with a vector for a new generation of this query,
   * and returns the nodes (of the wanted type) whose semantic score is above 0 and among the
   * best `limit`, ties included.
   */
  private semanticBest(queryVector: Float32Array, o: RankOptions): Entry[] {
    const gen = ++this.generation
    const cos = this.store!.scores(queryVector)
    for (let s = 0; s < cos.length; s++) {
      const e = this.slotOwner[s]
      if (e === undefined) continue
      const c = calibrate(cos[s]!, o.calibration)
      if (e.gen !== gen) {
        e.gen = gen
        e.own = c
      } else if (c > e.own) e.own = c
    }
    // parents are looked up once per change of the tree, not per query (50,000 Map lookups by
    // id took half a search's time)
    if (this.linked !== this.changes) {
      for (const e of this.nodes.values()) e.parent = e.node.parentId ? this.nodes.get(e.node.parentId) : undefined
      this.linked = this.changes
    }
    // the cut is found in the same pass; a node already below the running cut is never kept
    const top = new TopCut(o.limit)
    const kept: Entry[] = []
    for (const e of this.nodes.values()) {
      if (e.gen !== gen) continue
      const p = e.parent?.gen === gen ? e.parent.own : 0
      e.semantic = Math.max(e.own, (1 - o.parentWeight) * e.own + o.parentWeight * p)
      if (e.semantic > 0 && (!o.type || e.node.type === o.type) && top.offer(e.semantic)) kept.push(e)
    }
    const cut = top.cut
    return kept.filter((e) => e.semantic >= cut)
  }

  /**
   * Nodes of a type whose full text (label with description) is closest to a vector:
   * raw cosines, best first, at or above `min`.
   */
  nearest(vector: Float32Array, type: string, min: number, limit: number): { id: string; cosine: number }[] {
    if (!this.store || limit <= 0) return []
    const cos = this.store.scores(vector)
    // the best `limit`, kept sorted as the scan goes (a label repeated a thousand times passes
    // `min` a thousand times: no list of them all, no sort of it)
    const out: { id: string; cosine: number }[] = []
    for (let slot = 0; slot < cos.length; slot++) {
      const c = cos[slot]!
      if (c < min || (out.length === limit && c <= out[limit - 1]!.cosine)) continue
      const e = this.slotOwner[slot]
      if (e?.node.type !== type || e.slots[e.slots.length - 1] !== slot) continue
      let i = out.length === limit ? limit - 1 : out.length
      while (i > 0 && out[i - 1]!.cosine < c) i--
      out.splice(i, 0, { id: e.node.id, cosine: c })
      if (out.length > limit) out.pop()
    }
    return out
  }

  private place(entry: Entry, i: number, vector: Float32Array): void {
    this.store ??= new VectorStore(vector.length)
    const slot = this.store.add(vector)
    entry.slots[i] = slot
    this.slotOwner[slot] = entry
    const slots = this.slotsOfHash.get(entry.hashes[i]!)
    if (slots) slots.push(slot)
    else this.slotsOfHash.set(entry.hashes[i]!, [slot])
  }

  private wait(hash: string, text: string, id: string): void {
    let w = this.waiting.get(hash)
    if (!w) {
      this.waiting.set(hash, (w = { text, nodes: new Set() }))
      this.unchecked.add(hash)
    }
    w.nodes.add(id)
  }

  private detach(entry: Entry): void {
    if (entry.missing > 0) this.pending--
    entry.slots.forEach((slot, i) => {
      if (slot < 0) return
      this.store!.remove(slot)
      this.slotOwner[slot] = undefined
      const h = entry.hashes[i]!
      const slots = this.slotsOfHash.get(h)!.filter((x) => x !== slot)
      if (slots.length) this.slotsOfHash.set(h, slots)
      else this.slotsOfHash.delete(h)
    })
    for (const h of entry.hashes) {
      const w = this.waiting.get(h)
      if (!w) continue
      w.nodes.delete(entry.node.id)
      if (w.nodes.size === 0) {
        this.waiting.delete(h)
        this.unchecked.delete(h)
      }
    }
  }
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i])
}
