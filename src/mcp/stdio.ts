/**
 * The MCP server over stdio: `bun run mcp`, or `arbor mcp` from the compiled binary.
 * Configured by ARBOR_API_KEY (required), ARBOR_PROJECT_ID and ARBOR_API_URL.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
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
const server = createMcpServer(config)
await server.connect(new StdioServerTransport())
