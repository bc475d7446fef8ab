// Hybrid ranking: keyword similarity (BM25-style, see keyword-live.ts) blended with
// embedding cosine similarity the way Meilisearch's hybrid search does it.
//
// Meilisearch runs both searches, multiplies every keyword score by
// (1 - semanticRatio) and every semantic score by semanticRatio, merges the
// two lists by that weighted score and keeps each document once, at its best
// position. A document's blended score is therefore the *larger* of its two
// weighted scores, not their sum: a strong exact match is not dragged down by
// a middling cosine, and a strong paraphrase match is not dragged down by
// sharing no words with the query. Pure functions; no I/O.

import type { SearchMode } from '../ports/search'
import type { SemanticCalibration } from './vectors.ts'

export type { SemanticCalibration } from './vectors.ts'
export { calibrate, DEFAULT_CALIBRATION, dot } from './vectors.ts'

/** How ProjectIndex.rank scores a query (project-index.ts). */
export interface RankOptions {
  type?: string
  limit: number
  mode: SearchMode
  semanticRatio: number
  calibration: SemanticCalibration
  /** weight of the parent's semantic score in a node's own (ancestor context), see ProjectIndex.rank */
  parentWeight: number
}

export interface Hit {
  id: string
  similarity: number
}

/**
 * The `limit`-th largest of the values offered, in one pass keeping the best `limit` in order
 * (a search's limit is at most 20; sorting every score of a 10,000-node project for it took a
 * millisecond of each new query).
 */
export class TopCut {
  private readonly best: Float64Array
  private kept = 0
  private seen = 0

  constructor(private readonly limit: number) {
    this.best = new Float64Array(Math.max(1, limit))
  }

  /** Takes a value; false when it is already below the `limit`-th largest, so it cannot pass the final cut. */
  offer(v: number): boolean {
    this.seen++
    const { best, limit } = this
    if (this.kept === limit && v <= best[limit - 1]!) return v === best[limit - 1]
    let i = this.kept < limit ? this.kept++ : limit - 1
    while (i > 0 && best[i - 1]! < v) {
      best[i] = best[i - 1]!
      i--
    }
    best[i] = v
    return true
  }

  /** The `limit`-th largest offered (every value passes when no more than `limit` were). */
  get cut(): number {
    return this.seen > this.limit ? this.best[this.limit - 1]! : Number.NEGATIVE_INFINITY
  }
}

/** The `limit`-th largest of `values` (every value passes when there are no more than `limit`). */
export function cutFor(values: Iterable<number>, limit: number): number {
  const top = new TopCut(limit)
  for (const v of values) top.offer(v)
  return top.cut
}

/**
 * Default blend for the built-in embedder and DEFAULT_CALIBRATION, from a
 * sweep on the dev set (bench/eval-search.ts --sweep): from 0.3 up to
 * 0.5 paraphrase recall is flat, while above 0.3 cosine starts to outrank
 * exact keyword hits and keyword queries lose recall.
 */
export const DEFAULT_SEMANTIC_RATIO = 0.3

export interface RankedHit {
  id: string
  /** Blended similarity in [0, 1]; equals the keyword score at ratio 0 and the semantic score at ratio 1. */
  similarity: number
  keyword: number
  semantic: number
}

export interface HybridInput {
  /** Keyword similarity per document id, in [0, 1]. */
  keyword: ReadonlyMap<string, number>
  /** Semantic similarity per document id, in [0, 1] (see scoreVectors). */
  semantic: ReadonlyMap<string, number>
  /** 0 = keyword only, 1 = semantic only. Meilisearch's default is 0.5. */
  semanticRatio: number
  /** Drop hits whose blended similarity is below this (like Meilisearch's rankingScoreThreshold). */
  minSimilarity?: number
  limit?: number
}

/** Blend keyword and semantic scores into one list, best first. */
export function hybridRank(input: HybridInput): RankedHit[] {
  const r = Math.min(1, Math.max(0, input.semanticRatio))
  // Dividing by the larger weight keeps the blended score in [0, 1] and makes
  // the ratio-0 and ratio-1 ends report the raw keyword / semantic score.
  const scale = Math.max(r, 1 - r)
  const min = input.minSimilarity ?? 0
  const hits: (RankedHit & { tie: number })[] = []
  const add = (id: string) => {
    const keyword = clamp01(input.keyword.get(id) ?? 0)
    const semantic = clamp01(input.semantic.get(id) ?? 0)
    const wk = (1 - r) * keyword
    const ws = r * semantic
    const similarity = Math.max(wk, ws) / scale
    if (similarity <= 0 || similarity < min) return
    // Equal blended scores are ordered by the other source's weighted score,
    // as Meilisearch falls through to its next ranking rule.
    hits.push({ id, similarity, keyword, semantic, tie: Math.min(wk, ws) })
  }
  for (const id of input.keyword.keys()) add(id)
  for (const id of input.semantic.keys()) if (!input.keyword.has(id)) add(id)

  let pool = hits
  const limit = input.limit
  if (limit !== undefined && hits.length > 4 * limit + 32) {
    // Top-k without sorting every document: find the k-th best score with a
    // numeric typed-array sort, then sort only the hits at or above it.
    const sims = Float64Array.from(hits, (h) => h.similarity).sort()
    const cut = sims[Math.max(0, sims.length - limit)]!
    pool = hits.filter((h) => h.similarity >= cut)
  }
  pool.sort((a, b) => b.similarity - a.similarity || b.tie - a.tie || (a.id < b.id ? -1 : 1))
  const top = limit === undefined ? pool : pool.slice(0, limit)
  return top.map(({ tie: _tie, ...hit }) => hit)
}

function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : Number.isFinite(x) ? x : 0
}
