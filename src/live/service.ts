import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { invalid, notFound } from '../errors'
import { requestAuthor } from '../history/author'
import { afterAccess, ProjectQuery } from '../http/action-schema'
import { nodeTypesOf } from '../nodes/service'
import { fieldsOf, type NodeType } from '../ports/node-data'
import {
  announcePresence,
  endPresence,
  expirePresence,
  listPresence,
  type Place,
  type Presence,
  type PresenceActor,
  postPresence,
} from '../presence/store'
import { requireProject } from '../projects/access'
import { PresenceBody } from './model'
import * as q from './queries'

type Headers = Record<string, string | undefined>

/** The actor of a presence request: history.md's (user, X-Agent-Id, X-Arbor-Via), without the key. */
function actorOf(user: User, headers: Headers): PresenceActor {
  const { actor } = requestAuthor(user, headers)
  return { userId: user.id, userName: user.name, ...(actor.agent ? { agent: actor.agent } : {}), via: actor.via }
}

/** POST /presence: "I am here" (live.md, 3). */
export async function postPresenceOf(deps: Deps, user: User, headers: Headers, body: unknown) {
  const { project, input } = await afterAccess((id) => requireProject(deps, user, id), 'body', PresenceBody, body)
  if (input.nodeId !== undefined) {
    const type = (await nodeTypesOf(deps.db, project.id, [input.nodeId])).get(input.nodeId) as NodeType | undefined
    if (!type)
      throw notFound(`Node ${input.nodeId} not found`, {
        _meta: { _tip: `GET /api/v1/nodes?projectId=${project.id} lists the nodes of this project.` },
      })
    if (input.field !== undefined && input.field !== 'parentId' && !(fieldsOf(type) as string[]).includes(input.field))
      throw invalid(`field must be a data field of a ${type} (${fieldsOf(type).join(', ')}) or parentId`)
  }
  const place: Place = {
    ...(input.nodeId !== undefined ? { nodeId: input.nodeId } : {}),
    ...(input.field !== undefined ? { field: input.field } : {}),
    ...(input.note ? { note: input.note } : {}),
  }
  const actor = actorOf(user, headers)
  const { presence, changed } = await postPresence(deps.db, project.id, actor, place, deps.now())
  if (changed) await announcePresence(deps.db, project.id, { actor, ...place, state: 'here' })
  return { presence, expiresAt: presence.expiresAt }
}

/** DELETE /presence: the caller's own presence ends at once. */
export async function deletePresenceOf(deps: Deps, user: User, headers: Headers, query: unknown) {
  const { project } = await afterAccess((id) => requireProject(deps, user, id), 'query', ProjectQuery, query)
  const gone = await endPresence(deps.db, project.id, actorOf(user, headers), deps.now())
  if (gone) await announcePresence(deps.db, project.id, gone)
  return { success: true as const }
}

/** GET /presence: who is on the project now, posted presence first, then agents holding a live claim (claim:true). */
export async function listPresenceOf(deps: Deps, user: User, query: unknown) {
  const { project } = await afterAccess((id) => requireProject(deps, user, id), 'query', ProjectQuery, query)
  return { presence: await projectPresence(deps, project.id) }
}

/** The project's presence: posted, then one per live claim. */
export async function projectPresence(deps: Pick<Deps, 'db' | 'now'>, projectId: string): Promise<Presence[]> {
  const now = deps.now()
  const posted = await listPresence(deps.db, projectId, now)
  const claims = (await q.claimPresence(deps.db, projectId, now)).map(
    (r): Presence => ({
      actor: {
        userId: r.actor?.userId ?? '',
        userName: r.actor?.userName ?? r.agent,
        agent: r.agent,
        via: r.actor?.via ?? 'api',
      },
      nodeId: r.node_id,
      since: new Date(r.claimed_at).toISOString(),
      expiresAt: new Date(r.expires_at).toISOString(),
      claim: true,
    }),
  )
  return [...posted, ...claims]
}

/** The presence loop: what ran out goes, and the stream hears `gone` for each. */
export async function expireAll(deps: Pick<Deps, 'db'>, now: Date): Promise<number> {
  const gone = await expirePresence(deps.db, now)
  for (const g of gone) await announcePresence(deps.db, g.projectId, g.message)
  return gone.length
}
