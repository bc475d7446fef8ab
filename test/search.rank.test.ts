import { describe, expect, test } from 'bun:test'
import { clip, embeddingTexts, MAX_EMBED_CHARS } from '../src/search/document.ts'
import {
  buildKeywordIndex,
  buildVectorIndex,
  calibrate,
  hybridRank,
  type KeywordDoc,
  scoreKeyword,
  scoreVectors,
  semanticScores,
} from '../src/search/rank.ts'
import { stem, terms } from '../src/search/text.ts'

const docs: KeywordDoc[] = [
  { id: 'sepa', fields: { label: 'Payers in the eurozone can pay by SEPA Direct Debit' } },
  { id: 'fees', fields: { label: 'Late-payment fees', description: 'Charge a fee on invoices paid after the due date.' } },
  {
    id: 'remind',
    fields: {
      label: 'Automated dunning',
      description: 'Reminder emails go out before the due date.',
      notes: 'Late payers get a firmer tone.',
    },
  },
  { id: 'dark', fields: { label: 'Dark mode', description: 'Several users keep requesting a dark theme.' } },
  { id: 'noisy', fields: { label: 'Misc', notes: 'fee fee fee fee fee fee fee fee fee fee fee fee' } },
]
const index = buildKeywordIndex(docs)

describe('text', () => {
  test('stemming merges inflections', () => {
    expect(stem('invoices')).toBe(stem('invoice'))
    expect(stem('reminders')).toBe(stem('reminder'))
    expect(stem('paying')).toBe(stem('pays'))
    expect(stem('stopped')).toBe('stop')
  })
  test('terms drop stopwords, punctuation and possessives', () => {
    expect(terms("Where do we track the customer's churn-risk?")).toEqual(['track', 'customer', 'churn', 'risk'])
  })
})

describe('scoreKeyword', () => {
  test('scores are in [0, 1] and only matching docs appear', () => {
    const s = scoreKeyword(index, 'late payment fee')
    expect(s.size).toBeGreaterThan(0)
    for (const v of s.values()) {
      expect(v).toBeGreaterThan(0)
      expect(v).toBeLessThanOrEqual(1)
    }
    expect(s.has('dark')).toBe(false)
  })

  test('a query whose words all sit in a short label scores 1; in a longer label, close to 1', () => {
    expect(scoreKeyword(index, 'dark mode').get('dark')).toBeCloseTo(1, 6)
    const s = scoreKeyword(index, 'SEPA direct debit')
    expect(s.get('sepa')!).toBeGreaterThan(0.75)
    expect([...s.keys()]).toEqual(['sepa'])
  })

  test('label matches beat notes matches; repetition saturates', () => {
    const s = scoreKeyword(index, 'fees')
    expect(s.get('fees')!).toBeGreaterThan(s.get('noisy')!)
    expect(s.get('noisy')!).toBeLessThan(0.8)
  })

  test('words found nowhere lower the score instead of being ignored', () => {
    const full = scoreKeyword(index, 'dark mode').get('dark')!
    const partial = scoreKeyword(index, 'dark mode quarterly spreadsheet').get('dark')!
    expect(partial).toBeLessThan(full)
  })

  test('empty or stopword-only queries match nothing', () => {
    expect(scoreKeyword(index, '').size).toBe(0)
    expect(scoreKeyword(index, 'what is the').size).toBe(0)
  })

  test('a query over 10,000 docs stays fast', () => {
    const words = 'invoice payment reminder fee client export tax report bank card sync approval'.split(' ')
    const big = Array.from({ length: 10_000 }, (_, i) => ({
      id: `d${i}`,
      fields: {
        label: `${words[i % 12]} ${words[(i * 7) % 12]} item ${i}`,
        description: `${words[(i * 5) % 12]} for ${words[(i * 3) % 12]} number ${i % 97}`,
      },
    }))
    const bigIndex = buildKeywordIndex(big)
    scoreKeyword(bigIndex, 'invoice reminder fee') // warm
    const t0 = performance.now()
    for (let i = 0; i < 20; i++) scoreKeyword(bigIndex, 'invoice reminder fee for client')
    expect((performance.now() - t0) / 20).toBeLessThan(20) // a few ms in practice; loose for slow CI
  })
})

