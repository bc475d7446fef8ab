// The keyword index: BM25-style scoring over weighted text fields, normalised into [0, 1] so it
// blends with cosine similarities, and mutable so the server follows writes one node at a
// time instead of rebuilding a 10,000-node index after every change. Each
// (term, field) occurrence is BM25-saturated, length-normalised against the field's average
// length, scaled by the field's weight, and capped so a term's credit in a document is at most
// 1; a query sums idf * credit over its terms and divides by the idf of all its terms.
//
// A document's credits are computed with the average field lengths of the moment it was
// added. The averages drift as documents come and go, so every credit is recomputed when the
// document count has doubled or halved since the last full pass (amortised O(1) per write).

import { terms } from './text.ts'

export interface KeywordDoc {
  id: string
  /** Field name -> text. Missing or empty fields are ignored. */
  fields: Record<string, string | undefined | null>
}

/**
 * Relative weight of each field (only ratios to the largest matter; unknown fields: 1): one
 * mention in the label earns a term its full share, a mention in the description about half,
 * and no amount of repetition in the notes can beat the label.
 */
export const DEFAULT_FIELD_WEIGHTS: Readonly<Record<string, number>> = {
  label: 3,
  description: 1.5,
  measure: 1,
  notes: 0.8,
}

const K1 = 1.2
const B = 0.3

interface Doc {
  fields: Record<string, string[]>
  credits: Map<string, number>
}

export class LiveKeywordIndex {
  private readonly docs = new Map<string, Doc>()
  /** term -> document id -> credit in [0, 1] */
  private readonly postings = new Map<string, Map<string, number>>()
  private readonly lengthSum: Record<string, number> = {}
  private readonly fieldCount: Record<string, number> = {}
  private readonly weights: Record<string, number>
  private readonly maxWeight: number
  private sizeAtLastPass = 0

  constructor(fieldWeights: Record<string, number> = {}) {
    this.weights = { ...DEFAULT_FIELD_WEIGHTS, ...fieldWeights }
    this.maxWeight = Math.max(...Object.values(this.weights))
  }

  get size(): number {
    return this.docs.size
  }

  has(id: string): boolean {
    return this.docs.has(id)
  }

  /** Add or replace a document. */
  set(doc: KeywordDoc): void {
    this.remove(doc.id)
    const fields: Record<string, string[]> = {}
    for (const [name, text] of Object.entries(doc.fields)) {
      if (!text) continue
      const toks = terms(text)
      if (toks.length === 0) continue
      fields[name] = toks
      this.lengthSum[name] = (this.lengthSum[name] ?? 0) + toks.length
      this.fieldCount[name] = (this.fieldCount[name] ?? 0) + 1
    }
    const entry: Doc = { fields, credits: this.credits(fields) }
    this.docs.set(doc.id, entry)
    this.post(doc.id, entry)
    const n = this.docs.size
    if (n >= 2 * this.sizeAtLastPass + 16) this.recompute()
  }

  remove(id: string): void {
    const old = this.docs.get(id)
    if (!old) return
    for (const [name, toks] of Object.entries(old.fields)) {
      this.lengthSum[name] = (this.lengthSum[name] ?? 0) - toks.length
      this.fieldCount[name] = (this.fieldCount[name] ?? 0) - 1
    }
    for (const t of old.credits.keys()) {
      const p = this.postings.get(t)
      p?.delete(id)
      if (p && p.size === 0) this.postings.delete(t)
    }
    this.docs.delete(id)
    if (this.docs.size * 2 < this.sizeAtLastPass) this.recompute()
  }

  /**
   * Keyword similarity in [0, 1] per matching document: idf-weighted credits summed over the query terms, divided by the idf of all of them.
   * `allow` filters documents (e.g. by node type) before anything is allocated for them.
   */
  score(query: string, allow?: (id: string) => boolean): Map<string, number> {
    const qTerms = [...new Set(terms(query))]
    const out = new Map<string, number>()
    if (qTerms.length === 0 || this.docs.size === 0) return out
    const n = this.docs.size
    let total = 0
    for (const t of qTerms) {
      const p = this.postings.get(t)
      const idf = idfOf(n, p?.size ?? 0)
      total += idf
      if (!p) continue
      for (const [id, credit] of p) {
        if (allow && !allow(id)) continue
        out.set(id, (out.get(id) ?? 0) + idf * credit)
      }
    }
    for (const [id, s] of out) out.set(id, Math.min(1, s / total))
    return out
  }

  private credits(fields: Record<string, string[]>): Map<string, number> {
    const credit = new Map<string, number>()
    for (const [name, toks] of Object.entries(fields)) {
      const avg = (this.lengthSum[name] ?? 0) / (this.fieldCount[name] || 1) || toks.length || 1
      const norm = 1 - B + (B * toks.length) / avg
      const tf = new Map<string, number>()
      for (const t of toks) tf.set(t, (tf.get(t) ?? 0) + 1)
      const share = (this.weights[name] ?? 1) / this.maxWeight
      for (const [t, f] of tf) {
        const x = f / norm
        credit.set(t, (credit.get(t) ?? 0) + share * Math.min(1, (x * (K1 + 1)) / (x + K1)))
      }
    }
    for (const [t, c] of credit) credit.set(t, Math.min(1, c))
    return credit
  }

  private post(id: string, doc: Doc): void {
    for (const [t, c] of doc.credits) {
      let p = this.postings.get(t)
      if (!p) this.postings.set(t, (p = new Map()))
      p.set(id, c)
    }
  }

  /** Recompute every credit against the current average field lengths. */
  private recompute(): void {
    this.postings.clear()
    for (const [id, doc] of this.docs) {
      doc.credits = this.credits(doc.fields)
      this.post(id, doc)
    }
    this.sizeAtLastPass = this.docs.size
  }
}

function idfOf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5))
}
