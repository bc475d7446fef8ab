// Keyword index: BM25-style scoring over several weighted text fields, with
// scores normalised into [0, 1] so they can be blended with cosine
// similarities.
//
// Each (term, field) occurrence count is length-normalised and saturated as in
// BM25, capped at one "typical" occurrence, and scaled by the field's weight
// relative to the heaviest field; the field credits add up to at most 1. So
// one mention in the label earns a term its full share, a mention in the
// description about half, and no amount of repetition in the notes can beat
// the label. The per-term credits are precomputed at build time; a query only
// sums posting entries, which keeps a search over 10k documents at a few ms.

import { terms } from './text.ts'

export interface KeywordDoc {
  id: string
  /** Field name -> text. Missing or empty fields are ignored. */
  fields: Record<string, string | undefined | null>
}

export interface KeywordIndexOptions {
  /** Relative weight of each field; only ratios to the largest matter (unknown fields: 1). */
  fieldWeights?: Record<string, number>
  /** Term-frequency saturation. */
  k1?: number
  /** Length normalisation strength per field (0 = none, 1 = full). */
  b?: number
}

export const DEFAULT_FIELD_WEIGHTS: Readonly<Record<string, number>> = {
  label: 3,
  description: 1.5,
  measure: 1,
  notes: 0.8,
}

interface Posting {
  docs: Int32Array
  /** The term's credit in each document, in [0, 1]. */
  weights: Float32Array
}

export interface KeywordIndex {
  ids: string[]
  postings: Map<string, Posting>
  /** Inverse document frequency per term. */
  idf: Map<string, number>
  /** idf given to a query term that no document contains. */
  unseenIdf: number
}

const DEFAULTS = { k1: 1.2, b: 0.3 }

export function buildKeywordIndex(docs: KeywordDoc[], options: KeywordIndexOptions = {}): KeywordIndex {
  const fieldWeights = { ...DEFAULT_FIELD_WEIGHTS, ...options.fieldWeights }
  const k1 = options.k1 ?? DEFAULTS.k1
  const b = options.b ?? DEFAULTS.b
  // BM25 saturation, scaled so one occurrence in an average-length field gives 1.
  const saturate = (tf: number) => (tf * (k1 + 1)) / (tf + k1)

  // Tokenise once; gather field lengths for the per-field average.
  const tokenised = docs.map((d) => {
    const out: Record<string, string[]> = {}
    for (const [name, text] of Object.entries(d.fields)) if (text) out[name] = terms(text)
    return out
  })
  const lengthSum: Record<string, number> = {}
  const fieldCount: Record<string, number> = {}
  for (const doc of tokenised) {
    for (const [name, toks] of Object.entries(doc)) {
      lengthSum[name] = (lengthSum[name] ?? 0) + toks.length
      fieldCount[name] = (fieldCount[name] ?? 0) + 1
    }
  }

  const maxWeight = Math.max(...Object.values(fieldWeights))
  const raw = new Map<string, { docs: number[]; weights: number[] }>()
  tokenised.forEach((doc, docIndex) => {
    const credit = new Map<string, number>()
    for (const [name, toks] of Object.entries(doc)) {
      const avg = lengthSum[name]! / fieldCount[name]! || 1
      const norm = 1 - b + (b * toks.length) / avg
      const tf = new Map<string, number>()
      for (const t of toks) tf.set(t, (tf.get(t) ?? 0) + 1)
      // Saturate per field and cap at the field's weight, so repeating a
      // word in notes can never outweigh saying it once in the label.
      const share = (fieldWeights[name] ?? 1) / maxWeight
      for (const [t, f] of tf) credit.set(t, (credit.get(t) ?? 0) + share * Math.min(1, saturate(f / norm)))
    }
    for (const [t, c] of credit) {
      let p = raw.get(t)
      if (!p) raw.set(t, (p = { docs: [], weights: [] }))
      p.docs.push(docIndex)
      p.weights.push(Math.min(1, c))
    }
  })

  const n = docs.length
  const postings = new Map<string, Posting>()
  const idf = new Map<string, number>()
  for (const [t, p] of raw) {
    postings.set(t, { docs: Int32Array.from(p.docs), weights: Float32Array.from(p.weights) })
    idf.set(t, bm25Idf(n, p.docs.length))
  }
  return { ids: docs.map((d) => d.id), postings, idf, unseenIdf: bm25Idf(n, 0) }
}

function bm25Idf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5))
}

/**
 * Keyword similarity per matching document, in [0, 1]: the idf-weighted share
 * of the query's terms that the document contains (each term's share scaled
 * by how strongly it occurs). Words of the query that appear nowhere still
 * count in the denominator, so a document matching only a generic word of a
 * long question scores low rather than 1.
 */
export function scoreKeyword(index: KeywordIndex, query: string): Map<string, number> {
  const qTerms = [...new Set(terms(query))]
  const result = new Map<string, number>()
  if (qTerms.length === 0) return result

  let total = 0
  const acc = new Map<number, number>()
  for (const t of qTerms) {
    const idf = index.idf.get(t) ?? index.unseenIdf
    total += idf
    const p = index.postings.get(t)
    if (!p) continue
    for (let i = 0; i < p.docs.length; i++) {
      const d = p.docs[i]!
      acc.set(d, (acc.get(d) ?? 0) + idf * p.weights[i]!)
    }
  }
  for (const [d, s] of acc) result.set(index.ids[d]!, Math.min(1, s / total))
  return result
}
