import { createHash } from 'node:crypto'

/** Key of an embedded text in search_vectors: the first 128 bits of its SHA-256, in hex. */
export function textHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32)
}

/** A float32 vector as base64 of its little-endian bytes, and back. */
export function vectorToBase64(v: Float32Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')
}

export function vectorFromBytes(bytes: Uint8Array): Float32Array {
  // copy: the driver's buffer may not be 4-byte aligned
  const out = new Float32Array(bytes.byteLength / 4)
  new Uint8Array(out.buffer).set(bytes)
  return out
}
