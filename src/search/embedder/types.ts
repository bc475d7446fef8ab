/** Turns texts into meaning-based vectors for semantic search. */
export interface Embedder {
  /** Stable identifier of the model; stored vectors from another id are stale. */
  id: string
  /** Length of every vector. */
  dims: number
  /** One L2-normalised vector per input text, in input order. */
  embed(texts: string[]): Promise<Float32Array[]>
  /** Vectors for search queries, where the model embeds a query otherwise than a document (bge's instruction prefix); else embed. */
  embedQueries?(texts: string[]): Promise<Float32Array[]>
}

/** Scale a vector to unit length in place (zero vectors stay zero). */
export function l2normalize(v: Float32Array): Float32Array {
  let s = 0
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!
  if (s > 0) {
    const inv = 1 / Math.sqrt(s)
    for (let i = 0; i < v.length; i++) v[i] = v[i]! * inv
  }
  return v
}
