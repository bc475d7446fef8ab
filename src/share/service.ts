import { randomBytes } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { notFound, RefusalError } from '../errors'
import { listNodes, type NodeRow } from '../export/service'
import { afterAccess, ProjectQuery, ruled } from '../http/action-schema'
import { type Access, requireProject } from '../projects/access'
import { tierStatus } from '../tiers/service'
import { CreateShareBody, type PublicNode } from './model'

export type { PublicNode }

import * as q from './queries'

/** Longest expiry we store; a larger `expiresInDays` is clamped to it (a century is "never" enough). */
const MAX_DAYS = 36_500
const TOKEN_RE = /^[A-Za-z0-9_-]{16,128}$/

const bad = (error: string, message?: string) => new RefusalError(400, error, message ? { message } : {})

const projectFor = (deps: Deps, user: User, projectId: string) =>
  requireProject(deps, user, projectId, {
    deny: 'not-yours',
    unknown: () => notFound(`Project ${projectId} not found`, { message: 'No project has that id; GET /projects lists yours.' }),
  })

/**
 * Full share management (every link of the project, whoever minted it) follows
 * `has_share_management` of tier-status; on a project owned by a team plan every member has it,
 * as with the rest of a team project's features. Without it a user still lists and revokes the
 * links they minted themselves: whoever can mint a link can take it back (docs/api-guide.md, Share links).
 * Returns the user whose links the caller manages, or null for every link.
 */
function managedCreator(deps: Deps, user: User, access: Access): string | null {
  const p = access.project
  const teamProject = p.owner_tier === 'team' && !p.owner_lapsed && !p.owner_contributor
  return teamProject || tierStatus(deps.config, user).has_share_management ? null : user.id
}

const managementUnavailable = () =>
  new RefusalError(403, 'share_management_unavailable', {
    message: 'Listing and revoking share links needs a paid plan (has_share_management in GET /tier-status)',
    _meta: { _tip: 'Without it you list and revoke the links you minted yourself; this one was minted by someone else.' },
  })

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null)
export const shareUrl = (deps: Deps, token: string) => `${deps.config.publicBaseUrl}/s/${token}`

/** The settings stored with a link: its goal ids once each (their shape was checked by CreateShareBody). */
const cleanSettings = (settings: CreateShareBody['settings']): { includedGoalIds?: string[] } =>
  settings?.includedGoalIds ? { includedGoalIds: [...new Set(settings.includedGoalIds)] } : {}

export async function createShare(deps: Deps, user: User, raw: unknown) {
  const { project, input: body } = await afterAccess((id) => projectFor(deps, user, id), 'body', CreateShareBody, raw)
  const settings = cleanSettings(body.settings)
  const now = deps.now()
  const days = body.expiresInDays
  // docs/reference/share.md: only a positive number sets an expiry; anything else is treated as absent
  const expires = typeof days === 'number' && Number.isFinite(days) && days > 0
  const expiresAt = expires ? new Date(now.getTime() + Math.min(days, MAX_DAYS) * 86_400_000) : null
  const token = randomBytes(24).toString('base64url') // 192 random bits
  const row = (await q.insert(deps.db, { token, projectId: project.id, userId: user.id, settings, now, expiresAt }))!
  const tips: string[] = []
  if (settings.includedGoalIds && (await q.countGoals(deps.db, project.id, settings.includedGoalIds)) === 0)
    tips.push(
      'None of includedGoalIds is a goal of this project, so the link shows an empty view. Mint a new link with goal ids from GET /nodes?type=goal.',
    )
  if (days !== undefined && days !== null && !expires)
    tips.push('expiresInDays was not a positive number, so it was ignored: this link never expires.')
  tips.push(
    expiresAt
      ? `Anyone with the URL can read the shared tree until ${expiresAt.toISOString()}.`
      : 'Anyone with the URL can read the shared tree until you revoke it (DELETE /share).',
  )
  return { token: row.token, url: shareUrl(deps, row.token), expiresAt: iso(row.expires_at), _meta: { _tip: tips.join(' ') } }
}

