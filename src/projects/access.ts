import type { User } from '../accounts/model'
import { requireScopeProject } from '../accounts/scope'
import type { Deps } from '../deps'
import { projectAccessDenied, RefusalError } from '../errors'
import { hasApiAccess } from '../tiers/service'
import { importingRefusal } from './importing'
import { type AccessRow, getAccess } from './queries'

export const TIER_REQUIRED = 'REST API access requires Builder or Team tier'
export const SHARED_NEEDS_TEAM = 'Shared-project API access requires the project owner to be on the Team tier'

export const tierRequired = () => new RefusalError(403, TIER_REQUIRED, { message: TIER_REQUIRED })

export interface Access {
  project: AccessRow
  role: 'owner' | 'member'
}

/** How a refusal reads: most endpoints say project_access_denied; share and webhooks say 'Not your project'. */
export type DenyStyle = 'access' | 'not-yours'

/** How an endpoint words its refusals: `deny`, and for an unknown project `unknown` (denied, by default). */
type AccessOpts = { deny?: DenyStyle; unknown?: () => Error }
type AccessDeps = Pick<Deps, 'db' | 'auth' | 'importing'>

/**
 * The caller's access to a project, with every tier rule of docs/reference/authentication.md (3–5):
 * owners need API access themselves; members need the owner to be on team (a strategist or
 * contributor member of a team-owned project is let in). Unknown projects read as denied,
 * unless the endpoint says otherwise with `unknown`.
 */
export async function requireProject(deps: AccessDeps, user: User, projectId: unknown, opts: AccessOpts = {}): Promise<Access> {
  return projectAccess(deps, user, projectId, opts)
}

/**
 * requireProject's check, answered without a promise when the auth cache holds the row (the
 * fast lane's case, src/reads/fast-reads.ts); a refusal is thrown, not returned in a promise.
 */
export function projectAccess(deps: AccessDeps, user: User, projectId: unknown, opts: AccessOpts = {}): Access | Promise<Access> {
  if (typeof projectId !== 'string' || projectId === '') throw denial(opts)
  // a key with a project list (live.md §6) works on those only: 403 key_scope before anything is read
  requireScopeProject(user.scope, projectId)
  return listedProjectAccess(deps, user, projectId, opts)
}

/**
 * The project's access once the key's project list has let `projectId` through: projectAccess
 * without that first question, for the one caller that asks it itself, before the key's role
 * (POST /mutate's edge, src/mutate/routes.ts `actionAccess`), so that a request asks it once.
 */
export function listedProjectAccess(deps: AccessDeps, user: User, projectId: string, opts: AccessOpts = {}): Access | Promise<Access> {
  const deny = () => denial(opts)
  if (projectId === '') throw deny()
  // null (no such project) is cached too: creating one empties the cache
  const row = deps.auth.get('access', `${projectId}\n${user.id}`, async () => (await getAccess(deps.db, projectId, user.id)) ?? null)
  const check = (row: AccessRow | null): Access => {
    if (!row) throw opts.unknown ? opts.unknown() : deny()
    if (!row.role) throw deny()
    // an import still writes it: its owner hears so, anyone else as of a project that is not theirs
    if (row.importing && deps.importing !== row.id) throw row.role === 'owner' ? importingRefusal(row.id) : deny()
    if (row.role === 'owner') {
      if (!hasApiAccess(user)) throw tierRequired()
    } else {
      const ownerIsTeam = !row.owner_contributor && !row.owner_lapsed && row.owner_tier === 'team'
      if (!ownerIsTeam) throw new RefusalError(403, SHARED_NEEDS_TEAM, { message: SHARED_NEEDS_TEAM })
    }
    return { project: row, role: row.role }
  }
  return row instanceof Promise ? row.then(check) : check(row)
}

/** A refusal of the project as the endpoint words it (`deny`). */
const denial = (opts: AccessOpts) => (opts.deny === 'not-yours' ? new RefusalError(403, 'Not your project') : projectAccessDenied())

/** Calls that are not about one project need the key's own API access. */
export function requireApiAccess(user: User): void {
  if (!hasApiAccess(user)) throw tierRequired()
}
