import { randomUUID } from 'node:crypto'
import type { User } from '../accounts/model'
import { type Author, VIAS, type Via } from '../ports/actor'

const MAX_AGENT = 100

/** An agent name as history keeps it: 1–100 characters after trimming, else none. */
export function agentName(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  const name = value.trim()
  return name.length >= 1 && name.length <= MAX_AGENT ? name : undefined
}

/** `X-Arbor-Via` as history reads it: app, mcp or cli; anything else (or none) is api. */
export function viaOf(header: string | undefined): Via {
  const v = header?.trim().toLowerCase()
  return v === 'app' || v === 'mcp' || v === 'cli' ? v : 'api'
}

/**
 * The author of one request (history.md, 1): the user and key it authenticated with; `agent`
 * from the claim (`agent`, given by the caller), else `X-Agent-Id`; `via` from `X-Arbor-Via`,
 * unless the route says (a workflow's apply is `workflow`).
 */
export function requestAuthor(
  user: User,
  headers: Record<string, string | undefined>,
  opts: { agent?: string | null; via?: Via } = {},
): Author {
  const agent = agentName(opts.agent) ?? agentName(headers['x-agent-id'])
  const via = opts.via && VIAS.includes(opts.via) ? opts.via : viaOf(headers['x-arbor-via'])
  return {
    actor: { userId: user.id, userName: user.name, keyId: user.keyId ?? null, ...(agent ? { agent } : {}), via },
    requestId: randomUUID(),
  }
}
