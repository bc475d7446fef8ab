// Cosine scores: the WebAssembly SIMD dot kernel the vector store runs (source: dot.wat; int8
// rows against an int16 query, in integers, several times the plain JS loop, which keeps an approximate
// index such as HNSW unnecessary at Arbor's scale), and the mapping of an embedder's cosines
// into [0, 1].

/** dot.wat compiled with wabt's wat2wasm, base64. */
const DOT_WASM =
  'AGFzbQEAAAABCQFgBX9/f39/AAMCAQAFAwEAAQcVAgZtZW1vcnkCAAhzY29yZUFsbAAACr4BAbsBBAJ/AXsCfwF7IAEgAkEBdGohCCAAIQkCQANAIAUgA08NAf0MAAAAAAAAAAAAAAAAAAAAACEHIAEhBgJAA0AgBiAITw0BIAn9AAQAIQogByAK/YcBIAb9AAQA/boB/a4BIQcgByAK/YgBIAb9AAQQ/boB/a4BIQcgCUEQaiEJIAZBIGohBgwACwsgBCAFQQJ0aiAH/RsAsiAH/RsBspIgB/0bArIgB/0bA7KSkjgCACAFQQFqIQUMAAsLCw=='

export interface Kernel {
  memory: WebAssembly.Memory
  scoreAll(data: number, q: number, dims: number, rows: number, out: number): void
}

export function loadKernel(): Kernel | undefined {
  try {
    const bytes = Buffer.from(DOT_WASM, 'base64')
    if (!WebAssembly.validate(bytes)) return undefined
    return new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports as unknown as Kernel
  } catch {
    return undefined // no WebAssembly here: the callers compute the dot products in plain code
  }
}

export interface SemanticCalibration {
  /** Cosine at or below which a document counts as unrelated (similarity 0). */
  floor: number
  /** Cosine at or above which a document counts as a perfect match (similarity 1). */
  ceiling: number
}

/**
 * Cosine -> [0, 1] mapping. Embedders differ a lot in where "unrelated" and
 * "same meaning" fall (for the built-in encoder unrelated texts sit around
 * 0.1-0.3 and close paraphrases at 0.6-0.8), and the max-blend compares these
 * numbers with keyword scores directly, so each embedder needs its own range.
 */
export const DEFAULT_CALIBRATION: SemanticCalibration = { floor: 0.1, ceiling: 0.8 }

export function calibrate(cosine: number, c: SemanticCalibration = DEFAULT_CALIBRATION): number {
  return clamp01((cosine - c.floor) / (c.ceiling - c.floor))
}

export function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`vector length mismatch: ${a.length} vs ${b.length}`)
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!
  return s
}

function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : Number.isFinite(x) ? x : 0
}
