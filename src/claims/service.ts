import { createHash, randomBytes } from 'node:crypto'
import type { Db } from '../db'
import { RefusalError } from '../errors'
import { CLAIM_TOKEN_MAX } from '../ports/claim-token'
import * as q from './queries'

/**
 * Claims (docs/agents.md): the table and its rules, below every module that reads nodes,
 * so the node reads (GET /nodes, GET /tree) can show claims and src/work can take them. What a
 * work item is and when it is ready lives in src/work.
 */

/** What GET /nodes and GET /tree show beside `data`: never the token. */
export interface ClaimView {
  agent: string
  expiresAt: string
}

export const iso = (d: Date | string) => new Date(d).toISOString()

/** A new token: 256 random bits. Only its hash is stored. */
export const newToken = () => `clm_${randomBytes(32).toString('base64url')}`
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex')

/** The project's live claims by node id, as the node reads show them. */
export async function liveClaims(db: Db, projectId: string, now: Date): Promise<Map<string, ClaimView>> {
  const rows = await q.live(db, projectId, now)
  return new Map(rows.map((r) => [r.node_id, { agent: r.agent, expiresAt: iso(r.expires_at) }]))
}

/** When the first of the project's claims live at `now` expires, or null when none is live. */
export async function nextClaimExpiry(db: Db, projectId: string, now: Date): Promise<Date | null> {
  const row = await q.nextExpiry(db, projectId, now)
  return row?.expires_at ? new Date(row.expires_at) : null
}

/**
 * `node` with its live claim beside `data` (a copy), or `node` itself when it has none. Claims
 * are read against the caller's clock, and a kept answer ends at the first expiry
 * (src/reads/cache.ts), so a claim that expires disappears from every read without a write.
 */
export function withClaim<T extends { id: string }>(node: T, claims: Map<string, ClaimView>): T | (T & { claim: ClaimView }) {
  const claim = claims.get(node.id)
  return claim ? { ...node, claim } : node
}

export const claimLost = (message: string, holder?: ClaimView) =>
  new RefusalError(409, 'claim_lost', {
    message,
    ...(holder ? { holder } : {}),
    _meta: { _tip: 'Another agent holds this item now, or your claim expired or was released. Read GET /ready and claim again.' },
  })

/**
 * A write that carries claim tokens (docs/agents.md): each named node must not be held by a
 * live claim with another token, and each token must still be live. Locks the nodes' claim rows
 * for the rest of the transaction, so no claim can change under the write. Writes without a
 * token are never refused here.
 */
export async function checkTokens(db: Db, projectId: string, writes: { nodeId: string; claimToken: string }[], now: Date): Promise<void> {
  if (writes.length === 0) return
  const rows = new Map((await q.lockNodes(db, projectId, [...new Set(writes.map((w) => w.nodeId))])).map((r) => [r.node_id, r]))
  for (const w of writes) {
    const hash = hashToken(w.claimToken)
    const row = rows.get(w.nodeId)
    const live = !!row && new Date(row.expires_at) > now
    if (live && row!.token_hash === hash) continue
    if (live)
      throw claimLost(`${w.nodeId} is claimed by ${row!.agent} with another token`, { agent: row!.agent, expiresAt: iso(row!.expires_at) })
    const own = row?.token_hash === hash ? row : await q.byToken(db, projectId, hash)
    if (!own || new Date(own.expires_at) <= now) throw claimLost('This claimToken is unknown, expired or released')
  }
}

/**
 * The agent a claim token was given to (live or not), or null: the author of a write that carries
 * it (history.md, 1); none for a token longer than a claim's (CLAIM_TOKEN_MAX: the body is not
 * checked yet).
 */
export async function claimAgent(db: Db, projectId: string, token: string): Promise<string | null> {
  if (token.length > CLAIM_TOKEN_MAX) return null
  return (await q.byToken(db, projectId, hashToken(token)))?.agent ?? null
}

/**
 * Whether the key `keyId` holds the live claim of `nodeId` with `token` (live.md §6: a `work` key
 * may update only such a node).
 */
export async function claimHeldByKey(db: Db, projectId: string, nodeId: string, token: string, keyId: string, now: Date) {
  return token.length <= CLAIM_TOKEN_MAX && (await q.heldByKey(db, projectId, nodeId, hashToken(token), keyId, now))
}

/** End the claims of work marked done; returns the ones that were live (for node.released). */
export const endClaims = (db: Db, projectId: string, nodeIds: string[], now: Date) =>
  nodeIds.length ? q.endNodes(db, projectId, nodeIds, now) : Promise.resolve([])

// The claim writes of src/work (docs/agents.md), each named for what it does; tokens are stored
// as their hashes (`hashToken`).

/** Take the claim of `nodeId` for `agent` until `expiresAt`, unless a live claim holds it: its row, or null. */
export const takeClaim = (...args: Parameters<typeof q.take>) => q.take(...args)

/** Hold `nodeId` for this transaction before taking its claim, without waiting: false when another claim is being taken on it. */
export const holdForClaim = (db: Db, projectId: string, nodeId: string) => q.tryHold(db, projectId, nodeId)

/** Make the live claim with `tokenHash` last until `expiresAt`: its row, or null when no live claim has it. */
export const renewByToken = (db: Db, projectId: string, tokenHash: string, expiresAt: Date, now: Date) =>
  q.renew(db, projectId, tokenHash, expiresAt, now)

/** End the live claim with `tokenHash`: its row, or null when no live claim has it. */
export const releaseByToken = (db: Db, projectId: string, tokenHash: string, now: Date) => q.release(db, projectId, tokenHash, now)

/** A write that carries live claims' tokens renews each to its own length from `now`. */
export const extendByTokens = (db: Db, projectId: string, tokenHashes: string[], now: Date) =>
  q.extendTokens(db, projectId, tokenHashes, now)

/** A read by `agent` of `nodeId` renews the agent's live claim on it to its own length from `now`: the claims renewed. */
export const extendForReader = (db: Db, projectId: string, nodeId: string, agent: string, now: Date) =>
  q.extendForReader(db, projectId, nodeId, agent, now)
