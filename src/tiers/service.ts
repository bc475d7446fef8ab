import type { User } from '../accounts/model'
import type { Config } from '../config'

type Limits = { max_projects: number | null; max_seats: number | null; node_cap: number | null }

/** A lapsed paid plan is reported, and capped, as free (docs/reference/account.md). */
export function effectiveTier(user: Pick<User, 'tier' | 'lapsed'>) {
  return user.lapsed ? 'free' : user.tier
}

/** Whether the key may use the REST API on its own projects (strategist and contributors may not). */
export function hasApiAccess(user: User): boolean {
  return !user.contributor && effectiveTier(user) !== 'strategist'
}

export function isTeam(user: User): boolean {
  return !user.contributor && effectiveTier(user) === 'team'
}

/**
 * Limits per tier. Free is capped by configuration; builder and team are unlimited. Seats count
 * distinct people across the user's projects, the owner included: free and strategist plans are
 * single-seat.
 */
export function limitsOf(
  config: Pick<Config, 'freeTierNodeCap' | 'freeTierMaxProjects'>,
  user: Pick<User, 'tier' | 'lapsed' | 'contributor'>,
): Limits {
  if (user.contributor) return { max_projects: 0, max_seats: 1, node_cap: null }
  switch (effectiveTier(user)) {
    case 'free':
      return { max_projects: config.freeTierMaxProjects, max_seats: 1, node_cap: config.freeTierNodeCap }
    case 'strategist':
      return { max_projects: null, max_seats: 1, node_cap: null }
    default:
      return { max_projects: null, max_seats: null, node_cap: null }
  }
}

/** The current monthly period, in UTC. */
function period(now: Date) {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1))
  return { start: start.toISOString(), end: end.toISOString() }
}

export function tierStatus(config: Pick<Config, 'freeTierNodeCap' | 'freeTierMaxProjects'>, user: User, now = new Date()) {
  const tier = user.contributor ? 'strategist' : effectiveTier(user)
  const paid = tier === 'builder' || tier === 'team'
  const limit = user.creditsLimit
  return {
    tier,
    status: user.status,
    api_access: hasApiAccess(user),
    has_realtime: !user.contributor && paid,
    has_share_management: !user.contributor && tier !== 'free',
    lapsed: user.lapsed,
    ...(user.contributor ? { is_contributor: true } : {}),
    builderTrial: false,
    trialExpiresAt: null,
    credits: { used: user.creditsUsed, limit, remaining: limit === null ? null : Math.max(0, limit - user.creditsUsed) },
    limits: limitsOf(config, user),
    period: user.contributor ? null : period(now),
  }
}
