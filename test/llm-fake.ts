/**
 * A scripted OpenAI-compatible chat model: a real HTTP server on 127.0.0.1 and a free port that
 * answers POST /chat/completions with the next reply of its script and records every request.
 */
export interface FakeModel {
  /** the base URL, as LLM_URL takes it */
  url: string
  requests: { model: string; messages: { role: string; content: string }[] }[]
  stop: () => void
}

export function startFakeModel(script: string[]): FakeModel {
  const requests: FakeModel['requests'] = []
  let next = 0
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      if (req.method !== 'POST' || url.pathname !== '/v1/chat/completions') return new Response('not found', { status: 404 })
      const body = (await req.json()) as FakeModel['requests'][number]
      requests.push(body)
      const content = script[next++]
      if (content === undefined) return Response.json({ error: { message: 'script exhausted' } }, { status: 500 })
      return Response.json({
        id: `chatcmpl-${next}`,
        object: 'chat.completion',
        model: body.model,
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
      })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/v1`, requests, stop: () => server.stop(true) }
}
