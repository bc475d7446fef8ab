/**
 * The session id /mcp gives a 2025 client in its answer to `initialize`: the client's own
 * `name` and `version` (its clientInfo), encoded, so the fresh server of each later request,
 * on this replica or any other, knows who is calling (history.md §1: the agent is the MCP
 * client's `name/version`) without keeping anything between requests. It grants nothing: the
 * key travels in `Authorization` with every request, and clientInfo is the client's own word
 * (it could name itself anything in `initialize`), so there is nothing to sign.
 */
import type { Implementation } from '@modelcontextprotocol/server'

const PREFIX = 'arbor-mcp.'
/** what a session id may carry: the name and version as X-Agent-Id keeps them (100 characters) */
const MAX_FIELD = 100

/** A session id naming `client` (visible ASCII only, as the transport requires). */
export function sessionForClient(client: Implementation): string {
  const named = { n: String(client.name).slice(0, MAX_FIELD), v: String(client.version ?? '').slice(0, MAX_FIELD) }
  return PREFIX + Buffer.from(JSON.stringify(named)).toString('base64url')
}

/** The client a session id names, or undefined for none, another server's or a malformed one. */
export function clientFromSession(sessionId: string | null | undefined): Implementation | undefined {
  if (!sessionId?.startsWith(PREFIX) || sessionId.length > 1000) return undefined
  try {
    const named = JSON.parse(Buffer.from(sessionId.slice(PREFIX.length), 'base64url').toString('utf8')) as unknown
    if (typeof named !== 'object' || named === null) return undefined
    const { n, v } = named as { n?: unknown; v?: unknown }
    if (typeof n !== 'string' || n.trim() === '') return undefined
    return { name: n.slice(0, MAX_FIELD), version: typeof v === 'string' ? v.slice(0, MAX_FIELD) : '' }
  } catch {
    return undefined
  }
}
