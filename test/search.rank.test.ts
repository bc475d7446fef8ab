import { describe, expect, test } from 'bun:test'
import { clip, embeddingTexts, MAX_EMBED_CHARS } from '../src/search/document.ts'
import { textHash } from '../src/search/hash.ts'
import { type KeywordDoc, KeywordScores, LiveKeywordIndex } from '../src/search/keyword-live.ts'
import { ProjectIndex } from '../src/search/project-index.ts'
import { calibrate, cutFor, hybridRank } from '../src/search/rank.ts'
import { stem, terms } from '../src/search/text.ts'
import { KERNEL_FROM_ROWS, VectorStore } from '../src/search/vector-store.ts'

// The ranking the server runs: the live keyword index, the vector store and the project index
// that blends them (the same classes GET /search uses; bench/eval-search.ts measures them
// through the API).

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
const index = new LiveKeywordIndex()
for (const d of docs) index.set(d)

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

describe('LiveKeywordIndex.score', () => {
  test('scores are in [0, 1] and only matching docs appear', () => {
    const s = index.score('late payment fee')
    expect(s.size).toBeGreaterThan(0)
    for (const v of s.values()) {
      expect(v).toBeGreaterThan(0)
      expect(v).toBeLessThanOrEqual(1)
    }
    expect(s.has('dark')).toBe(false)
  })

  test('a query whose words all sit in a short label scores 1; in a longer label, close to 1', () => {
    expect(index.score('dark mode').get('dark')).toBeCloseTo(1, 6)
    const s = index.score('SEPA direct debit')
    expect(s.get('sepa')!).toBeGreaterThan(0.75)
    expect([...s.keys()]).toEqual(['sepa'])
  })

  test('label matches beat notes matches; repetition saturates', () => {
    const s = index.score('fees')
    expect(s.get('fees')!).toBeGreaterThan(s.get('noisy')!)
    expect(s.get('noisy')!).toBeLessThan(0.8)
  })

  test('words found nowhere lower the score instead of being ignored', () => {
    const full = index.score('dark mode').get('dark')!
    const partial = index.score('dark mode quarterly spreadsheet').get('dark')!
    expect(partial).toBeLessThan(full)
  })

  test('empty or stopword-only queries match nothing', () => {
    expect(index.score('').size).toBe(0)
    expect(index.score('what is the').size).toBe(0)
  })

  test("scoreOf finds a match's score by the index's number, and nothing for a document that did not match or is gone", () => {
    const own = new LiveKeywordIndex()
    for (const d of docs) own.set(d)
    own.set({ id: 'fees', fields: { label: 'Late fees', description: 'A fee on late invoices.' } }) // renumbered: the old number is retired
    const s = own.score('late fee invoices')
    expect(s.size).toBeGreaterThan(1)
    for (const id of s.keys()) expect(s.scoreOf(id)).toBe(s.get(id)!)
    expect(s.scoreOf('dark')).toBeUndefined()
    expect(s.scoreOf('no-such-node')).toBeUndefined()
    expect(KeywordScores.NONE.scoreOf('fees')).toBeUndefined()
  })

  test('scoreOf keeps the scores of the query after the index changed (numbers moved)', () => {
    const own = new LiveKeywordIndex()
    for (const d of docs) own.set(d)
    const s = own.score('late fee invoices')
    const before = [...s.keys()].map((id) => [id, s.get(id)])
    // a write while the vector was computed: a document renumbered, another gone, many added (a full renumbering pass)
    own.set({ id: 'fees', fields: { label: 'Something else entirely' } })
    own.remove('remind')
    for (let i = 0; i < 40; i++) own.set({ id: `extra-${i}`, fields: { label: `late fee item ${i}` } })
    expect(before.map(([id]) => [id, s.scoreOf(id as string)])).toEqual(before)
    expect(s.scoreOf('extra-1')).toBeUndefined()
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

  test("a node's vector is scored; a node still waiting for its vector has no semantic score", () => {
    const idx = new ProjectIndex('p')
    // a node's one text is its label with its description, or its label alone (embeddingTexts)
    const vectors = new Map<string, Float32Array>()
    const give = (data: { label: string; description?: string }, ...vs: Float32Array[]) => {
      const texts = embeddingTexts(data)
      expect(texts).toHaveLength(vs.length)
      for (const [i, t] of texts.entries()) vectors.set(textHash(t), vs[i]!)
    }
    give({ label: 'a', description: 'alpha' }, unit(1, 0))
    give({ label: 'b' }, unit(1, 1))
    idx.upsert({ id: 'a', type: 'task', parentId: null, data: { label: 'a', description: 'alpha' } }, (h) => vectors.get(h))
    idx.upsert({ id: 'b', type: 'task', parentId: null, data: { label: 'b' } }, (h) => vectors.get(h))
    idx.upsert({ id: 'none', type: 'task', parentId: null, data: { label: 'none' } })
    expect(idx.pendingNodes).toBe(1)
    const hits = idx.rank('zzz', unit(1, 0), {
      limit: 10,
      mode: 'semantic',
      semanticRatio: 1,
      calibration: { floor: 0, ceiling: 1 },
      parentWeight: 0,
    })
    expect(hits.map((h) => h.id)).toEqual(['a', 'b'])
    expect(hits[0]!.similarity).toBeCloseTo(1, 6)
    expect(hits[1]!.similarity).toBeCloseTo(Math.SQRT1_2, 5)
  })

  test('a node that repeats a text another node has gets its vector without waiting, and keeps it across an edit', () => {
    const idx = new ProjectIndex('p')
    const vectors = new Map<string, Float32Array>()
    for (const [i, t] of embeddingTexts({ label: 'same' }).entries()) vectors.set(textHash(t), unit(i + 1, 1))
    idx.upsert({ id: 'a', type: 'task', parentId: null, data: { label: 'same' } }, (h) => vectors.get(h))
    // no vector supplied for b: its text is a's, so the index has it
    idx.upsert({ id: 'b', type: 'task', parentId: null, data: { label: 'same' } })
    expect(idx.pendingNodes).toBe(0)
    expect(idx.missingCount).toBe(0)
    expect([...idx.vectorFor(textHash('same'))!]).toEqual([...vectors.get(textHash('same'))!])
    // a's edit lets go of a's vectors; b still has the text, and a new node with it gets it from b
    idx.upsert({ id: 'a', type: 'task', parentId: null, data: { label: 'other' } })
    expect(idx.pendingNodes).toBe(1) // a waits for 'other'
    idx.upsert({ id: 'c', type: 'task', parentId: null, data: { label: 'same' } })
    expect(idx.pendingNodes).toBe(1)
    expect(
      idx
        .nearest(vectors.get(textHash('same'))!, 'task', 0.99, 10)
        .map((n) => n.id)
        .sort(),
    ).toEqual(['b', 'c'])
  })
})

describe('ProjectIndex.rank with a limit', () => {
  // rank() blends only the best `limit` of either side (a blended score is the larger of its
  // two weighted scores); the answer must be the head of the blend of every node.
  const WORDS = 'invoice payment refund reminder export ledger tax report sepa debit fee late'.split(' ')
  let seed = 11
  const rand = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!
  const vector = () => {
    const v = Float32Array.from({ length: 16 }, () => rand() - 0.5)
    const n = Math.hypot(...v)
    return v.map((x) => x / n)
  }
  const options = (limit: number, mode: 'hybrid' | 'keyword' | 'semantic', type?: string) => ({
    limit,
    mode,
    type,
    semanticRatio: 0.4,
    calibration: { floor: 0, ceiling: 0.8 },
    parentWeight: 0.3,
  })

  test('gives the head of the unlimited ranking of the same nodes indexed afresh, in every mode, after moves, edits and deletes', () => {
    const idx = new ProjectIndex('p')
    const ids = Array.from({ length: 300 }, (_, i) => `n${i}`)
    const put = (id: string) => {
      const parentId = rand() < 0.8 ? pick(ids.slice(0, 60)) : null
      const data = {
        label: `${pick(WORDS)} ${pick(WORDS)}`,
        description: rand() < 0.5 ? `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)}` : '',
      }
      idx.upsert({ id, type: rand() < 0.5 ? 'job' : 'task', parentId: parentId === id ? null : parentId, data })
      for (const [hash] of idx.missingTexts(100)) idx.supply(hash, vector())
    }
    for (const id of ids) put(id)
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 15; i++) {
        const id = pick(ids)
        // every other round: moves and edits alone, no deletes
        if (round % 2 && rand() < 0.2) idx.delete(id)
        else put(id) // a new parent, label or description
      }
      // the same nodes and vectors in an index built afresh: what the long-lived one must answer
      const fresh = new ProjectIndex('p')
      for (const { node } of idx.nodes.values()) fresh.upsert(node, (h) => idx.vectorFor(h))
      const q = vector()
      const text = `${pick(WORDS)} ${pick(WORDS)}`
      for (const mode of ['hybrid', 'keyword', 'semantic'] as const)
        for (const type of [undefined, 'job'])
          for (const limit of [1, 5, 20]) {
            const all = fresh.rank(text, q, options(1000, mode, type))
            expect(idx.rank(text, q, options(limit, mode, type))).toEqual(all.slice(0, limit))
          }
    }
  })
})

