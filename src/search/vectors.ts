// Cosine scores: the WebAssembly SIMD dot kernel the vector store runs (source: dot.wat; int8
// rows against an int16 query, in integers, several times the plain JS loop, which keeps an approximate
// index such as HNSW unnecessary at Arbor's scale), and the mapping of an embedder's cosines
// into [0, 1].

/** dot.wat compiled with wabt's wat2wasm, base64. */
const DOT_WASM =
  'AGFzbQEAAAABDgJgAXsBfWAFf39/f38AAwMCAAEFAwEAAQcVAgZtZW1vcnkCAAhzY29yZUFsbAABCtgEAh0AIAD9GwCyIAD9GwGykiAA/RsCsiAA/RsDspKSC7cEAgR/B3sgACEHAkADQCAFQQRqIANLDQH9DAAAAAAAAAAAAAAAAAAAAAAhCf0MAAAAAAAAAAAAAAAAAAAAACEK/QwAAAAAAAAAAAAAAAAAAAAAIQv9DAAAAAAAAAAAAAAAAAAAAAAhDEEAIQYgASEIAkADQCAGIAJPDQEgCP0ABAAhDSAI/QAEECEOIAcgBmr9AAQAIQ8gCSAP/YcBIA39ugEgD/2IASAO/boB/a4B/a4BIQkgByACaiAGav0ABAAhDyAKIA/9hwEgDf26ASAP/YgBIA79ugH9rgH9rgEhCiAHIAJBAXRqIAZq/QAEACEPIAsgD/2HASAN/boBIA/9iAEgDv26Af2uAf2uASELIAcgAkEDbGogBmr9AAQAIQ8gDCAP/YcBIA39ugEgD/2IASAO/boB/a4B/a4BIQwgBkEQaiEGIAhBIGohCAwACwsgBCAFQQJ0aiAJEAA4AgAgBCAFQQJ0aiAKEAA4AgQgBCAFQQJ0aiALEAA4AgggBCAFQQJ0aiAMEAA4AgwgByACQQJ0aiEHIAVBBGohBQwACwsCQANAIAUgA08NAf0MAAAAAAAAAAAAAAAAAAAAACEJQQAhBiABIQgCQANAIAYgAk8NASAHIAZq/QAEACEPIAkgD/2HASAI/QAEAP26ASAP/YgBIAj9AAQQ/boB/a4B/a4BIQkgBkEQaiEGIAhBIGohCAwACwsgBCAFQQJ0aiAJEAA4AgAgByACaiEHIAVBAWohBQwACwsL'

export interface Kernel {
  memory: WebAssembly.Memory
  scoreAll(data: number, q: number, dims: number, rows: number, out: number): void
}

/** dot.wat compiled once, when this module loads (null: no WebAssembly SIMD here); each store instantiates it for a memory of its own */
const DOT_MODULE: WebAssembly.Module | null = (() => {
  try {
    const bytes = Buffer.from(DOT_WASM, 'base64')
    return WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null
  } catch {
    return null
  }
})()

/** A new instance of the kernel, with its own linear memory, or undefined when this runtime has no WebAssembly SIMD. */
export function loadKernel(): Kernel | undefined {
  if (!DOT_MODULE) return undefined // no WebAssembly here: the callers compute the dot products in plain code
  try {
    return new WebAssembly.Instance(DOT_MODULE).exports as unknown as Kernel
  } catch {
    return undefined
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
