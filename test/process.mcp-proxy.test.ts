import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { type ServerProcess, startServer } from './process'

// /mcp behind a reverse proxy (TRUST_PROXY=true, the proxy sets X-Forwarded-For): each caller's
// tool calls are counted against the caller's own address, as its REST requests are, not against
// the proxy's, which every caller shares. The SDK's own client, over Streamable HTTP.
const LIMIT = 5
let server: ServerProcess
beforeAll(async () => {
  server = await startServer({ TRUST_PROXY: 'true', RATE_LIMIT_PER_MINUTE: String(LIMIT) })
}, 60_000)
afterAll(() => server.close())

/** An MCP client whose requests come through the proxy for `ip`. */
const through = async (ip: string) => {
  const client = new Client({ name: 'behind-a-proxy', version: '1' })
  const headers = { authorization: `Bearer ${server.ownerKey}`, 'x-forwarded-for': ip }
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers } }))
  return client
}

describe('/mcp behind a proxy', () => {
  it("limits each caller by its forwarded address: one caller's burst leaves another's calls alone", async () => {
    const first = await through('198.51.100.1')
    let refusal = ''
    for (let i = 0; i < 3 * LIMIT && !refusal; i++)
      await first.listTools().catch((err: Error) => {
        refusal = err.message
      })
    expect(refusal).toContain('rate_limited')
    expect(refusal).toContain('from 198.51.100.1')
    // the proxy's own address (127.0.0.1) was not the one counted: another caller starts afresh
    const second = await through('198.51.100.2')
    expect((await second.listTools()).tools.map((t) => t.name)).toContain('search')
    await first.close()
    await second.close()
  }, 60_000)
})
