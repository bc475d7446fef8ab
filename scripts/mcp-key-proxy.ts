/**
 * A loopback proxy in front of Arbor's /mcp that adds the bearer key, for MCP tools that cannot
 * send one (the official conformance suite; a browser host page in test/process.mcp-host.test.ts).
 *
 *   bun scripts/mcp-key-proxy.ts <target, e.g. http://127.0.0.1:3000/mcp> [port]
 *
 * reads the key from ARBOR_API_KEY and prints `listening <url>` once it serves. It listens on
 * 127.0.0.1 only; every request goes to the target unchanged but for the Authorization header.
 */

/** One request to the target with the key: method, body and headers as sent (Origin included, so Arbor still refuses a foreign one), Host the target's. */
export async function forwardWithKey(req: Request, target: string, key: string): Promise<Response> {
  const headers = new Headers(req.headers)
  headers.set('authorization', `Bearer ${key}`)
  headers.delete('host')
  const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.arrayBuffer()
  const res = await fetch(target, { method: req.method, headers, body, redirect: 'manual' })
  const out = new Headers(res.headers)
  // fetch has already decoded the body
  out.delete('content-encoding')
  out.delete('content-length')
  return new Response(res.body, { status: res.status, headers: out })
}

export function startKeyProxy(target: string, key: string, port = 0) {
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port,
    idleTimeout: 60,
    fetch: (req) => forwardWithKey(req, target, key),
  })
  return { url: `http://127.0.0.1:${server.port}/mcp`, stop: () => server.stop(true) }
}

if (import.meta.main) {
  const [target, port] = process.argv.slice(2)
  const key = process.env.ARBOR_API_KEY
  if (!target || !key) {
    console.error('usage: ARBOR_API_KEY=arb_… bun scripts/mcp-key-proxy.ts <target /mcp URL> [port]')
    process.exit(2)
  }
  const proxy = startKeyProxy(target, key, Number(port ?? 0))
  console.log(`listening ${proxy.url}`)
}