describe('semantic scores', () => {
  const unit = (...xs: number[]) => {
    const n = Math.hypot(...xs)
    return Float32Array.from(xs.map((x) => x / n))
  }
  test('calibration maps cosine linearly into [0, 1] and clamps', () => {
    const c = { floor: 0.2, ceiling: 0.7 }
    expect(calibrate(0.2, c)).toBe(0)
    expect(calibrate(-1, c)).toBe(0)
    expect(calibrate(0.45, c)).toBeCloseTo(0.5, 6)
    expect(calibrate(0.7, c)).toBe(1)
    expect(calibrate(0.99, c)).toBe(1)
  })
  test("a document's best vector counts", () => {
    const q = unit(1, 0)
    const s = semanticScores(
      q,
      [
        { id: 'a', vectors: [unit(0, 1), unit(1, 0)] },
        { id: 'b', vectors: [unit(1, 1)] },
        { id: 'none', vectors: [] },
      ],
      { floor: 0, ceiling: 1 },
    )
    expect(s.get('a')).toBeCloseTo(1, 6)
    expect(s.get('b')).toBeCloseTo(Math.SQRT1_2, 5)
    expect(s.has('none')).toBe(false)
  })
})

describe('vector index', () => {
  const rand = (seed: number, dims: number) => {
    const v = new Float32Array(dims)
    for (let i = 0; i < dims; i++) v[i] = (Math.sin(seed * 12.9898 + i * 78.233) * 43758.5453) % 1
    const n = Math.hypot(...v)
    return v.map((x) => x / n)
  }
  test('matches the plain cosine scores, best vector per doc, with filter and odd dims', () => {
    for (const dims of [7, 16, 612]) {
      const docs = Array.from({ length: 50 }, (_, i) => ({ id: `d${i}`, vectors: [rand(i, dims), rand(i + 100, dims)] }))
      const q = rand(999, dims)
      const cal = { floor: -1, ceiling: 1 }
      const expected = semanticScores(q, docs, cal)
      const index = buildVectorIndex(docs)
      const got = scoreVectors(index, q, cal)
      expect(got.size).toBe(50)
      for (const [id, v] of expected) expect(got.get(id)!).toBeCloseTo(v, 5)
      const plainJs = scoreVectors({ ...index, kernel: undefined }, q, cal) // fallback without WebAssembly SIMD
      for (const [id, v] of expected) expect(plainJs.get(id)!).toBeCloseTo(v, 5)
      const even = scoreVectors(index, q, cal, (id) => Number(id.slice(1)) % 2 === 0)
      expect([...even.keys()].every((id) => Number(id.slice(1)) % 2 === 0)).toBe(true)
      expect(even.size).toBe(25)
    }
  })
  test('empty index and dimension mismatch', () => {
    expect(scoreVectors(buildVectorIndex([]), new Float32Array(3)).size).toBe(0)
    const index = buildVectorIndex([{ id: 'a', vectors: [rand(1, 8)] }])
    expect(() => scoreVectors(index, new Float32Array(4))).toThrow(/dims/)
  })
  test('10,000 docs x 2 vectors x 612 dims scores in a few ms', () => {
    const docs = Array.from({ length: 10_000 }, (_, i) => ({ id: `d${i}`, vectors: [rand(i, 612), rand(-i, 612)] }))
    const index = buildVectorIndex(docs)
    const q = rand(7, 612)
    scoreVectors(index, q) // warm
    const t0 = performance.now()
    for (let i = 0; i < 10; i++) scoreVectors(index, q)
    expect((performance.now() - t0) / 10).toBeLessThan(50) // ~6 ms here; loose for slow CI
  })
})

