/**
 * Streamable HTTP at /mcp, served by Arbor itself. Stateless: every POST carries the caller's
 * own API key as a Bearer token, a fresh MCP server answers it (as JSON), and its tool calls
 * go to the REST API through the app's own HTTP handler with that key. The v2 SDK's handler
 * serves protocol revision 2026-07-28 (a per-request envelope, no `initialize`) and falls back
 * to stateless serving for 2025 clients. `Origin`, when sent, must be PUBLIC_BASE_URL's or a
 * loopback one, so a page on another site cannot reach a local Arbor through the browser (DNS
 * rebinding). `/mcp?readOnly=1` offers only the tools that change nothing; ARBOR_PROJECT_ID is
 * the stdio server's and means nothing here.
 */
// The MCP SDK (~15 MB resident once loaded) is imported by the first request to /mcp, not at start.
import type { Implementation } from '@modelcontextprotocol/server'
import { KEY_ROLE_HEADER, ROLES, type Role } from '../accounts/scope'
import { flagOff } from './config'
import type { createMcpServer as CreateMcpServer } from './server'
import { clientFromSession, sessionForClient } from './session'

let sdk:
  | Promise<{
      createMcpServer: typeof CreateMcpServer
      v2: typeof import('@modelcontextprotocol/server')
    }>
  | undefined
const loadSdk = () =>
  (sdk ??= Promise.all([import('./server'), import('@modelcontextprotocol/server')]).then(
    ([server, v2]) => ({ createMcpServer: server.createMcpServer, v2 }),
    (err) => {
      sdk = undefined // tried again by the next request
      throw err
    },
  ))

export const MCP_PATH = '/mcp'

/**
 * `?readOnly=…` with its name in any case (readonly, READONLY, readOnly: issue 50, 7): read-only
 * unless its value says off (0, false, no, off in any case). A parameter the caller meant as
 * read-only never leaves the writing tools on.
 */
export const readOnlyAsked = (params: URLSearchParams) =>
  [...params].some(([name, value]) => name.toLowerCase() === 'readonly' && !flagOff(value))

export interface McpEndpointOptions {
  publicBaseUrl: string
  /** the app's request handler: REST calls go through the HTTP layer, in-process */
  api: (req: Request) => Promise<Response>
  /** the server's logger, for what a caller's answer does not show */
  warn?: (msg: string, fields: Record<string, unknown>) => void
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]'])

export function originAllowed(origin: string | null, publicBaseUrl: string): boolean {
  if (origin === null) return true // not a browser: no rebinding risk
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false
  }
  return url.origin === new URL(publicBaseUrl).origin || LOOPBACK.has(url.hostname)
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })

/** The clientInfo of an `initialize` request (a 2025 client's first message), else undefined. */
async function initializingClient(req: Request): Promise<Implementation | undefined> {
  let body: unknown
  try {
    body = await req.clone().json()
  } catch {
    return undefined // the transport answers the parse error
  }
  const message = Array.isArray(body) ? body[0] : body
  if (typeof message !== 'object' || message === null || (message as { method?: unknown }).method !== 'initialize') return undefined
  const info = (message as { params?: { clientInfo?: unknown } }).params?.clientInfo
  return typeof info === 'object' && info !== null && typeof (info as Implementation).name === 'string'
    ? (info as Implementation)
    : undefined
}

/** The role GET /tier-status names for the key (its X-Arbor-Key-Role header), if it names one. */
export function roleOf(header: string | null | undefined): Role | undefined {
  return header && (ROLES as readonly string[]).includes(header) ? (header as Role) : undefined
}

/** Answers one request to /mcp. */
export async function handleMcp(req: Request, { publicBaseUrl, api, warn }: McpEndpointOptions): Promise<Response> {
  const apiUrl = `${publicBaseUrl}/api/v1`
  const guide = `${apiUrl}/guide`
  if (!originAllowed(req.headers.get('origin'), publicBaseUrl))
    return json(403, {
      error: 'forbidden_origin',
      message: `Origin ${req.headers.get('origin')} may not use ${MCP_PATH}`,
      _meta: { _tip: `Only ${new URL(publicBaseUrl).origin} (PUBLIC_BASE_URL) and loopback origins are allowed.` },
    })
  if (req.method !== 'POST')
    return json(
      405,
      { error: 'method_not_allowed', message: `${MCP_PATH} is stateless: send each JSON-RPC message with POST` },
      { allow: 'POST' },
    )
  const apiKey = /^Bearer\s+(\S+)$/i.exec(req.headers.get('authorization') ?? '')?.[1]
  const unauthorized = {
    error: 'unauthorized',
    message: 'Missing or invalid API key',
    _meta: { guide, _tip: 'Send your Arbor API key as Authorization: Bearer arb_…' },
  }
  if (!apiKey) return json(401, unauthorized, { 'www-authenticate': 'Bearer' })
  const check = await api(new Request(`${apiUrl}/tier-status`, { headers: { authorization: `Bearer ${apiKey}` } }))
  if (check.status === 401) return json(401, unauthorized, { 'www-authenticate': 'Bearer' })
  if (check.status === 429) return new Response(check.body, { status: 429, headers: check.headers })

  const { createMcpServer, v2 } = await loadSdk()
  const readOnly = readOnlyAsked(new URL(req.url).searchParams)
  // the key's role (live.md §6): a read key is offered only the tools that change nothing
  const role = roleOf(check.headers.get(KEY_ROLE_HEADER))
  // a 2025 client named itself in initialize, to another fresh server (maybe on another replica):
  // the session id it got back then carries that name, and it sends it with every request
  const client = clientFromSession(req.headers.get('mcp-session-id'))
  const server = () => createMcpServer({ apiUrl, apiKey, fetch: api, readOnly, warn, client, role })
  const onerror = (err: Error) => warn?.('mcp: a request to /mcp failed', { reason: err.message })
  // a 2025 client (initialize, no envelope): a fresh server answers as JSON, as before the v2 SDK
  if (await v2.isLegacyRequest(req)) {
    const legacy = server()
    const transport = new v2.WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    transport.onerror = onerror
    await legacy.connect(transport)
    const named = await initializingClient(req)
    try {
      const res = await transport.handleRequest(req)
      if (!named || !res.ok) return res
      const headers = new Headers(res.headers)
      headers.set('mcp-session-id', sessionForClient(named))
      return new Response(res.body, { status: res.status, statusText: res.statusText, headers })
    } finally {
      void legacy.close()
    }
  }
  // revision 2026-07-28: one handler per request, as the key is the caller's and nothing is kept between requests
  const handler = v2.createMcpHandler(server, { legacy: 'reject', responseMode: 'json', onerror })
  try {
    return await handler.fetch(req)
  } finally {
    void handler.close()
  }
}
