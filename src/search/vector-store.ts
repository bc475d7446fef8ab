// A growable matrix of unit vectors for one project, scored against a query in one pass of
// the WebAssembly SIMD dot kernel of vectors.ts. Rows are kept as int8 with a scale each
// (the largest component maps to ±127): a quarter of float32's memory (384 dims: 384 bytes a
// row instead of 1,536, 50,000 nodes ~20 MB instead of ~80), cosines within ~0.005 of the
// float32 ones, and the dev set's recall and MRR unchanged (bench/eval-search.ts). Rows live
// in slots: a removed row's slot is zeroed and reused, so following writes never rebuilds the
// matrix. Memory layout inside the kernel's linear memory: [query (int16, in stride x 4 bytes) | rows (capacity x
// stride int8) | scores (capacity float32)]; growing appends pages, the rows stay where they are
// and the transient scores move behind them.
//
// A small store (most projects: a few dozen nodes) keeps its rows in a plain array and scores
// them in a JavaScript loop, which takes well under a millisecond at that size; it moves into a
// kernel instance of its own when it grows past KERNEL_FROM_ROWS. A server holding thousands of
// small projects' indexes then holds no WebAssembly instance, nor its memory, for each.

import { type Kernel, loadKernel } from './vectors.ts'

const PAGE = 65536
/** the query's largest component in the kernel's int16 */
const QUERY_MAX = 16383
/** capacity past which the rows move into the WebAssembly kernel */
export const KERNEL_FROM_ROWS = 1024

export class VectorStore {
  /** bytes per row: dims rounded up to the kernel's 16 */
  readonly stride: number
  private capacity = 0
  /** high-water mark: slots [0, used) have been handed out */
  private used = 0
  private readonly free: number[] = []
  private kernel?: Kernel
  private rows: Int8Array
  private scales = new Float32Array(0)
  private fallback?: Float32Array

  constructor(readonly dims: number) {
    this.stride = Math.ceil(dims / 16) * 16
    this.rows = new Int8Array(0)
    this.grow(64)
  }

  /** Rows in use. */
  get size(): number {
    return this.used - this.free.length
  }

  /** Bytes held for rows, their scales and the scores. */
  get bytes(): number {
    return this.capacity * (this.stride + 8)
  }

  /** Slots handed out so far; scores() returns this many values. */
  get slots(): number {
    return this.used
  }

  add(vector: Float32Array): number {
    if (vector.length !== this.dims) throw new Error(`vector has ${vector.length} dims, expected ${this.dims}`)
    const slot = this.free.pop() ?? this.used++
    // doubling while small; past 4,096 rows by a quarter (the scores area behind the rows is
    // written on every search, so its pages stay in memory: less room left unused in between)
    if (slot >= this.capacity) this.grow(this.capacity < 4096 ? this.capacity * 2 : Math.ceil((this.capacity * 1.25) / 64) * 64)
    const max = largestMagnitude(vector)
    const scale = max > 0 ? max / 127 : 0
    const base = slot * this.stride
    for (let i = 0; i < this.dims; i++) this.rows[base + i] = scale > 0 ? Math.round(vector[i]! / scale) : 0
    this.scales[slot] = scale
    return slot
  }

  /** The vector in `slot`, as stored (a new array). */
  row(slot: number): Float32Array {
    const out = new Float32Array(this.dims)
    const base = slot * this.stride
    const scale = this.scales[slot]!
    for (let i = 0; i < this.dims; i++) out[i] = this.rows[base + i]! * scale
    return out
  }

  remove(slot: number): void {
    this.rows.fill(0, slot * this.stride, (slot + 1) * this.stride)
    this.scales[slot] = 0
    this.free.push(slot)
  }

  /** Cosine of the query with every slot (0 for free ones). The array is reused by the next call. */
  scores(query: Float32Array): Float32Array {
    const n = this.used
    if (this.kernel) return this.kernelScores(this.kernel, query, n)
    const out = this.fallback!.subarray(0, n)
    for (let r = 0, base = 0; r < n; r++, base += this.stride) {
      let s = 0
      for (let i = 0; i < query.length; i++) s += this.rows[base + i]! * query[i]!
      out[r] = s * this.scales[r]!
    }
    return out
  }

  /**
   * The query goes in as int16, its largest component at ±16383 (dot.wat says why not 32767):
   * its rounding moves a cosine by about 1e-4, against the rows' ~0.005 from int8.
   */
  private kernelScores(kernel: Kernel, query: Float32Array, n: number): Float32Array {
    const buf = kernel.memory.buffer
    const max = largestMagnitude(query)
    const qScale = max > 0 ? max / QUERY_MAX : 0
    const q = new Int16Array(buf, 0, this.stride)
    q.fill(0)
    if (qScale > 0) for (let i = 0; i < this.dims; i++) q[i] = Math.round(query[i]! / qScale)
    const outOff = this.stride * 4 + this.capacity * this.stride
    kernel.scoreAll(this.stride * 4, 0, this.stride, n, outOff)
    const out = new Float32Array(buf, outOff, n)
    for (let r = 0; r < n; r++) out[r]! *= this.scales[r]! * qScale
    return out
  }

  private grow(capacity: number): void {
    // past KERNEL_FROM_ROWS, the rows so far move into a kernel instance (kept while it grows on)
    const moving = !this.kernel && capacity > KERNEL_FROM_ROWS ? loadKernel() : undefined
    if (moving) this.kernel = moving
    if (this.kernel) {
      const rowsOff = this.stride * 4
      const need = rowsOff + capacity * this.stride + capacity * 4
      const have = this.kernel.memory.buffer.byteLength
      if (need > have) this.kernel.memory.grow(Math.ceil((need - have) / PAGE))
      const before = this.rows
      this.rows = new Int8Array(this.kernel.memory.buffer, rowsOff, capacity * this.stride)
      if (moving) {
        this.rows.set(before)
        this.fallback = undefined
      }
      // the old scores area becomes rows; the pages just grown are zero already and, left
      // untouched, take no memory until rows are written there
      else this.rows.fill(0, this.capacity * this.stride, this.capacity * this.stride + this.capacity * 4)
    } else {
      const rows = new Int8Array(capacity * this.stride)
      rows.set(this.rows)
      this.rows = rows
      this.fallback = new Float32Array(capacity)
    }
    const scales = new Float32Array(capacity)
    scales.set(this.scales)
    this.scales = scales
    this.capacity = capacity
  }
}

/** The largest |component| of a vector: what a quantized row's or query's scale maps to its top. */
function largestMagnitude(v: Float32Array): number {
  let max = 0
  for (const x of v) max = Math.max(max, Math.abs(x))
  return max
}
