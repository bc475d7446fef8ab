// Embedder for any OpenAI-compatible embeddings endpoint (OpenAI, Azure-style
// proxies, Ollama, vLLM, LM Studio, ...):
//   POST {url}/embeddings  {"model": ..., "input": [...]}
//   -> {"data": [{"embedding": [...], "index": 0}, ...]}
// Inputs are sent in batches; each request has its own timeout; network
// errors, 429 and 5xx are retried with exponential backoff. Other 4xx
// errors (bad key, bad model) fail at once: retrying cannot fix them.

import { type Embedder, l2normalize } from './types.ts'

export interface OpenAIEmbedderOptions {
  /** Base URL, e.g. https://api.openai.com/v1 (the "/embeddings" path is appended). */
  url: string
  model: string
  apiKey?: string
  batchSize?: number
  timeoutMs?: number
  /** Extra attempts after the first one. */
  retries?: number
  /** First backoff delay; doubles on each retry (with jitter). */
  backoffMs?: number
  /** Known vector length; otherwise learnt from the first response. */
  dims?: number
  fetch?: typeof fetch
}

export class OpenAIEmbedder implements Embedder {
  readonly id: string
  dims: number
  private readonly endpoint: string
  private readonly opts: Required<Omit<OpenAIEmbedderOptions, 'apiKey' | 'dims'>> & { apiKey?: string }

  constructor(options: OpenAIEmbedderOptions) {
    this.opts = {
      batchSize: 64,
      timeoutMs: 10_000,
      retries: 3,
      backoffMs: 250,
      fetch: globalThis.fetch,
      ...options,
    }
    if (!(this.opts.batchSize >= 1)) throw new Error(`batchSize must be >= 1, got ${this.opts.batchSize}`)
    this.endpoint = `${options.url.replace(/\/+$/, '')}/embeddings`
    this.id = `openai:${options.model}`
    this.dims = options.dims ?? 0
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = []
    for (let i = 0; i < texts.length; i += this.opts.batchSize) {
      out.push(...(await this.embedBatch(texts.slice(i, i + this.opts.batchSize))))
    }
    return out
  }

  private async embedBatch(input: string[]): Promise<Float32Array[]> {
    let lastError: Error | undefined
    for (let attempt = 0; attempt <= this.opts.retries; attempt++) {
      if (attempt > 0) await sleep(this.opts.backoffMs * 2 ** (attempt - 1) * (0.75 + Math.random() * 0.5))
      try {
        return await this.request(input)
      } catch (e) {
        lastError = e as Error
        if (!(e instanceof RetryableError)) throw e
      }
    }
    throw new Error(`${lastError!.message} (gave up after ${this.opts.retries + 1} attempts)`)
  }

  private async request(input: string[]): Promise<Float32Array[]> {
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), this.opts.timeoutMs)
    let res: Response
    let body: string
    try {
      res = await this.opts.fetch(this.endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: this.opts.model, input }),
        signal: controller.signal,
      })
      body = await res.text() // still under the timeout: a server may stall mid-body
    } catch (e) {
      const why = controller.signal.aborted ? `timed out after ${this.opts.timeoutMs} ms` : (e as Error).message
      throw new RetryableError(`embeddings request to ${this.endpoint} failed: ${why}`)
    } finally {
      clearTimeout(timer)
    }
    if (!res.ok) {
      const msg = `embeddings request to ${this.endpoint} failed: HTTP ${res.status} ${res.statusText}: ${body.slice(0, 300)}`
      throw res.status === 429 || res.status >= 500 ? new RetryableError(msg) : new Error(msg)
    }
    return this.parse(body, input.length)
  }

  private parse(body: string, expected: number): Float32Array[] {
    let data: { embedding: number[]; index?: number }[]
    try {
      data = (JSON.parse(body) as { data: typeof data }).data
      if (!Array.isArray(data)) throw new Error('no data array')
    } catch (e) {
      throw new Error(`embeddings response from ${this.endpoint} is not valid: ${(e as Error).message}`)
    }
    if (data.length !== expected) {
      throw new Error(`embeddings response from ${this.endpoint} has ${data.length} vectors for ${expected} inputs`)
    }
    const out = new Array<Float32Array>(expected)
    data.forEach((item, i) => {
      const at = item.index ?? i // responses may come back out of order
      if (!Array.isArray(item.embedding) || at < 0 || at >= expected || out[at]) {
        throw new Error(`embeddings response from ${this.endpoint} has a bad item at position ${i}`)
      }
      if (!this.dims) this.dims = item.embedding.length
      if (item.embedding.length !== this.dims) {
        throw new Error(`embeddings response from ${this.endpoint} has ${item.embedding.length} dims, expected ${this.dims}`)
      }
      out[at] = l2normalize(Float32Array.from(item.embedding))
    })
    return out
  }
}

class RetryableError extends Error {}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
