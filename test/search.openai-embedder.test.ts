import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { OpenAIEmbedder } from '../src/search/embedder/openai.ts'

// A tiny stand-in for an OpenAI-compatible /embeddings endpoint. Each test
// scripts its behaviour through `plan`; `calls` records what arrived.
type Plan = (call: number, body: { model: string; input: string[] }) => Response | Promise<Response>
let plan: Plan
let calls: { auth: string | null; body: { model: string; input: string[] } }[] = []
let server: ReturnType<typeof Bun.serve>
let url: string

/** Deterministic 3-d vector per text, deliberately not unit length. */
const vectorFor = (t: string) => [t.length, 1, 0]
const ok = (input: string[], reverse = false) => {
  const data = input.map((t, index) => ({ object: 'embedding', index, embedding: vectorFor(t) }))
  return Response.json({ object: 'list', data: reverse ? data.reverse() : data })
}

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      if (req.method !== 'POST' || path !== '/v1/embeddings') return new Response('not found', { status: 404 })
      const body = (await req.json()) as { model: string; input: string[] }
      calls.push({ auth: req.headers.get('authorization'), body })
      return plan(calls.length, body)
    },
  })
  url = `http://127.0.0.1:${server.port}/v1`
})
afterAll(() => server.stop(true))
beforeEach(() => {
  calls = []
  plan = (_, body) => ok(body.input)
})

const fast = { backoffMs: 5 }

describe('OpenAIEmbedder', () => {
  test('sends model, input and bearer key; returns unit vectors in input order', async () => {
    plan = (_, body) => ok(body.input, true) // server answers out of order
    const e = new OpenAIEmbedder({ url, model: 'm-1', apiKey: 'sk-test', ...fast })
    const out = await e.embed(['a', 'bbb'])
    expect(calls).toHaveLength(1)
    expect(calls[0]!.auth).toBe('Bearer sk-test')
    expect(calls[0]!.body).toEqual({ model: 'm-1', input: ['a', 'bbb'] })
    expect(e.dims).toBe(3)
    expect(e.id).toBe('openai:m-1')
    const norm = (v: Float32Array) => Math.hypot(...v)
    expect(norm(out[0]!)).toBeCloseTo(1, 5)
    expect(out[0]![0]! / out[0]![1]!).toBeCloseTo(1, 5) // "a" -> [1,1,0]
    expect(out[1]![0]! / out[1]![1]!).toBeCloseTo(3, 5) // "bbb" -> [3,1,0]
  })

  test('no Authorization header without a key; trailing slash in url is fine', async () => {
    const e = new OpenAIEmbedder({ url: `${url}/`, model: 'm', ...fast })
    await e.embed(['x'])
    expect(calls[0]!.auth).toBeNull()
  })

  test('splits input into batches of batchSize and keeps order', async () => {
    const e = new OpenAIEmbedder({ url, model: 'm', batchSize: 2, ...fast })
    const texts = ['a', 'bb', 'ccc', 'dddd', 'eeeee']
    const out = await e.embed(texts)
    expect(calls.map((c) => c.body.input)).toEqual([['a', 'bb'], ['ccc', 'dddd'], ['eeeee']])
    for (const [i, v] of out.entries()) expect(v[0]! / v[1]!).toBeCloseTo(texts[i]!.length, 5)
  })

  test('retries a 500 and then succeeds', async () => {
    plan = (call, body) => (call === 1 ? new Response('boom', { status: 500 }) : ok(body.input))
    const e = new OpenAIEmbedder({ url, model: 'm', ...fast })
    const out = await e.embed(['hello'])
    expect(out).toHaveLength(1)
    expect(calls).toHaveLength(2)
  })

  test('retries 429 too, and gives up after retries with the URL and status in the error', async () => {
    plan = () => new Response('slow down', { status: 429, statusText: 'Too Many Requests' })
    const e = new OpenAIEmbedder({ url, model: 'm', retries: 2, ...fast })
    const err = await e.embed(['x']).catch((x: Error) => x)
    expect(err).toBeInstanceOf(Error)
    expect((err as Error).message).toContain(`${url}/embeddings`)
    expect((err as Error).message).toContain('429')
    expect((err as Error).message).toContain('3 attempts')
    expect(calls).toHaveLength(3)
  })

  test('does not retry a 401', async () => {
    plan = () => new Response('{"error":"bad key"}', { status: 401, statusText: 'Unauthorized' })
    const e = new OpenAIEmbedder({ url, model: 'm', apiKey: 'nope', ...fast })
    await expect(e.embed(['x'])).rejects.toThrow(/HTTP 401.*bad key/)
    expect(calls).toHaveLength(1)
  })

  test('a hanging server times out, then a later attempt succeeds', async () => {
    plan = (call, body) => (call === 1 ? new Promise<Response>(() => {}) : ok(body.input))
    const e = new OpenAIEmbedder({ url, model: 'm', timeoutMs: 100, ...fast })
    const t0 = performance.now()
    const out = await e.embed(['x'])
    expect(out).toHaveLength(1)
    expect(calls).toHaveLength(2)
    expect(performance.now() - t0).toBeLessThan(2000)
  })

  test('a server that always hangs fails with a timeout error', async () => {
    plan = () => new Promise<Response>(() => {})
    const e = new OpenAIEmbedder({ url, model: 'm', timeoutMs: 80, retries: 1, ...fast })
    await expect(e.embed(['x'])).rejects.toThrow(/timed out after 80 ms/)
    expect(calls).toHaveLength(2)
  })

  test('an unreachable server is a network error naming the URL', async () => {
    const dead = Bun.serve({ port: 0, fetch: () => new Response() })
    const deadUrl = `http://127.0.0.1:${dead.port}/v1`
    dead.stop(true)
    const e = new OpenAIEmbedder({ url: deadUrl, model: 'm', retries: 1, ...fast })
    await expect(e.embed(['x'])).rejects.toThrow(`${deadUrl}/embeddings`)
  })

  test('rejects a response with the wrong number of vectors', async () => {
    plan = () => Response.json({ data: [{ index: 0, embedding: [1, 0] }] })
    const e = new OpenAIEmbedder({ url, model: 'm', ...fast })
    await expect(e.embed(['a', 'b'])).rejects.toThrow(/1 vectors for 2 inputs/)
  })

  test('empty input makes no request', async () => {
    const e = new OpenAIEmbedder({ url, model: 'm', ...fast })
    expect(await e.embed([])).toEqual([])
    expect(calls).toHaveLength(0)
  })
})
