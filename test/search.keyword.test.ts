import { describe, expect, test } from 'bun:test'
import { DEFAULT_FIELD_WEIGHTS, type KeywordDoc, LiveKeywordIndex } from '../src/search/keyword-live.ts'
import { terms } from '../src/search/text.ts'

// The keyword index keeps its numbers in typed arrays (documents and terms numbered, retired
// numbers skipped until a full pass). These tests hold it to the plain definition: a Map of
// credits per document, computed the same way at the same moments, after long random runs of
// adds, replacements and removals.

/** The definition, written plainly: credits per document in Maps, postings as Maps. */
class PlainIndex {
  docs = new Map<string, { fields: Record<string, string[]>; credits: Map<string, number> }>()
  lengthSum: Record<string, number> = {}
  fieldCount: Record<string, number> = {}
  sizeAtLastPass = 0
  /** documents added since the last full pass, live or not (the index's numbers handed out) */
  handedOut = 0
  maxWeight = Math.max(...Object.values(DEFAULT_FIELD_WEIGHTS))

  set(doc: KeywordDoc) {
    this.remove(doc.id)
    const fields: Record<string, string[]> = {}
    for (const [name, text] of Object.entries(doc.fields)) {
      const toks = text ? terms(text) : []
      if (toks.length === 0) continue
      fields[name] = toks
      this.lengthSum[name] = (this.lengthSum[name] ?? 0) + toks.length
      this.fieldCount[name] = (this.fieldCount[name] ?? 0) + 1
    }
    this.docs.set(doc.id, { fields, credits: this.credits(fields) })
    this.handedOut++
    if (this.docs.size >= 2 * this.sizeAtLastPass + 16) this.pass()
  }

  remove(id: string) {
    const old = this.docs.get(id)
    if (!old) return
    for (const [name, toks] of Object.entries(old.fields)) {
      this.lengthSum[name]! -= toks.length
      this.fieldCount[name]! -= 1
    }
    this.docs.delete(id)
    const n = this.docs.size
    if (n * 2 < this.sizeAtLastPass || this.handedOut > 2 * n + 1024) this.pass()
  }

  score(query: string): Map<string, number> {
    const out = new Map<string, number>()
    const n = this.docs.size
    let total = 0
    for (const t of new Set(terms(query))) {
      const holders = [...this.docs].filter(([, d]) => d.credits.has(t))
      const idf = Math.log(1 + (n - holders.length + 0.5) / (holders.length + 0.5))
      total += idf
      for (const [id, d] of holders) out.set(id, (out.get(id) ?? 0) + idf * d.credits.get(t)!)
    }
    for (const [id, s] of out) out.set(id, Math.min(1, s / total))
    return out
  }

  credits(fields: Record<string, string[]>) {
    const credit = new Map<string, number>()
    for (const [name, toks] of Object.entries(fields)) {
      const norm = 1 - 0.3 + (0.3 * toks.length) / (this.lengthSum[name]! / this.fieldCount[name]!)
      const share = DEFAULT_FIELD_WEIGHTS[name]! / this.maxWeight
      const tf = new Map<string, number>()
      for (const t of toks) tf.set(t, (tf.get(t) ?? 0) + 1)
      for (const [t, f] of tf) credit.set(t, (credit.get(t) ?? 0) + share * Math.min(1, ((f / norm) * 2.2) / (f / norm + 1.2)))
    }
    for (const [t, c] of credit) credit.set(t, Math.min(1, c))
    return credit
  }

  pass() {
    for (const d of this.docs.values()) d.credits = this.credits(d.fields)
    this.sizeAtLastPass = this.docs.size
    this.handedOut = this.docs.size
  }
}

const WORDS = 'invoice payment refund reminder export ledger tax report dark mode sepa debit fee late bank feed'.split(' ')
let seed = 7
const rand = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32
const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!
const phrase = (n: number) => Array.from({ length: 1 + Math.floor(rand() * n) }, () => pick(WORDS)).join(' ')
const randomDoc = (id: string): KeywordDoc => ({
  id,
  fields: {
    label: phrase(5),
    description: rand() < 0.5 ? phrase(12) : null,
    notes: rand() < 0.2 ? phrase(20) : undefined,
    measure: rand() < 0.1 ? phrase(4) : '',
  },
})

function expectSameScores(index: LiveKeywordIndex, plain: PlainIndex, queries: string[]) {
  expect(index.size).toBe(plain.docs.size)
  for (const q of queries) {
    const got = index.score(q)
    const want = plain.score(q)
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort())
    for (const [id, s] of want) expect(got.get(id)!).toBeCloseTo(s, 5)
  }
}

describe('LiveKeywordIndex against its plain definition', () => {
  test('the same scores after thousands of adds, edits and removals, through every kind of full pass', () => {
    const index = new LiveKeywordIndex()
    const plain = new PlainIndex()
    const ids = Array.from({ length: 400 }, (_, i) => `n${i}`)
    const queries = ['invoice', 'late fee', 'sepa debit export', 'dark mode report', 'nothing here', 'tax tax ledger']
    for (let step = 0; step < 6000; step++) {
      const id = pick(ids)
      // grow, then churn (replacing the same documents retires numbers), then shrink
      const removeShare = step < 2000 ? 0.1 : step < 4000 ? 0.4 : 0.8
      if (rand() < removeShare) {
        index.remove(id)
        plain.remove(id)
      } else {
        const doc = randomDoc(id)
        index.set(doc)
        plain.set(doc)
      }
      if (step % 500 === 499) expectSameScores(index, plain, queries)
    }
    expectSameScores(index, plain, queries)
  })

  test('a document removed or replaced is gone from every term it held', () => {
    const index = new LiveKeywordIndex()
    index.set({ id: 'a', fields: { label: 'late fee' } })
    index.set({ id: 'b', fields: { label: 'late invoice' } })
    index.set({ id: 'a', fields: { label: 'dark mode' } })
    expect([...index.score('fee').keys()]).toEqual([])
    expect([...index.score('late').keys()]).toEqual(['b'])
    index.remove('b')
    expect(index.score('late').size).toBe(0)
    expect(index.has('b')).toBe(false)
    expect(index.size).toBe(1)
    expect(index.score('dark mode').get('a')).toBeCloseTo(1, 6)
  })

  test('`allow` leaves out documents before they are scored', () => {
    const index = new LiveKeywordIndex()
    for (const id of ['x1', 'x2', 'y1']) index.set({ id, fields: { label: 'refund ledger' } })
    expect([...index.score('refund', (id) => id.startsWith('x')).keys()]).toEqual(['x1', 'x2'])
  })
})
