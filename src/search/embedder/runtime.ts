// The embedder the server uses, chosen by configuration, behind a queue: one model call at a
// time (the built-in model is single-threaded WebAssembly; a remote endpoint has rate limits),
// queries ahead of background work, and a small cache of query vectors.

import type { Config } from '../../config.ts'
import { DEFAULT_SEMANTIC_RATIO } from '../rank.ts'
import type { SemanticCalibration } from '../vectors.ts'
import { createBuiltinEmbedder } from './builtin.ts'
import { checkMiniLm, MiniLmEmbedder } from './minilm.ts'
import { OpenAIEmbedder } from './openai.ts'
import type { Embedder } from './types.ts'

export interface EmbedderChoice {
  embedder: Embedder
  /** cosine -> [0, 1] mapping for this embedder's cosines (see vectors.ts) */
  calibration: SemanticCalibration
  /** raw cosine of two full texts at or above which an add is flagged as a possible duplicate */
  duplicateCosine: number
  /** the hybrid blend for this embedder's calibrated scores: 0 keyword only, 1 semantic only */
  semanticRatio: number
  remote: boolean
  /** set when the built-in sentence model was wanted but its files are missing: what `_meta.search` and the log say */
  fallback?: string
}

/**
 * EMBEDDINGS_URL set: an OpenAI-compatible endpoint; otherwise the offline built-in model.
 * The built-in numbers are measured on the dev set (bench/search-core, bench/eval-search.ts).
 * A remote model's cosines spread differently and cannot be measured here; its defaults
 * follow what OpenAI-style models typically give (unrelated ~0.1-0.25, paraphrases 0.5-0.8).
 */
export function chooseEmbedder(
  config: Pick<Config, 'embeddingsUrl' | 'embeddingsModel' | 'embeddingsApiKey' | 'cacheDir' | 'embeddingsModelDir' | 'onnxRuntime'>,
): EmbedderChoice {
  if (config.embeddingsUrl)
    return {
      embedder: new OpenAIEmbedder({ url: config.embeddingsUrl, model: config.embeddingsModel!, apiKey: config.embeddingsApiKey }),
      calibration: { floor: 0.15, ceiling: 0.75 },
      duplicateCosine: 0.92,
      semanticRatio: 0.5,
      remote: true,
    }
  const minilm = checkMiniLm(config.embeddingsModelDir)
  if ('model' in minilm)
    return {
      embedder: new MiniLmEmbedder(minilm.model, config.onnxRuntime),
      calibration: CALIBRATIONS[minilm.model.recipe.pooling === 'cls' ? 'bge' : minilm.model.recipe.queryPrefix ? 'e5' : 'minilm'],
      duplicateCosine: DUPLICATE_COSINE[minilm.model.recipe.pooling === 'cls' ? 'bge' : minilm.model.recipe.queryPrefix ? 'e5' : 'minilm'],
      // dev set sweep (bench/eval-search.ts --sweep): 0.5 is where paraphrase and keyword recall both peak
      semanticRatio: 0.5,
      remote: false,
    }
  return {
    embedder: createBuiltinEmbedder(undefined, config.cacheDir),
    calibration: { floor: 0.1, ceiling: 0.8 },
    duplicateCosine: 0.86,
    semanticRatio: DEFAULT_SEMANTIC_RATIO,
    remote: false,
    fallback:
      'mismatch' in minilm
        ? `${minilm.mismatch} is not the pinned file (its SHA-256 differs; run: npm run model:fetch); using the smaller USE-lite + GloVe model`
        : `the sentence model is not in ${config.embeddingsModelDir} (run: npm run model:fetch); using the smaller USE-lite + GloVe model`,
  }
}

/** all-MiniLM-L6-v2's cosines: unrelated texts ~0.0-0.15, paraphrases 0.4-0.8 (dev set, bench/eval-search.ts). */
export const MINILM_CALIBRATION: SemanticCalibration = { floor: 0.05, ceiling: 0.75 }

/**
 * The candidates of issue 57 (minilm.ts: KNOWN_MODELS) spread their cosines otherwise: every
 * query against every dev-set node, median and standard deviation, MiniLM 0.13 / 0.11, bge
 * 0.50 / 0.064, e5 0.77 / 0.028. Each floor and ceiling is MiniLM's moved to the same places in
 * its model's distribution (0.68 deviations below the median, 5.6 above): from the spread of all
 * pairs alone, not from which answers are relevant. (MiniLM's floor and ceiling clamp every e5
 * cosine to 1, and its semantic-only ranking to a tie.)
 */
const CALIBRATIONS: Record<'minilm' | 'bge' | 'e5', SemanticCalibration> = {
  minilm: MINILM_CALIBRATION,
  bge: { floor: 0.45, ceiling: 0.86 },
  e5: { floor: 0.749, ceiling: 0.925 },
}
/** the near-duplicate threshold: bench/eval-search.ts --duplicates, the highest that flags no distinct pair of the dev set and keeps most re-entries */
const DUPLICATE_COSINE: Record<'minilm' | 'bge' | 'e5', number> = { minilm: 0.9, bge: 0.88, e5: 0.92 }

type Job = { texts: string[]; query?: boolean; resolve: (v: Float32Array[]) => void; reject: (e: unknown) => void }

export class EmbedQueue {
  private readonly high: Job[] = []
  private readonly low: Job[] = []
  private running = false
  private readonly cache = new Map<string, Float32Array>()

  constructor(
    readonly embedder: Embedder,
    private readonly cacheSize = 512,
  ) {}

  get id(): string {
    return this.embedder.id
  }

  /** One query vector, ahead of background work; recent queries come from the cache. */
  async query(text: string): Promise<Float32Array> {
    const hit = this.cache.get(text)
    if (hit) {
      this.cache.delete(text) // re-insert: most recently used last
      this.cache.set(text, hit)
      return hit
    }
    const [v] = await this.run(this.high, [text], true)
    this.cache.set(text, v!)
    if (this.cache.size > this.cacheSize) this.cache.delete(this.cache.keys().next().value!)
    return v!
  }

  /** Vectors for texts; `urgent` puts them ahead of background work. */
  embed(texts: string[], urgent = false): Promise<Float32Array[]> {
    return this.run(urgent ? this.high : this.low, texts)
  }

  private run(list: Job[], texts: string[], query = false): Promise<Float32Array[]> {
    return new Promise((resolve, reject) => {
      list.push({ texts, query, resolve, reject })
      void this.pump()
    })
  }

  private async pump(): Promise<void> {
    if (this.running) return
    this.running = true
    try {
      for (let job = this.high.shift() ?? this.low.shift(); job; job = this.high.shift() ?? this.low.shift()) {
        try {
          const { embedder } = this
          job.resolve(await (job.query && embedder.embedQueries ? embedder.embedQueries(job.texts) : embedder.embed(job.texts)))
        } catch (e) {
          job.reject(e)
        }
      }
    } finally {
      this.running = false
    }
  }
}

/** `promise`, or undefined once `ms` have passed (the work goes on; its result is dropped here). */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}
