/**
 * The MCP server over stdio: `npx arbor mcp` in a checkout (bin/arbor.mjs), or `arbor mcp` from
 * the compiled binary; nothing else may write on stdout.
 * Configured by ARBOR_API_KEY (required), ARBOR_PROJECT_ID and ARBOR_API_URL. The v2 SDK's
 * `serveStdio` answers a 2026-07-28 client (server/discover, per-request envelope) and a 2025
 * client (initialize) on the same pipe.
 */
import { serveStdio } from '@modelcontextprotocol/server/stdio'
import { loadMcpConfig, McpConfigError } from './config'
import { createMcpServer } from './server'

let config: ReturnType<typeof loadMcpConfig>
try {
  config = loadMcpConfig()
} catch (err) {
  if (!(err instanceof McpConfigError)) throw err
  console.error(`arbor mcp: ${err.message}`)
  process.exit(2)
}
serveStdio(() => createMcpServer(config), {
  onerror: (err) => console.error(JSON.stringify({ level: 'warn', msg: 'arbor mcp: a message failed', reason: err.message })),
})
