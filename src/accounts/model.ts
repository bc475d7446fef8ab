import type { KeyScope, Role } from './scope'

export const TIERS = ['free', 'strategist', 'builder', 'team'] as const
export const STATUSES = ['active', 'trialing', 'past_due', 'canceled'] as const
export type Tier = (typeof TIERS)[number]
export type Status = (typeof STATUSES)[number]

export interface User {
  id: string
  name: string
  tier: Tier
  status: Status
  lapsed: boolean
  contributor: boolean
  creditsUsed: number
  creditsLimit: number | null
  createdAt: Date
  /** the id of the API key the request came with (GET /keys' keyId), when the user was found by a key */
  keyId?: string
  /** the scope of that key (live.md §6); none: a user not found by a key (the admin API's) */
  scope?: KeyScope
}

/** A row of `users` as the account statements select it. */
export interface UserRow extends Pick<User, 'id' | 'name' | 'tier' | 'status' | 'lapsed' | 'contributor'> {
  credits_used: number
  credits_limit: number | null
  created_at: Date | string
  key_id?: string
  scope_role?: Role
  scope_projects?: string[] | null
}

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    name: row.name,
    tier: row.tier,
    status: row.status,
    lapsed: row.lapsed,
    contributor: row.contributor,
    creditsUsed: row.credits_used,
    creditsLimit: row.credits_limit,
    createdAt: new Date(row.created_at),
    ...(row.key_id ? { keyId: row.key_id } : {}),
    ...(row.scope_role ? { scope: { role: row.scope_role, ...(row.scope_projects ? { projects: row.scope_projects } : {}) } } : {}),
  }
}

/** The admin API's view of a user. */
export function publicUser(u: User) {
  return { id: u.id, name: u.name, tier: u.tier, status: u.status, lapsed: u.lapsed, contributor: u.contributor }
}