export async function listShares(deps: Deps, user: User, query: unknown) {
  const access = await afterAccess((id) => projectFor(deps, user, id), 'query', ProjectQuery, query)
  const createdBy = managedCreator(deps, user, access)
  const rows = await q.listByProject(deps.db, access.project.id, deps.now(), createdBy)
  const scope = createdBy ? ' Your plan lists the links you minted yourself.' : ''
  return {
    tokens: rows.map((r) => ({
      token: r.token,
      url: shareUrl(deps, r.token),
      settings: r.settings,
      createdAt: iso(r.created_at)!,
      expiresAt: iso(r.expires_at),
      revokedAt: iso(r.revoked_at),
      active: r.active,
    })),
    _meta: {
      _tip:
        (rows.length ? 'Newest first. Revoke with DELETE /share?projectId&token.' : 'No share links yet: POST /share mints one.') + scope,
    },
  }
}

/** DELETE /share's query string, checked after the access check (checkInput); other names are ignored. */
export const RevokeQuery = Type.Object(
  { projectId: Type.String(), token: ruled(Type.String({ minLength: 1 }), () => bad('token is required')) },
  { additionalProperties: true },
)

export async function revokeShare(deps: Deps, user: User, raw: unknown) {
  const { input: query, ...access } = await afterAccess((id) => projectFor(deps, user, id), 'query', RevokeQuery, raw)
  const createdBy = managedCreator(deps, user, access)
  const now = deps.now()
  const revoked = await q.revoke(deps.db, access.project.id, query.token, now, createdBy)
  // only after the revoke (its own condition decides): a live link someone else minted is refused
  if (!revoked && createdBy && (await q.isLive(deps.db, access.project.id, query.token, now))) throw managementUnavailable()
  return {
    success: true as const,
    revoked: revoked ? query.token : null,
    _meta: {
      _tip: revoked
        ? 'Revoked: the link stopped serving now.'
        : 'Nothing to revoke: the token is unknown here, already revoked or expired.',
    },
  }
}

/**
 * What a link shows: every node (or, with includedGoalIds, those goals and everything beneath
 * them), in creation order, with `notes` removed.
 */
export function viewNodes(rows: NodeRow[], includedGoalIds?: string[]): PublicNode[] {
  let keep: Set<string> | null = null
  if (includedGoalIds) {
    const children = new Map<string, string[]>()
    for (const r of rows) if (r.parent_id) children.set(r.parent_id, [...(children.get(r.parent_id) ?? []), r.id])
    const goals = new Set(rows.filter((r) => r.type === 'goal').map((r) => r.id))
    const queue = includedGoalIds.filter((id) => goals.has(id))
    keep = new Set(queue)
    while (queue.length)
      for (const child of children.get(queue.pop()!) ?? []) {
        if (keep.has(child)) continue
        keep.add(child)
        queue.push(child)
      }
  }
  return rows
    .filter((r) => !keep || keep.has(r.id))
    .map((r) => {
      const { notes: _notes, ...data } = r.data
      return { id: r.id, type: r.type, parentId: r.parent_id, data }
    })
}

/**
 * The public view of a live link (JSON, or rendered by `render` with its headers), or a 404 for
 * an unknown, revoked or expired token. The link is looked up at every request (a revoke takes
 * effect at once); what it shows is kept while the project is unchanged.
 */
export async function publicView(
  deps: Deps,
  token: string,
  page?: { render: (view: PublicView) => string; headers: Record<string, string> },
) {
  const link = TOKEN_RE.test(token) ? await q.getLive(deps.db, token, deps.now()) : undefined
  if (!link) throw notFound('share_not_found', { message: 'This share link does not exist, was revoked or has expired' })
  const load = async (): Promise<PublicView> => ({
    project: { name: link.project_name },
    nodes: viewNodes(await listNodes(deps.db, link.project_id), link.settings.includedGoalIds),
  })
  return deps.reads.answer(link.project_id, `${page ? 'share-page' : 'share'}\n${token}`, page ?? {}, load)
}

export interface PublicView {
  project: { name: string }
  nodes: PublicNode[]
}

/** The expiry loop: links past expiresAt stop being active (reads check expiresAt too). */
export async function expireShares(deps: Deps, now: Date) {
  return q.expireDue(deps.db, now)
}
