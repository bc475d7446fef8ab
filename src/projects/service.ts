import { authChanged } from '../accounts/auth-cache'
import type { User } from '../accounts/model'
import { requireScopeProject } from '../accounts/scope'
import { getUser } from '../accounts/service'
import type { Deps } from '../deps'
import { ErrorListError, invalid, notFound, projectAccessDenied, RefusalError } from '../errors'
import { afterAccess, ProjectQuery, trimmedName } from '../http/action-schema'
import { hasApiAccess, limitsOf } from '../tiers/service'
import { type Access, requireApiAccess, requireProject, tierRequired } from './access'
import { type AddProjectBody, ArchiveInput, MemberInput, type RenameProjectBody } from './model'
import * as q from './queries'

export const PROJECT_ID_RE = /^[a-z0-9][a-z0-9-]{1,62}$/
const MAX_NAME = 100

/**
 * The projects usable as projectId (docs/reference/authentication.md). A key without API access of its
 * own (strategist, contributor) sees only member projects of team owners, and gets the tier 403
 * when it has none: such a membership is its only way into the API.
 */
export async function listProjects(deps: Deps, user: User, includeArchived: boolean) {
  const answer = await listAllProjects(deps, user, includeArchived)
  // a key with a project list (live.md §6) sees only those
  const only = user.scope?.projects
  return only ? { projects: answer.projects.filter((p) => only.includes(p.id)) } : answer
}

async function listAllProjects(deps: Deps, user: User, includeArchived: boolean) {
  // a copy: the cached list is read-only
  if (hasApiAccess(user)) return { projects: [...(await cachedList(deps, user, includeArchived, false))] }
  const usable = await cachedList(deps, user, true, true)
  if (usable.length === 0) throw tierRequired()
  return { projects: usable.filter((p) => includeArchived || !p.archived) }
}

/**
 * listProjects' answer as JSON text, for GET /projects: every agent's first call, whose list
 * changes only with a write that empties the auth cache. The text of each cached list is made
 * once and dropped with the list (a WeakMap on it), which spares each request the serializing.
 */
export function listProjectsJson(deps: Deps, user: User, includeArchived: boolean): string | Promise<string> {
  if (!hasApiAccess(user) || user.scope?.projects) return listProjects(deps, user, includeArchived).then((answer) => JSON.stringify(answer))
  // a cached list comes back as it is, not in a promise (the fast lane answers it without a tick)
  const list = cachedList(deps, user, includeArchived, false)
  return list instanceof Promise ? list.then((l) => listText(deps, l)) : listText(deps, list)
}

function listText(deps: Deps, list: object): string {
  let text = deps.auth.listTexts.get(list)
  if (text === undefined) deps.auth.listTexts.set(list, (text = JSON.stringify({ projects: list })))
  return text
}

const cachedList = (deps: Deps, user: User, all: boolean, teamOnly: boolean) =>
  deps.auth.get('projects', `${user.id}\n${all}\n${teamOnly}`, () => q.listForUser(deps.db, user.id, all, teamOnly))

/** A name as stored: trimmed, at most MAX_NAME characters (non-blank per the schema, ./model.ts). */
const cleanName = (name: string) => trimmedName(name, MAX_NAME, (got) => `name must be at most ${MAX_NAME} characters (got ${got})`)

/** The default id: the name lowercased, whitespace runs replaced by dashes, other punctuation kept (docs/reference/resources.md). */
export function defaultProjectId(name: string): string {
  return name.toLowerCase().replace(/\s+/g, '-')
}

export async function addProject(deps: Deps, user: User, body: AddProjectBody) {
  requireApiAccess(user)
  const input = body.project
  const name = cleanName(input.name)
  const id: string = input.id ?? defaultProjectId(name)
  // an explicit id was checked by the schema; the default one derived from the name is checked here
  if (!PROJECT_ID_RE.test(id))
    throw invalid(`Invalid project id "${id}": use 2 to 63 lowercase letters, digits and dashes, starting with a letter or digit`, {
      _tip: 'Names with punctuation need an explicit project.id, for example "q3-plan".',
    })
  const max = limitsOf(deps.config, user).max_projects
  const added = await deps.db.tx(async (tx) => {
    // concurrent creations of one owner count one after another, so the limit holds
    if (max !== null) await q.lockOwner(tx, user.id)
    if (max !== null && (await q.countOwned(tx, user.id)) >= max)
      throw new RefusalError(403, 'project_limit', {
        message: `Your plan allows ${max} ${max === 1 ? 'project' : 'projects'}; archiving one does not free a slot`,
        limit: max,
      })
    const project = await q.insertProject(tx, id, name, user.id)
    if (!project) throw invalid(`Project id ${id} is already taken; choose another id`, { _tip: 'Pass project.id to choose the id.' })
    const later = await q.insertSystemIteration(tx, id)
    return {
      success: true,
      project: { id: project.id, name: project.name },
      iterations: [later],
      _meta: { _tip: `Project ${id} is ready. Add a goal with {action:"add", projectId:"${id}", node:{type:"goal", data:{label}}}.` },
    }
  })
  await authChanged(deps)
  return { answer: added } // a new project has no cached read: nothing to save
}