describe('VectorStore', () => {
  const rand = (seed: number, dims: number) => {
    const v = new Float32Array(dims)
    for (let i = 0; i < dims; i++) v[i] = (Math.sin(seed * 12.9898 + i * 78.233) * 43758.5453) % 1
    const n = Math.hypot(...v)
    return v.map((x) => x / n)
  }
  const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0)

  test('scores every row as the plain cosine within int8 precision (0.005), for odd and large dims, across growth', () => {
    for (const dims of [7, 16, 384, 612, 1536]) {
      const store = new VectorStore(dims)
      const rows = Array.from({ length: 150 }, (_, i) => rand(i, dims)) // past the first capacity of 64
      const slots = rows.map((v) => store.add(v))
      const q = rand(999, dims)
      const got = store.scores(q)
      expect(got.length).toBe(150)
      for (const [i, v] of rows.entries()) expect(Math.abs(got[slots[i]!]! - cosine(q, v))).toBeLessThan(0.005)
      // a stored row reads back as the vector it was, to the same precision
      for (const [i, v] of rows.entries()) expect(cosine(store.row(slots[i]!), v)).toBeGreaterThan(dims >= 384 ? 0.9995 : 0.995)
    }
  })

  test('the integer kernel does not overflow at 3,072 dims, even for a vector whose every component is the largest', () => {
    const dims = 3072
    const uniform = new Float32Array(dims).fill(1 / Math.sqrt(dims))
    for (const filler of [0, KERNEL_FROM_ROWS]) {
      // without filler rows in plain code; with them in the WebAssembly kernel
      const store = new VectorStore(dims)
      for (let i = 0; i < filler; i++) store.add(rand(i, dims))
      const same = store.add(uniform)
      const opposite = store.add(uniform.map((x) => -x))
      const got = store.scores(uniform)
      expect(Math.abs(got[same]! - 1)).toBeLessThan(0.005)
      expect(Math.abs(got[opposite]! + 1)).toBeLessThan(0.005)
    }
  })

  test('moves into the kernel past KERNEL_FROM_ROWS with every row, removed slot and score as before', () => {
    const dims = 384
    const store = new VectorStore(dims)
    const rows = Array.from({ length: KERNEL_FROM_ROWS }, (_, i) => rand(i, dims))
    const slots = rows.map((v) => store.add(v))
    store.remove(slots[5]!)
    const q = rand(4242, dims)
    const small = Float32Array.from(store.scores(q))
    // one more row grows it past the threshold
    const extra = rand(77_777, dims)
    const reused = store.add(extra)
    expect(reused).toBe(slots[5]!)
    const more = Array.from({ length: 10 }, (_, i) => rand(10_000 + i, dims))
    const moreSlots = more.map((v) => store.add(v))
    const big = store.scores(q)
    expect(big.length).toBe(KERNEL_FROM_ROWS + 10)
    for (const [i, v] of rows.entries()) {
      if (i === 5) continue
      expect(Math.abs(big[slots[i]!]! - small[slots[i]!]!)).toBeLessThan(0.001)
      expect(Math.abs(big[slots[i]!]! - cosine(q, v))).toBeLessThan(0.005)
    }
    expect(Math.abs(big[reused]! - cosine(q, extra))).toBeLessThan(0.005)
    for (const [i, v] of more.entries()) expect(Math.abs(big[moreSlots[i]!]! - cosine(q, v))).toBeLessThan(0.005)
    expect(cosine(store.row(slots[0]!), rows[0]!)).toBeGreaterThan(0.9995)
  })

  test('a removed row scores 0 and its slot is reused', () => {
    const store = new VectorStore(8)
    const a = store.add(rand(1, 8))
    store.add(rand(2, 8))
    store.remove(a)
    expect(store.scores(rand(1, 8))[a]).toBe(0)
    expect(store.size).toBe(1)
    expect(store.add(rand(3, 8))).toBe(a)
  })

  test('refuses a vector of the wrong length', () => {
    expect(() => new VectorStore(8).add(new Float32Array(4))).toThrow(/dims/)
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
    const hits = hybridRank({ keyword: index.score('reminder emails').toMap(), semantic: new Map(), semanticRatio: 0.5 })
    expect(hits[0]!.id).toBe('remind')
  })
})

