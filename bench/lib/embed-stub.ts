// An OpenAI-compatible embeddings endpoint that answers at once (bench/writes.ts): POST
// /embeddings {"input": [...]} -> {"data": [{"embedding": [16 numbers from the text], "index": i}]}.
// The servers of a write benchmark embed every new label in their search loop; with the model-less
// built-in embedder (USE-lite + GloVe) an add of a goal cost the server 11-13 ms of CPU instead of
// about 3, the same for every version, and it kept a shared machine busy long after each write. Pointed at this, the search loop still
// follows the outbox, asks for vectors and stores them: the background a write wakes, without the model.
//
//   PORT=… bun bench/lib/embed-stub.ts   (prints "listening <url>")

const DIMS = 16

/** a fixed vector from the text (FNV-1a per dimension): the same text, the same vector */
function vector(text: string): number[] {
  const v: number[] = []
  for (let d = 0; d < DIMS; d++) {
    let h = 0x811c9dc5 ^ d
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
    v.push(((h >>> 0) / 0xffffffff) * 2 - 1)
  }
  return v
}

const stub = Bun.serve({
  hostname: '127.0.0.1',
  port: Number(process.env.PORT ?? 0),
  async fetch(req) {
    if (req.method !== 'POST' || !new URL(req.url).pathname.endsWith('/embeddings')) return new Response('not found', { status: 404 })
    const body = (await req.json()) as { input: string[] | string; model?: string }
    const input = Array.isArray(body.input) ? body.input : [body.input]
    return Response.json({
      object: 'list',
      model: body.model ?? 'stub',
      data: input.map((t, index) => ({ object: 'embedding', index, embedding: vector(t) })),
    })
  },
})
console.log(`listening http://127.0.0.1:${stub.port}`)
process.on('SIGTERM', () => {
  stub.stop(true)
  process.exit(0)
})
