// Sentence vectors from GloVe word vectors: a SIF-weighted mean (Arora et
// al. 2017, "A simple but tough-to-beat baseline for sentence embeddings").
// Frequent words get little weight (a / (a + p(w))), with p(w) estimated from
// the vocabulary's frequency rank by Zipf's law, and the shared "common
// discourse" direction is projected out so unrelated sentences stop looking
// alike. Words missing from the vocabulary fall back to close in-vocabulary
// forms, then to hashed character n-grams so an unknown product name in a
// query still lines up with the same name in a document.

import { STOPWORDS, words } from '../text.ts'
import { type Embedder, l2normalize } from './types.ts'
import { loadWordVectors, releaseWordVectors, type WordVectors } from './wordvectors.ts'

/** how long the word vectors stay loaded with nothing to embed (reading them again takes a moment) */
const IDLE_MS = 60_000
let idle: ReturnType<typeof setTimeout> | undefined

export interface GloveOptions {
  /** SIF smoothing constant; smaller = stronger down-weighting of frequent words. */
  sifA?: number
  /** Project out the common direction. */
  removeCommon?: boolean
  /**
   * Scale of the hashed n-gram vector of an unknown word. Its norm is about
   * 2.9x this, so the default makes it weigh about as much as a rare real
   * word (GloVe vectors of rare words have norms around 5-7).
   */
  oovWeight?: number
  cacheDir?: string
}

export class GloveEmbedder implements Embedder {
  readonly id = 'builtin-glove100-sif-v1'
  readonly dims = 100
  private common?: Float32Array
  private harmonic = 1

  constructor(private readonly opts: GloveOptions = {}) {}

  async embed(texts: string[]): Promise<Float32Array[]> {
    clearTimeout(idle)
    const wv = await loadWordVectors(this.opts.cacheDir)
    if (!this.common) this.prepare(wv)
    const out = texts.map((t) => this.embedOne(wv, t))
    // the vocabulary and its vectors are tens of MB: an idle server lets them go
    clearTimeout(idle)
    idle = setTimeout(releaseWordVectors, IDLE_MS)
    idle.unref?.()
    return out
  }

  /** Zipf normaliser and common direction, computed once from the vocabulary. */
  private prepare(wv: WordVectors): void {
    this.harmonic = Math.log(wv.size) + 0.5772
    // The dominant shared direction: the SIF-weighted mean of the 30k most
    // frequent words, a fixed stand-in for SIF's per-corpus first principal
    // component, so vectors do not depend on which texts are embedded together.
    const c = new Float32Array(this.dims)
    for (let r = 0; r < Math.min(30000, wv.size); r++) wv.addRow(r, this.sif(r), c)
    this.common = l2normalize(c)
  }

  private sif(rank: number): number {
    const a = this.opts.sifA ?? 1e-3
    const p = 1 / ((rank + 1) * this.harmonic)
    return a / (a + p)
  }

  private embedOne(wv: WordVectors, text: string): Float32Array {
    const v = new Float32Array(this.dims)
    for (const w of words(text)) {
      if (STOPWORDS.has(w)) continue
      const row = lookup(wv, w)
      if (row >= 0) wv.addRow(row, this.sif(row), v)
      else if (/\p{L}/u.test(w)) addHashed(w, this.opts.oovWeight ?? 2.5, v)
    }
    if (this.opts.removeCommon ?? true) {
      const c = this.common!
      let dot = 0
      for (let i = 0; i < v.length; i++) dot += v[i]! * c[i]!
      for (let i = 0; i < v.length; i++) v[i] = v[i]! - dot * c[i]!
    }
    return l2normalize(v)
  }
}

/** Row of `w` or of a close variant of it (plural, tense, British spelling), else -1. */
function lookup(wv: WordVectors, w: string): number {
  const direct = wv.indexOf(w)
  if (direct >= 0) return direct
  const base = w.replace(/'s?$/, '').replace(/'/g, '')
  const candidates = [
    base,
    base.replace(/ies$/, 'y'),
    base.replace(/e?s$/, ''),
    base.replace(/ing$/, ''),
    base.replace(/ing$/, 'e'),
    base.replace(/e?d$/, ''),
    base.replace(/ly$/, ''),
    base.replace(/is(e|ed|es|ing|ation)$/, 'iz$1'),
    base.replace(/our$/, 'or'),
    base.replace(/\.+/g, ''),
  ]
  for (const c of candidates) {
    if (c.length < 3 || c === w) continue
    const row = wv.indexOf(c)
    if (row >= 0) return row
  }
  return -1
}

/** Add hashed character trigram vectors of an unknown word (fastText-style fallback). */
function addHashed(word: string, weight: number, out: Float32Array): void {
  const s = `<${word}>`
  const n = Math.max(1, s.length - 2)
  for (let i = 0; i + 3 <= s.length; i++) {
    let seed = fnv1a(s.slice(i, i + 3))
    for (let d = 0; d < out.length; d++) {
      seed = (seed + 0x6d2b79f5) | 0 // mulberry32 step: cheap deterministic pseudo-random numbers
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
      t ^= t + Math.imul(t ^ (t >>> 7), 61 | t)
      const r = ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5
      out[d] = out[d]! + (weight * r) / Math.sqrt(n)
    }
  }
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
  return h >>> 0
}