describe('clip', () => {
  test('keeps short texts, cuts long ones at a word boundary', () => {
    expect(clip('pay by link', 20)).toBe('pay by link')
    expect(clip('pay by link today', 12)).toBe('pay by link')
    expect(clip('x'.repeat(50), 10)).toBe('x'.repeat(10))
  })
  test('a node is embedded as one text: its label with its description, else whichever it has', () => {
    expect(embeddingTexts({ label: ' Pay by link ', description: 'Invoices carry a checkout link.' })).toEqual([
      'Pay by link. Invoices carry a checkout link.',
    ])
    expect(embeddingTexts({ label: 'Pay by link', description: '  ' })).toEqual(['Pay by link'])
    expect(embeddingTexts({ label: '', description: 'Invoices carry a checkout link.' })).toEqual(['Invoices carry a checkout link.'])
    // notes and measure are the keyword index's alone
    expect(embeddingTexts({ label: 'Pay by link', notes: 'Stripe', measure: 'share paid' })).toEqual(['Pay by link'])
  })
  test('embedding texts never exceed MAX_EMBED_CHARS', () => {
    const texts = embeddingTexts({ label: 'Bulk', description: 'word '.repeat(5000) })
    expect(texts).toHaveLength(1)
    expect(texts[0]!.startsWith('Bulk. word')).toBe(true)
    expect(texts[0]!.length).toBeLessThanOrEqual(MAX_EMBED_CHARS)
  })
})

describe('cutFor', () => {
  test('is the limit-th largest score, ties included, and lets everything pass when there are no more than limit', () => {
    let seed = 7
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647
    for (const n of [0, 1, 5, 19, 20, 21, 500, 3000])
      for (const limit of [1, 5, 20]) {
        // rounded to two places, so many scores tie at the cut
        const values = Array.from({ length: n }, () => Math.round(random() * 100) / 100)
        const sorted = [...values].sort((a, b) => a - b)
        const expected = n > limit ? sorted[n - limit]! : Number.NEGATIVE_INFINITY
        expect([n, limit, cutFor(values, limit)]).toEqual([n, limit, expected])
        expect(cutFor(new Map(values.map((v, i) => [i, v])).values(), limit)).toBe(expected)
      }
  })
})
