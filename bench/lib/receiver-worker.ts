/**
 * A webhook receiver in its own thread, so that receiving does not run on the server's event
 * loop. Posts {port} once listening, then one {label, path, at} per request, where `at` is an
 * absolute time in ms (timeOrigin + now: comparable across threads).
 */
declare const self: Worker

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(req) {
    const body: any = await req.json()
    self.postMessage({ label: body.node?.data?.label, path: new URL(req.url).pathname, at: performance.timeOrigin + performance.now() })
    return new Response('ok')
  },
})
self.postMessage({ port: server.port })
