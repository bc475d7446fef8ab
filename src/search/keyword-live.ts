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
//
// Memory: 50,000 documents in Maps of Maps held ~200 MB, so the index keeps numbers in typed
// arrays. Terms and documents are numbered; a document is one Int32Array (its field lengths
// and term counts), a term's postings two growable arrays (document numbers and credits). A
// removed or replaced document's number is retired, not reused: its postings stay behind and
// are skipped, until a full pass renumbers everything (when retired numbers outnumber live ones).

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

/** Documents holding a term, and each one's credit; entries of retired documents are skipped. */
interface Postings {
  docs: Int32Array
  credits: Float32Array
  /** entries in use */
  n: number
  /** live documents among them (the term's document frequency) */
  live: number
}

export class LiveKeywordIndex {
  /** document id -> its number */
  private readonly numbers = new Map<string, number>()
  /** by document number: its id (undefined once retired) */
  private ids: (string | undefined)[] = []
  /**
   * by document number: [fields, (field, length) × fields, (term, field, count) × ...], the
   * triples grouped by term (a document's credits are computed from this alone)
   */
  private shapes: (Int32Array | undefined)[] = []
  /** term -> its number, and back */
  private readonly termNumbers = new Map<string, number>()
  private termNames: string[] = []
  private postings: (Postings | undefined)[] = []
  private readonly fieldNumbers = new Map<string, number>()
  private fieldNames: string[] = []
  private lengthSum: number[] = []
  private fieldCount: number[] = []
  private readonly weights: Record<string, number>
  private readonly maxWeight: number
  private sizeAtLastPass = 0
  /** per-query sums by document number, zeroed again after each query */
  private scratch = new Float64Array(0)
  /** counts sets and removes: a document's number holds while it stays the same (KeywordScores.scoreOf) */
  private changes = 0

  constructor(fieldWeights: Record<string, number> = {}) {
    this.weights = { ...DEFAULT_FIELD_WEIGHTS, ...fieldWeights }
    this.maxWeight = Math.max(...Object.values(this.weights))
  }

  get size(): number {
    return this.numbers.size
  }

  has(id: string): boolean {
    return this.numbers.has(id)
  }

  /** The document's number while `changes` stays as it is, or undefined. */
  numberOf(id: string): number | undefined {
    return this.numbers.get(id)
  }

  get changeCount(): number {
    return this.changes
  }

  /** Add or replace a document. */
  set(doc: KeywordDoc): void {
    this.remove(doc.id)
    this.changes++
    const perTerm = new Map<number, number[]>()
    const lengths: number[] = []
    for (const [name, text] of Object.entries(doc.fields)) {
      if (!text) continue
      const toks = terms(text)
      if (toks.length === 0) continue
      const f = this.field(name)
      lengths.push(f, toks.length)
      this.lengthSum[f]! += toks.length
      this.fieldCount[f]! += 1
      for (const t of toks) {
        const term = this.term(t)
        let counts = perTerm.get(term)
        if (!counts) perTerm.set(term, (counts = []))
        counts[f] = (counts[f] ?? 0) + 1
      }
    }
    const shape: number[] = [lengths.length / 2, ...lengths]
    for (const [term, counts] of perTerm)
      counts.forEach((n, f) => {
        shape.push(term, f, n)
      })
    const no = this.ids.length
    this.ids.push(doc.id)
    this.shapes.push(Int32Array.from(shape))
    this.numbers.set(doc.id, no)
    this.post(no)
    const n = this.numbers.size
    if (n >= 2 * this.sizeAtLastPass + 16) this.recompute()
  }

  remove(id: string): void {
    const no = this.numbers.get(id)
    if (no === undefined) return
    this.changes++
    const shape = this.shapes[no]!
    for (let i = 0; i < shape[0]!; i++) {
      const f = shape[1 + 2 * i]!
      this.lengthSum[f]! -= shape[2 + 2 * i]!
      this.fieldCount[f]! -= 1
    }
    let last = -1
    for (let i = 1 + 2 * shape[0]!; i < shape.length; i += 3) {
      if (shape[i] !== last) this.postings[shape[i]!]!.live--
      last = shape[i]!
    }
    this.ids[no] = undefined
    this.shapes[no] = undefined
    this.numbers.delete(id)
    const n = this.numbers.size
    if (n * 2 < this.sizeAtLastPass || this.ids.length > 2 * n + 1024) this.recompute()
  }

  /**
   * Keyword similarity in [0, 1] per matching document: idf-weighted credits summed over the query terms, divided by the idf of all of them.
   * `allow` filters documents (e.g. by node type) before anything is allocated for them.
   */
  score(query: string, allow?: (id: string) => boolean): KeywordScores {
    const qTerms = [...new Set(terms(query))]
    const n = this.numbers.size
    if (qTerms.length === 0 || n === 0) return KeywordScores.NONE
    if (this.scratch.length < this.ids.length) this.scratch = new Float64Array(Math.ceil(this.ids.length * 1.25) + 64)
    const acc = this.scratch
    const touched: number[] = []
    let total = 0
    for (const t of qTerms) {
      const term = this.termNumbers.get(t)
      const p = term === undefined ? undefined : this.postings[term]
      const idf = idfOf(n, p?.live ?? 0)
      total += idf
      if (!p) continue
      for (let i = 0; i < p.n; i++) {
        const no = p.docs[i]!
        const id = this.ids[no]
        if (id === undefined || (allow && !allow(id))) continue
        if (acc[no] === 0) touched.push(no)
        acc[no]! += idf * p.credits[i]!
      }
    }
    const ids: string[] = new Array(touched.length)
    const scores = new Float64Array(touched.length)
    for (let i = 0; i < touched.length; i++) {
      const no = touched[i]!
      ids[i] = this.ids[no]!
      scores[i] = Math.min(1, acc[no]! / total)
      acc[no] = 0
    }
    return new KeywordScores(ids, scores, { docs: Int32Array.from(touched), index: this, at: this.changes })
  }

