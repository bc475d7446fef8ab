import type { Db } from '../db'
import type { Deps } from '../deps'
import { notFound, RefusalError } from '../errors'
import { AUTH_CHANNEL, authChanged } from './auth-cache'
import { generateApiKey, hashApiKey, newId } from './keys'
import type { Status, Tier, User } from './model'
import * as q from './queries'
import { type KeyScope, shownScope, WRITE_SCOPE } from './scope'

/** What reading and changing keys needs: the database and the app's auth cache. */
export type AuthDeps = Pick<Deps, 'db' | 'auth'>

export interface NewUser {
  name: string
  tier?: Tier
  status?: Status
  contributor?: boolean
}

/** Create a user and its first API key in one transaction; the key is returned once, never stored. */
export async function createUser(db: Db, input: NewUser): Promise<{ user: User; apiKey: string; keyId: string }> {
  return db.tx(async (tx) => {
    const user = await q.insertUser(tx, {
      id: newId('usr'),
      name: input.name,
      tier: input.tier ?? 'team',
      status: input.status ?? 'active',
      contributor: input.contributor ?? false,
    })
    const { apiKey, keyId } = await createApiKey(tx, user.id, null)
    return { user, apiKey, keyId }
  })
}

export async function createApiKey(db: Db, userId: string, label: string | null, scope: KeyScope = WRITE_SCOPE) {
  const apiKey = generateApiKey()
  const keyId = newId('key')
  await q.insertApiKey(db, { id: keyId, userId, hash: hashApiKey(apiKey), label, prefix: apiKey.slice(0, 8), scope })
  return { apiKey, keyId }
}

/** The hash of the key in `Authorization: Bearer arb_…`, or null when there is none. */
export function bearerHash(authorization: string | null | undefined): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')
  return m && m[1]!.startsWith('arb_') ? hashApiKey(m[1]!) : null
}

/** The user behind `Authorization: Bearer arb_…`, or a 401. */
export function authenticate(deps: AuthDeps, authorization: string | null | undefined): User | Promise<User> {
  const hash = deps.auth.keyHash(authorization, bearerHash)
  if (!hash) throw unauthorized()
  // a cache hit comes back as it is, not in a promise: the common case costs no extra tick
  const user = deps.auth.get('key', hash, () => q.findUserByKeyHash(deps.db, hash))
  return user instanceof Promise ? user.then((u) => used(deps, hash, u ?? refuse())) : used(deps, hash, user ?? refuse())
}

/** Records the key's use (last_used_at), at most once a minute per key and process. */
function used(deps: AuthDeps, hash: string, user: User): User | Promise<User> {
  return deps.auth.useIsDue(hash) ? q.touchApiKey(deps.db, hash).then(() => user) : user
}

const unauthorized = () => new RefusalError(401, 'unauthorized', { message: 'Missing or invalid API key' })
const refuse = (): never => {
  throw unauthorized()
}

/**
 * First start: an empty database gets one `owner` user on the team tier. Its key is returned
 * once for main.ts to print. Concurrent replicas race on an advisory lock; one wins.
 */
export async function bootstrapOwner(db: Db): Promise<string | null> {
  return db.tx(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [72_010_002])
    if ((await q.countUsers(tx)) > 0) return null
    const { apiKey } = await createUser(tx, { name: 'owner', tier: 'team' })
    return apiKey
  })
}

/**
 * `arbor key mint`: another key for a user named by id or by name, straight on the database (no
 * server needed: the way back in when the owner key is lost). Running servers on the same
 * PostgreSQL hear of it through the auth cache's notification. A name two users share is refused.
 */