/** renameProject: the owner's, checked on the access the edge of POST /mutate asked (src/mutate/routes.ts). */
export async function renameProject(deps: Deps, { project, role }: Access, body: RenameProjectBody) {
  if (role !== 'owner') throw projectAccessDenied('Only the project owner can rename a project')
  const name = cleanName(body.name)
  const renamed = await q.rename(deps.db, project.id, name)
  await authChanged(deps)
  return {
    // no event, no change: the revision advanced when the write is saved (the export, the outline and share views show the name)
    outbox: { projectId: project.id, events: [], changes: [], revised: true },
    answer: { success: true, project: renamed, _meta: { _tip: 'The project id never changes; only its display name did.' } },
  }
}

/** PATCH /projects: the tier check, then the project the caller owns (404 otherwise), then the body (ArchiveInput): 404 before 400. */
export async function setArchived(deps: Deps, user: User, raw: unknown) {
  requireApiAccess(user)
  const notOwned = (id: string) => notFound(`Project ${id} not found (you can only archive projects you own)`)
  const owned = async (id: string) => {
    requireScopeProject(user.scope, id)
    if ((await q.getAccess(deps.db, id, user.id))?.role !== 'owner') throw notOwned(id)
    return {}
  }
  const { input: body } = await afterAccess(owned, 'body', ArchiveInput, raw)
  const id = body.projectId
  const project = await q.setArchived(deps.db, id, user.id, body.archived)
  if (project) await authChanged(deps)
  if (!project) throw notOwned(id)
  const tip = body.archived
    ? 'Archived: hidden from GET /projects unless includeArchived=true; nodes, share links and webhooks keep working.'
    : 'Unarchived: listed again in GET /projects.'
  return { project: { ...project, role: 'owner' as const }, _meta: { _tip: tip, tip } }
}

// ---- members ----

export async function listMembers(deps: Deps, user: User, query: unknown) {
  const { project } = await afterAccess((id) => requireProject(deps, user, id), 'query', ProjectQuery, query)
  const rows = await q.listMembers(deps.db, project.id)
  return { members: rows.map((r) => ({ userId: r.user_id, name: r.name, role: r.role })) }
}

async function requireOwner(deps: Deps, user: User, projectId: unknown) {
  const access = await requireProject(deps, user, projectId)
  if (access.role !== 'owner') throw projectAccessDenied('Only the project owner can manage members')
  return access
}

/** The project and the user a member change names, once the caller is known to own the project (its 403 before any 400). */
async function memberChange(deps: Deps, user: User, where: 'query' | 'body', value: unknown) {
  const { project, input } = await afterAccess((id) => requireOwner(deps, user, id), where, MemberInput, value)
  return { project, userId: input.userId }
}

export async function addMember(deps: Deps, user: User, body: unknown) {
  const { project, userId } = await memberChange(deps, user, 'body', body)
  const member = await getUser(deps.db, userId)
  if (!member) throw notFound('user_not_found', { message: `User ${userId} not found` })
  if (member.id === user.id) throw new RefusalError(409, 'already_member', { message: 'The owner is already on the project' })
  const added = await deps.db.tx(async (tx) => {
    const maxSeats = limitsOf(deps.config, user).max_seats
    if (maxSeats !== null && (await q.countSeatsWith(tx, user.id, member.id)) > maxSeats)
      throw new RefusalError(403, 'seat_limit', {
        message: `Your plan allows ${maxSeats} ${maxSeats === 1 ? 'seat' : 'seats'} across your projects, the owner included`,
        max_seats: maxSeats,
      })
    if (!(await q.insertMember(tx, project.id, member.id)))
      throw new RefusalError(409, 'already_member', { message: `User ${member.id} is already a member of ${project.id}` })
    return { member: { userId: member.id, name: member.name, role: 'member' as const } }
  })
  await authChanged(deps)
  return added
}

export async function removeMember(deps: Deps, user: User, query: unknown) {
  const { project, userId } = await memberChange(deps, user, 'query', query)
  if (userId === project.owner_id) throw new ErrorListError(['The project owner cannot be removed'])
  if (!(await q.deleteMember(deps.db, project.id, userId)))
    throw notFound('member_not_found', { message: `User ${userId} is not a member of ${project.id}` })
  await authChanged(deps)
  return { success: true as const }
}

export type { AccessRow } from './queries'
