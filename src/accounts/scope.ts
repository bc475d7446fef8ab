import { type Static, Type } from '@sinclair/typebox'
import { RefusalError } from '../errors'
import { literals } from '../ports/schema-rules'

/**
 * Scoped keys (live.md §6): what a key may do, whatever its user may. A key has a role and,
 * optionally, the projects it works on; a key minted without a scope (every key minted before
 * the scopes existed) has role `write` and no list: everything its user may. What each route
 * and each /mutate action needs is declared once, in ./roles.ts; here are the roles, the
 * refusal, and the check.
 */
export const ROLES = ['read', 'propose', 'work', 'write'] as const
export type Role = (typeof ROLES)[number]

export interface KeyScope {
  role: Role
  /** 1–50 project ids: the key works on these only */
  projects?: readonly string[]
}

export const MAX_SCOPE_PROJECTS = 50

/** The header of GET /tier-status's answer that names the key's role (the MCP server reads it). */
export const KEY_ROLE_HEADER = 'x-arbor-key-role'

/** What each role may, in the words of the refusals, the guide and the app's Keys panel. */
export const ROLE_MAY: Record<Role, string> = {
  read: 'every read (GET), the stream, presence without a field, and POST /feedback; nothing else',
  propose: 'what read may, presence with a field, and propose and withdrawProposal of its own proposals',
  work: "what propose may, claim, renewClaim, releaseClaim, and update of a node whose live claim this key holds (sent with that claim's token)",
  write: 'everything its user may',
}

const RANK: Record<Role, number> = { read: 0, propose: 1, work: 2, write: 3 }

/**
 * What a route or an action needs of the key (./roles.ts):
 * - a role: that role or a higher one;
 * - `account`: role `write` and no project list (keys: mint, list, revoke; a new project);
 * - `claimed`: `write`, or `work` holding a live claim on the node, with its token (checked by
 *   the action's caller, which reads the claim);
 * - `action`: POST /mutate, whose action decides (ACTION_NEEDS);
 * - `public`: no key at all; `admin`: the operator's ADMIN_TOKEN, never an API key.
 */
export type Need = Role | 'account' | 'claimed' | 'action' | 'public' | 'admin'

/** The scope a key minted without one has. */
export const WRITE_SCOPE: KeyScope = Object.freeze({ role: 'write' as const })

/** Whether a key of `scope` may do everything its user may (the common case: no check at all). */
export const unrestricted = (scope: KeyScope | undefined) => !scope || (scope.role === 'write' && !scope.projects)

const TIP_ROLE =
  'Use a key whose role may, or mint one: POST /api/v1/keys {label, scope:{role, projects?}} with a key of role write and no project list (the app: Settings, API keys), or on the server `arbor key mint USER --role ROLE [--project ID]`.'

/** The refusal of a call outside the key's role: 403 key_scope naming the role and what it may. */
export function roleRefusal(scope: KeyScope, what: string, needed: string): RefusalError {
  return new RefusalError(403, 'key_scope', {
    message: `This key has role ${scope.role}${scope.projects ? ` (projects ${scope.projects.join(', ')})` : ''}, which allows ${ROLE_MAY[scope.role]}. ${what} needs ${needed}.`,
    _meta: { _tip: TIP_ROLE },
  })
}

/** The refusal of a project outside the key's `projects`. */
export function projectRefusal(scope: KeyScope, projectId: string): RefusalError {
  return new RefusalError(403, 'key_scope', {
    message: `This key works on projects ${scope.projects!.join(', ')} only, not on ${projectId}; its role ${scope.role} allows ${ROLE_MAY[scope.role]}, on those projects.`,
    _meta: {
      _tip: `Use a key whose scope lists ${projectId}, or mint one: POST /api/v1/keys {scope:{role:'${scope.role}', projects:['${projectId}']}} with a key of role write and no project list, or \`arbor key mint USER --role ${scope.role} --project ${projectId}\` on the server.`,
    },
  })
}

const NEEDED: Record<Exclude<Need, 'action' | 'public' | 'admin'>, string> = {
  read: 'a key with any role',
  propose: 'a key with role propose, work or write',
  work: 'a key with role work or write',
  write: 'a key with role write',
  account: 'a key with role write and no project list',
  claimed: "a key with role write, or role work holding a live claim on the node (sent with that claim's token)",
}

/**
 * Throws 403 key_scope when a key of `scope` may not do what needs `need`; `claimed` passes a
 * `work` key here (its caller checks the claim). `what` names the call (`POST /api/v1/webhooks`,
 * `the action delete`).
 */
export function requireNeed(scope: KeyScope | undefined, need: Need, what: string): void {
  if (unrestricted(scope) || need === 'public' || need === 'admin' || need === 'action') return
  const s = scope!
  const ok =
    need === 'account' ? s.role === 'write' && !s.projects : need === 'claimed' ? RANK[s.role] >= RANK.work : RANK[s.role] >= RANK[need]
  if (!ok) throw roleRefusal(s, what, NEEDED[need])
}

/** Throws 403 key_scope when the key's `projects` do not include `projectId`. */
export function requireScopeProject(scope: KeyScope | undefined, projectId: string): void {
  if (scope?.projects && !scope.projects.includes(projectId)) throw projectRefusal(scope, projectId)
}

/** The scope as GET /keys shows it: `{role}` or `{role, projects}`. */
export const shownScope = (scope: KeyScope | undefined): { role: Role; projects?: string[] } =>
  scope ? { role: scope.role, ...(scope.projects ? { projects: [...scope.projects] } : {}) } : { role: 'write' }

/** A scope in a request body or an answer, for the routes' validation and the OpenAPI document. */
export const ScopeSchema = Type.Object(
  {
    role: literals(ROLES, { description: `read, propose, work or write (${ROLES.map((r) => `${r}: ${ROLE_MAY[r]}`).join('; ')})` }),
    projects: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        minItems: 1,
        maxItems: MAX_SCOPE_PROJECTS,
        description: 'the projects the key works on (1–50 ids); without it, every project of its user',
      }),
    ),
  },
  { additionalProperties: false, description: "a key's scope (live.md §6); without one, role write on every project" },
)

/** A scope ScopeSchema let through (the routes' checkInput, the CLI's --role and --project: src/cli/users.ts), as stored: its projects once each. */
export function checkedScope(value: Static<typeof ScopeSchema>): KeyScope {
  return value.projects ? { role: value.role, projects: [...new Set(value.projects)] } : { role: value.role }
}