export async function mintKeyOffline(
  db: Db,
  who: string,
  label: string | null,
  scope: KeyScope = WRITE_SCOPE,
): Promise<{ user: User; apiKey: string; keyId: string } | { error: string }> {
  const byId = await q.getUser(db, who)
  const users = byId ? [byId] : (await q.listUsers(db)).filter((u) => u.name === who)
  if (users.length === 0) return { error: `no user has the id or name ${who} (arbor user list names them)` }
  if (users.length > 1)
    return { error: `${users.length} users are named ${who} (${users.map((u) => u.id).join(', ')}): name one by its id` }
  const user = users[0]!
  const key = await createApiKey(db, user.id, label, scope)
  await db.notify(AUTH_CHANNEL, '')
  return { user, ...key }
}

/** Live keys a user may hold at once (docs/reference/authentication.md). */
export const MAX_LIVE_KEYS = 20

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString())

/** The caller's live keys, oldest first, never key material; `current` marks the one calling. */
export async function listOwnKeys(db: Db, user: User, authorization: string | undefined) {
  const rows = await q.listLiveKeys(db, user.id, bearerHash(authorization) ?? '')
  return {
    keys: rows.map((r) => ({
      keyId: r.id,
      label: r.label,
      prefix: r.prefix,
      createdAt: iso(r.created_at)!,
      lastUsedAt: iso(r.last_used_at),
      current: r.current,
      scope: shownScope({ role: r.scope_role, ...(r.scope_projects ? { projects: r.scope_projects } : {}) }),
    })),
  }
}

/**
 * Mints a key for the caller, shown once. The user's row is locked while the live keys are
 * counted, so concurrent mints see each other and the cap holds.
 */
export async function createOwnKey(deps: AuthDeps, user: User, label: string | null, scope: KeyScope = WRITE_SCOPE) {
  const key = await deps.db.tx(async (tx) => {
    await q.lockUser(tx, user.id)
    if ((await q.countLiveKeys(tx, user.id)) >= MAX_LIVE_KEYS)
      throw new RefusalError(409, 'key_limit', {
        message: `At most ${MAX_LIVE_KEYS} live API keys per user`,
        _meta: { _tip: 'Revoke a key you no longer use (DELETE /api/v1/keys?keyId=), then mint a new one.' },
      })
    return createApiKey(tx, user.id, label, scope)
  })
  await authChanged(deps)
  return key
}

/**
 * Revokes one of the caller's keys; it stops working at once here and, through the auth cache's
 * notification, on every replica. Never the last live key (the user would be locked out): the
 * user's row is locked, so two concurrent revokes of the last two keys cannot both pass.
 */
export async function revokeOwnKey(deps: AuthDeps, user: User, keyId: string) {
  await deps.db.tx(async (tx) => {
    await q.lockUser(tx, user.id)
    const key = await q.getApiKey(tx, keyId)
    // another user's key reads as unknown: its existence is not the caller's business
    if (!key || key.user_id !== user.id || key.revoked_at) throw notFound('key_not_found', { message: `API key ${keyId} not found` })
    if ((await q.countLiveKeys(tx, user.id)) <= 1)
      throw new RefusalError(409, 'last_key', {
        message: 'This is your only API key; revoking it would lock you out',
        _meta: { _tip: 'Mint a new key first (POST /api/v1/keys), then revoke this one.' },
      })
    await q.revokeApiKey(tx, keyId)
  })
  await authChanged(deps)
  return { success: true as const }
}

/**
 * The operator's change of a live key's scope (PATCH /admin/v1/api-keys/:keyId): it holds here at
 * once and on every replica as soon as they hear of it, as a revocation does (the auth cache).
 */
export async function rescopeKey(deps: AuthDeps, keyId: string, scope: KeyScope) {
  if (!(await q.setKeyScope(deps.db, keyId, scope))) throw notFound('key_not_found', { message: `API key ${keyId} not found or revoked` })
  await authChanged(deps)
  return { keyId, scope: shownScope(scope) }
}

// The account reads other modules need (admin, projects, the node cap): this module's public surface.
export const { getApiKey, getUser, listUsers, revokeApiKey, updateUser } = q