  private field(name: string): number {
    const f = numberOf(this.fieldNumbers, this.fieldNames, name)
    this.lengthSum[f] ??= 0
    this.fieldCount[f] ??= 0
    return f
  }

  private term(name: string): number {
    return numberOf(this.termNumbers, this.termNames, name)
  }

  /** Credit each term of document `no` against the current average field lengths. */
  private post(no: number): void {
    const shape = this.shapes[no]!
    const fields = shape[0]!
    const norm: number[] = []
    for (let i = 0; i < fields; i++) {
      const f = shape[1 + 2 * i]!
      const len = shape[2 + 2 * i]!
      const avg = this.lengthSum[f]! / (this.fieldCount[f] || 1) || len || 1
      norm[f] = 1 - B + (B * len) / avg
    }
    let term = -1
    let credit = 0
    for (let i = 1 + 2 * fields; i <= shape.length; i += 3) {
      if (i === shape.length || shape[i] !== term) {
        if (term >= 0) this.append(term, no, Math.min(1, credit))
        if (i === shape.length) break
        term = shape[i]!
        credit = 0
      }
      const f = shape[i + 1]!
      const x = shape[i + 2]! / norm[f]!
      credit += ((this.weights[this.fieldNames[f]!] ?? 1) / this.maxWeight) * Math.min(1, (x * (K1 + 1)) / (x + K1))
    }
  }

  private append(term: number, no: number, credit: number): void {
    let p = this.postings[term]
    if (!p) this.postings[term] = p = { docs: new Int32Array(4), credits: new Float32Array(4), n: 0, live: 0 }
    if (p.n === p.docs.length) {
      const docs = new Int32Array(p.n * 2)
      const credits = new Float32Array(p.n * 2)
      docs.set(p.docs)
      credits.set(p.credits)
      p.docs = docs
      p.credits = credits
    }
    p.docs[p.n] = no
    p.credits[p.n] = credit
    p.n++
    p.live++
  }

  /**
   * Recompute every credit against the current average field lengths, numbering the live
   * documents and the terms they use afresh (retired numbers and unused terms are let go).
   */
  private recompute(): void {
    const ids: string[] = []
    const shapes: Int32Array[] = []
    const termNames: string[] = []
    const renumber = new Map<number, number>()
    this.termNumbers.clear()
    for (const [id, old] of this.numbers) {
      const shape = this.shapes[old]!
      for (let i = 1 + 2 * shape[0]!; i < shape.length; i += 3) {
        let t = renumber.get(shape[i]!)
        if (t === undefined) {
          t = termNames.push(this.termNames[shape[i]!]!) - 1
          renumber.set(shape[i]!, t)
          this.termNumbers.set(termNames[t]!, t)
        }
        shape[i] = t
      }
      this.numbers.set(id, ids.length)
      ids.push(id)
      shapes.push(shape)
    }
    this.ids = ids
    this.shapes = shapes
    this.termNames = termNames
    this.postings = []
    for (let no = 0; no < ids.length; no++) this.post(no)
    this.scratch = new Float64Array(0)
    this.sizeAtLastPass = ids.length
  }
}

/** The number of `name`, given the next one (its index in `names`) when it has none yet. */
function numberOf(numbers: Map<string, number>, names: string[], name: string): number {
  let n = numbers.get(name)
  if (n === undefined) {
    n = names.push(name) - 1
    numbers.set(name, n)
  }
  return n
}

function idfOf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5))
}

/**
 * One query's keyword similarities: the matching documents' ids and their scores, in parallel
 * arrays, in no particular order. Not a Map: building a Map of thousands of ids took 1-2 ms of
 * each search (rank walks the arrays once; `get` is for a few lookups, it scans).
 */
export class KeywordScores {
  /** no match (an empty query, an empty index, a semantic-only search) */
  static readonly NONE = new KeywordScores([], new Float64Array(0))

  constructor(
    readonly ids: readonly string[],
    readonly scores: Float64Array,
    /** the index's number of each document, beside its id, and the index as it was then (scoreOf) */
    private readonly numbered?: { docs: Int32Array; index: LiveKeywordIndex; at: number },
  ) {}

  /**
   * The score of `id`, or undefined when it did not match: found by its number in a typed
   * array, so the ids of the thousands of other matches are not touched (at 10,000 nodes,
   * comparing them one by one with each semantic best took most of a search's keyword time).
   * Once the index has changed (a write while the query's vector was computed) numbers may
   * have moved, and the ids are compared instead.
   */
  scoreOf(id: string): number | undefined {
    const n = this.numbered
    if (!n || n.index.changeCount !== n.at) return this.get(id)
    const no = n.index.numberOf(id)
    if (no === undefined) return undefined
    const i = n.docs.indexOf(no)
    return i < 0 ? undefined : this.scores[i]
  }

  get size(): number {
    return this.ids.length
  }

  get(id: string): number | undefined {
    const i = this.ids.indexOf(id)
    return i < 0 ? undefined : this.scores[i]
  }

  has(id: string): boolean {
    return this.ids.includes(id)
  }

  keys(): IterableIterator<string> {
    return this.ids.values()
  }

  values(): IterableIterator<number> {
    return this.scores.values()
  }

  /** the highest score, 0 when nothing matched */
  best(): number {
    let best = 0
    for (const s of this.scores) if (s > best) best = s
    return best
  }

  toMap(): Map<string, number> {
    return new Map(this.ids.map((id, i) => [id, this.scores[i]!]))
  }
}
