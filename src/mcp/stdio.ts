/**
 * The MCP server over stdio: `npx arbor mcp` in a checkout (bin/arbor.mjs), or `arbor mcp` from
 * the compiled binary; nothing else may write on stdout.
 * Configured by ARBOR_API_KEY (required), ARBOR_PROJECT_ID and ARBOR_API_URL. The v2 SDK's
 * `serveStdio` answers a 2026-07-28 client (server/discover, per-request envelope) and a 2025
 * client (initialize) on the same pipe.
 */
import { serveStdio } from '@modelcontextprotocol/server/stdio'
import { KEY_ROLE_HEADER } from '../accounts/scope'
import { loadMcpConfig, McpConfigError } from './config'
import { roleOf } from './http'
import { createMcpServer } from './server'

let config: ReturnType<typeof loadMcpConfig>
try {
  config = loadMcpConfig()
} catch (err) {
  if (!(err instanceof McpConfigError)) throw err
  console.error(`arbor mcp: ${err.message}`)
  process.exit(2)
}
// the key's role (live.md §6), asked once: a read key is offered only the tools that change nothing
const role = await fetch(`${config.apiUrl}/tier-status`, { headers: { authorization: `Bearer ${config.apiKey}` } })
  .then((res) => roleOf(res.ok ? res.headers.get(KEY_ROLE_HEADER) : null))
  .catch(() => undefined) // no server yet: every tool is offered, and the API still refuses what the key may not do
serveStdio(() => createMcpServer({ ...config, role }), {
  onerror: (err) => console.error(JSON.stringify({ level: 'warn', msg: 'arbor mcp: a message failed', reason: err.message })),
})
