import type { Db } from '../db'
import { RefusalError } from '../errors'
import { authCache } from './auth-cache'
import { generateApiKey, hashApiKey, newId } from './keys'
import type { Status, Tier, User } from './model'
import * as q from './queries'

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

export async function createApiKey(db: Db, userId: string, label: string | null) {
  const apiKey = generateApiKey()
  const keyId = newId('key')
  await q.insertApiKey(db, { id: keyId, userId, hash: hashApiKey(apiKey), label })
  return { apiKey, keyId }
}

/** The user behind `Authorization: Bearer arb_…`, or a 401. */
export function authenticate(db: Db, authorization: string | null | undefined): User | Promise<User> {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')
  const hash = m && m[1]!.startsWith('arb_') ? hashApiKey(m[1]!) : null
  if (!hash) throw unauthorized()
  // a cache hit comes back as it is, not in a promise: the common case costs no extra tick
  const user = authCache(db).get('key', hash, () => q.findUserByKeyHash(db, hash))
  return user instanceof Promise ? user.then((u) => u ?? refuse()) : (user ?? refuse())
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

// The account reads other modules need (admin, projects, the node cap): this module's public surface.
export { getApiKey, getUser, listUsers, revokeApiKey, updateUser } from './queries'