describe('hybridRank', () => {
  const keyword = new Map([
    ['k1', 0.9],
    ['k2', 0.4],
    ['both', 0.5],
  ])
  const semantic = new Map([
    ['s1', 0.8],
    ['s2', 0.3],
    ['both', 0.6],
    ['k2', 0.1],
  ])

  test('ratio 0 is keyword only, in keyword order, with keyword scores', () => {
    const hits = hybridRank({ keyword, semantic, semanticRatio: 0 })
    expect(hits.map((h) => h.id)).toEqual(['k1', 'both', 'k2'])
    expect(hits.map((h) => h.similarity)).toEqual([0.9, 0.5, 0.4])
  })

  test('ratio 1 is semantic only, in semantic order, with semantic scores', () => {
    const hits = hybridRank({ keyword, semantic, semanticRatio: 1 })
    expect(hits.map((h) => h.id)).toEqual(['s1', 'both', 's2', 'k2'])
    expect(hits[0]!.similarity).toBeCloseTo(0.8, 6)
  })

  test('in between, each doc takes its better weighted score (Meilisearch merge)', () => {
    const hits = hybridRank({ keyword, semantic, semanticRatio: 0.5 })
    expect(hits.map((h) => h.id)).toEqual(['k1', 's1', 'both', 'k2', 's2'])
    const both = hits.find((h) => h.id === 'both')!
    expect(both.similarity).toBeCloseTo(0.6, 6) // max(0.5, 0.6), not the sum
    expect(both.keyword).toBe(0.5)
    expect(both.semantic).toBe(0.6)
  })

  test('similarities are in [0, 1] and descending for any ratio', () => {
    const loud = new Map([
      ['x', 7],
      ['y', -3],
    ]) // out-of-range input is clamped
    for (const r of [0, 0.1, 0.25, 0.5, 0.75, 0.9, 1]) {
      const hits = hybridRank({ keyword: loud, semantic, semanticRatio: r })
      for (const h of hits) {
        expect(h.similarity).toBeGreaterThan(0)
        expect(h.similarity).toBeLessThanOrEqual(1)
      }
      for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.similarity).toBeGreaterThanOrEqual(hits[i]!.similarity)
    }
  })

  test('ties are broken by the other source, then by id', () => {
    const hits = hybridRank({
      keyword: new Map([
        ['a', 0.5],
        ['b', 0.5],
        ['c', 0.5],
      ]),
      semantic: new Map([
        ['b', 0.2],
        ['c', 0.2],
      ]),
      semanticRatio: 0.3,
    })
    expect(hits.map((h) => h.id)).toEqual(['b', 'c', 'a'])
  })

  test('limit and minSimilarity trim the list', () => {
    expect(hybridRank({ keyword, semantic, semanticRatio: 0.5, limit: 2 })).toHaveLength(2)
    const hits = hybridRank({ keyword, semantic, semanticRatio: 0.5, minSimilarity: 0.5 })
    expect(hits.every((h) => h.similarity >= 0.5)).toBe(true)
  })

  test('end to end: keyword index feeds the blend', () => {
    const hits = hybridRank({ keyword: scoreKeyword(index, 'reminder emails'), semantic: new Map(), semanticRatio: 0.5 })
    expect(hits[0]!.id).toBe('remind')
  })
})

describe('clip', () => {
  test('keeps short texts, cuts long ones at a word boundary', () => {
    expect(clip('pay by link', 20)).toBe('pay by link')
    expect(clip('pay by link today', 12)).toBe('pay by link')
    expect(clip('x'.repeat(50), 10)).toBe('x'.repeat(10))
  })
  test('embedding texts never exceed MAX_EMBED_CHARS', () => {
    const texts = embeddingTexts({ label: 'Bulk', description: 'word '.repeat(5000) })
    expect(texts[0]).toBe('Bulk')
    expect(texts[1]!.startsWith('Bulk. word')).toBe(true)
    expect(texts[1]!.length).toBeLessThanOrEqual(MAX_EMBED_CHARS)
  })
})
