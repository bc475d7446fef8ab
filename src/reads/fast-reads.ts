import type { User } from '../accounts/model'
import { authenticate } from '../accounts/service'
import type { Deps } from '../deps'
import type { FastAnswer, FastRead } from '../http/fast-lane'
import type { KeptRequest } from '../ports/reads'
import { projectAccess } from '../projects/access'
import { listProjectsJson } from '../projects/service'
import { hasApiAccess } from '../tiers/service'

/** GET /healthz: the same bytes every time (app.ts documents the route; the fast lane answers it). */
export const HEALTHZ: FastAnswer = { body: JSON.stringify({ status: 'ok' }), type: 'application/json;charset=utf-8' }
/** what the routes' jsonText sends */
const JSON_TEXT = 'application/json; charset=utf-8'
/**
 * The project reads the read cache answers whose only check of the caller is requireProject's
 * (a share view is not among them: its link, not the caller, decides).
 */
const KEPT_READS = new Set([
  '/api/v1/nodes',
  '/api/v1/tree',
  '/api/v1/outline',
  '/api/v1/iterations',
  '/api/v1/search',
  '/api/v1/export-okf',
])

/**
 * The answers the fast lane (src/http/fast-lane.ts) may give without routing, each only when
 * the full path would give the same bytes:
 *
 * - GET /healthz;
 * - GET /api/v1/projects (with or without includeArchived) for a key with API access: the
 *   auth cache's list, as the route sends it;
 * - a GET of KEPT_READS that the read cache answered before (the same path and query, noted by the wrapper):
 *   its entry while the project's revision is unchanged, once this caller's key and access to
 *   that project pass the same checks the route makes. The query was valid then and means the
 *   same now, so the route's validation would pass again.
 *
 * Anything it cannot answer (undefined, or a thrown refusal) goes the full way.
 */
export function fastReads(deps: Deps): FastRead {
  const projects = (search: string, headers: Headers): FastAnswer | undefined | Promise<FastAnswer | undefined> => {
    const all = search === '' || search === '?includeArchived=false' ? false : search === '?includeArchived=true' ? true : undefined
    if (all === undefined) return undefined
    const listed = (user: User) => {
      if (!hasApiAccess(user)) return undefined
      const text = listProjectsJson(deps, user, all)
      return typeof text === 'string' ? { body: text, type: JSON_TEXT } : text.then((body) => ({ body, type: JSON_TEXT }))
    }
    const user = authenticate(deps, headers.get('authorization'))
    return user instanceof Promise ? user.then(listed) : listed(user)
  }

  /** Each step answers without a promise when its cache holds the answer (PGlite: every step). */
  const kept = (entry: KeptRequest, headers: Headers): FastAnswer | undefined | Promise<FastAnswer | undefined> => {
    const user = authenticate(deps, headers.get('authorization'))
    return user instanceof Promise ? user.then((u) => keptFor(entry, u)) : keptFor(entry, user)
  }
  const keptFor = (entry: KeptRequest, user: User): FastAnswer | undefined | Promise<FastAnswer | undefined> => {
    const access = projectAccess(deps, user, entry.projectId)
    // a kept answer's bytes and Content-Type are what the route sends
    return access instanceof Promise ? access.then(() => deps.reads.current(entry)) : deps.reads.current(entry)
  }

  const read: FastRead = (path, search, headers) => {
    if (path === '/healthz') return search === '' ? HEALTHZ : undefined
    if (path === '/api/v1/projects') return projects(search, headers)
    // an agent's read of a node may renew its claim (src/app.ts): the full way does that
    if (headers.has('x-agent-id') && /[?&]nodeId=/.test(search)) return undefined
    const entry = KEPT_READS.has(path) ? deps.reads.requested(path + search) : undefined
    return entry && kept(entry, headers)
  }
  read.inputFree = new Set(['/healthz'])
  return read
}
