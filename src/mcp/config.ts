/** The MCP server's configuration (docs/mcp.md). */
export interface McpConfig {
  apiUrl: string
  apiKey: string
  projectId?: string
  /** ARBOR_MCP_READ_ONLY=1 (or true): only the tools that change nothing */
  readOnly: boolean
}

/** `1` or `true` (any case) switch a flag on; anything else leaves it off. */
export const flagOn = (value: string | null | undefined) => value != null && /^(1|true)$/i.test(value.trim())
/** A flag's value that says off, in any case. */
export const flagOff = (value: string) => /^(0|false|no|off)$/i.test(value.trim())

export const DEFAULT_API_URL = 'http://localhost:3000/api/v1'

export class McpConfigError extends Error {}

export function loadMcpConfig(env: Record<string, string | undefined> = process.env): McpConfig {
  const apiKey = env.ARBOR_API_KEY?.trim()
  if (!apiKey) throw new McpConfigError('ARBOR_API_KEY is required: an Arbor API key (arb_…) for the MCP server to call the API with')
  const apiUrl = (env.ARBOR_API_URL?.trim() || DEFAULT_API_URL).replace(/\/+$/, '')
  try {
    const { protocol } = new URL(apiUrl)
    if (protocol !== 'http:' && protocol !== 'https:') throw new Error()
  } catch {
    throw new McpConfigError(
      `ARBOR_API_URL=${env.ARBOR_API_URL} is invalid: expected an http:// or https:// URL such as ${DEFAULT_API_URL}`,
    )
  }
  const projectId = env.ARBOR_PROJECT_ID?.trim() || undefined
  return { apiUrl, apiKey, projectId, readOnly: flagOn(env.ARBOR_MCP_READ_ONLY) }
}
