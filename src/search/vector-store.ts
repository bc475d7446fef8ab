// A growable matrix of unit vectors for one project, scored against a query in one pass of
// the WebAssembly SIMD dot kernel of vectors.ts. Rows live in slots: a removed row's slot is
// zeroed and reused, so following writes never rebuilds the matrix. Memory layout inside the
// kernel's linear memory: [query | rows (capacity x stride) | scores (capacity)]; growing
// appends pages, the rows stay where they are and the transient scores move behind them.

import { type Kernel, loadKernel } from './vectors.ts'

const PAGE = 65536

export class VectorStore {
  readonly stride: number
  private capacity = 0
  /** high-water mark: slots [0, used) have been handed out */
  private used = 0
  private readonly free: number[] = []
  private readonly kernel?: Kernel
  private rows: Float32Array
  private fallback?: Float32Array

  constructor(readonly dims: number) {
    this.stride = Math.ceil(dims / 4) * 4
    this.kernel = loadKernel()
    this.rows = new Float32Array(0)
    this.grow(64)
  }

  /** Rows in use. */
  get size(): number {
    return this.used - this.free.length
  }

  /** Bytes held for rows and scores. */
  get bytes(): number {
    return this.capacity * (this.stride + 1) * 4
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
    this.rows.set(vector, slot * this.stride)
    return slot
  }

  /** A copy of the vector in `slot`. */
  row(slot: number): Float32Array {
    return this.rows.slice(slot * this.stride, slot * this.stride + this.dims)
  }

  remove(slot: number): void {
    this.rows.fill(0, slot * this.stride, (slot + 1) * this.stride)
    this.free.push(slot)
  }

  /** Cosine of the query with every slot (0 for free ones). The array is reused by the next call. */
  scores(query: Float32Array): Float32Array {
    const n = this.used
    if (this.kernel) {
      const buf = this.kernel.memory.buffer
      const q = new Float32Array(buf, 0, this.stride)
      q.fill(0)
      q.set(query)
      const outOff = (this.stride + this.capacity * this.stride) * 4
      this.kernel.scoreAll(this.stride * 4, 0, this.stride, n, outOff)
      return new Float32Array(buf, outOff, n)
    }
    const out = this.fallback!.subarray(0, n)
    for (let r = 0, base = 0; r < n; r++, base += this.stride) {
      let s = 0
      for (let i = 0; i < query.length; i++) s += this.rows[base + i]! * query[i]!
      out[r] = s
    }
    return out
  }

  private grow(capacity: number): void {
    if (this.kernel) {
      const need = (this.stride + capacity * this.stride + capacity) * 4
      const have = this.kernel.memory.buffer.byteLength
      if (need > have) this.kernel.memory.grow(Math.ceil((need - have) / PAGE))
      this.rows = new Float32Array(this.kernel.memory.buffer, this.stride * 4, capacity * this.stride)
      // the old scores area becomes rows; the pages just grown are zero already and, left
      // untouched, take no memory until rows are written there
      this.rows.fill(0, this.capacity * this.stride, this.capacity * this.stride + this.capacity)
    } else {
      const rows = new Float32Array(capacity * this.stride)
      rows.set(this.rows)
      this.rows = rows
      this.fallback = new Float32Array(capacity)
    }
    this.capacity = capacity
  }
}
