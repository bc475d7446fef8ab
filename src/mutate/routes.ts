import { type Context, Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { User } from '../accounts/model'
import { ACTION_NEEDS } from '../accounts/roles'
import { requireNeed, requireScopeProject, roleRefusal } from '../accounts/scope'
import { claimHeldByKey } from '../claims/service'
import type { Deps } from '../deps'
import { invalid } from '../errors'
import { checkInput } from '../http/action-schema'
import { documentedBody, documentedResponse } from '../http/documented'
import { runIdempotent } from '../http/idempotency'
import { isJsonType, notReadAsJson } from '../http/json-body'
import { MetaBody, ValidationBody } from '../http/schemas'
import type { Node } from '../nodes/model'
import { isActionName } from '../ports/actions'
import { type Access, listedProjectAccess } from '../projects/access'
import { possibleDuplicate } from '../search/service'
import { withKeyTip, withProjectTip } from './hints'
import { ImportBody, importOkf } from './import-okf'
import { MutateBody, MutateResult } from './model'
import { authorOfRequest, runWrite } from './sequence'
import { type Action, actions } from './service'

/**
 * The edge of every write (POST /mutate), in the order it runs (ARCHITECTURE.md, "How a write
 * flows", steps 1 and 10): the content type, the row of the action the body names (`actionNamed`),
 * who may make it (`actionAccess`: the key's project list, its role, the project's access, each
 * asked once here; the access handed down to the action; 403 before any 400 about the body), the
 * one idempotent transaction (src/http/idempotency.ts `runIdempotent`), whose body is the sequence
 * of every write (src/mutate/sequence.ts `runWrite`: steps 2 to 10, from the body's check to the
 * loops woken once it commits), then, after the commit, the near-duplicate advisory and the answer
 * as shown. Each step is a function of this file or a call into a file the write has not entered
 * yet; the run is handed to the transaction as a one-line callback of this file calling `runWrite`,
 * the one call back into it, and nothing else of the run comes back into it.
 */

/** One POST /mutate, top to bottom. */
async function mutate(deps: Deps, user: User, body: unknown, headers: Record<string, string | undefined>, set: Context['set']) {
  const contentType = headers['content-type']
  // a body sent as a form or text is not ours to guess at: say how it was read
  if (contentType === undefined ? typeof body === 'string' && body !== '' : !isJsonType(contentType))
    throw invalid(notReadAsJson(contentType))
  // what the body names, as sent: checked once, inside the run (src/mutate/sequence.ts `runWrite`, step 2)
  const sent = fieldsOf(body)
  const found = actionNamed(sent.action)
  const { idempotencyKey, ...request } = sent
  // who may make it: the key's project list, its role, the project's access, each asked once; 403 before 400
  // (docs/validation.md), for a first run and a replay alike (the caller may have lost the project since)
  const access = await actionAccess(deps, user, sent)
  const key = found?.notIdempotent
    ? undefined
    : (headers['idempotency-key'] ?? (typeof idempotencyKey === 'string' ? idempotencyKey : undefined))
  // the body is checked inside the idempotent run, so a refusal is stored and replayed like any answer;
  // a claim's answer holds its claim tokens (a renewal echoes the one sent): kept sealed, never readable at rest
  const outcome = await runIdempotent(
    deps,
    user.id,
    key,
    isObject(body) ? request : body,
    async (db) => (await runWrite({ ...deps, db }, found, { user, access }, body, { headers })).answer,
    {
      sealed: found?.secretAnswer === true,
    },
  )
  if (outcome.replayed) set.headers['idempotent-replayed'] = 'true'
  set.status = outcome.status
  // after the commit, a fresh add's near-duplicate advisory (its row's `nearDuplicate`; a run that answered has checked
  // the body: it named this action): never inside the transaction, where an embedding would hold every other writer
  // on PGlite; advisory only, so a replayed answer carries what the first one stored
  const added = !outcome.replayed && outcome.status === 200 && found!.nearDuplicate ? addedNode(outcome.body) : undefined
  const duplicate = added && access ? await possibleDuplicate(deps, access.project.id, added) : null
  return shown(found!, withAdvisory(outcome.body, duplicate), prefersChangeIds(headers.prefer), set)
}

/** The row of the action a client names, or undefined (a name of Object.prototype, or no string, is no action). */
const actionNamed = (name: unknown): Action | undefined => (isActionName(name) ? actions[name] : undefined)
const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)
/** The fields of a body as sent (none when it is no JSON object): what the edge reads before the run checks them. */
const fieldsOf = (body: unknown): Record<string, unknown> => (isObject(body) ? body : {})

/**
 * Who may make the action the body names, asked once by the edge, before a first run or a replay,
 * and handed down to the action (undefined when the body names no project string: addProject's,
 * or one its schema refuses 403 once checked). Three questions, each asked once, in the order that
 * decides which 403 a caller outside more than one of them hears:
 * 1. the key's project list (live.md §6): a key scoped to other projects hears that it works on
 *    those (403 key_scope), whatever its role, and before anything of the project is read;
 * 2. the key's role for the action (ACTION_NEEDS in src/accounts/roles.ts; a name that is no
 *    action needs `write`), and for a `work` key's `update` a live claim on the node that this key
 *    took, sent as `claimToken` (403 key_scope);
 * 3. the project's access (src/projects/access.ts, the rest of `requireProject`'s check: 403
 *    project_access_denied, or the tier's words; a stranger's and a member's answer).
 * Every other project-scoped route asks its key's role first (src/app.ts) and then
 * `requireProject`, whose first question is the list; here the list comes first, so the edge
 * asks it itself and then only the rest of that check (`listedProjectAccess`).
 */
async function actionAccess(deps: Deps, user: User, sent: Record<string, unknown>): Promise<Access | undefined> {
  const { projectId, nodeId, claimToken } = sent
  const scope = user.scope
  // 1. the key's project list
  if (typeof projectId === 'string') requireScopeProject(scope, projectId)
  // 2. its role for the action as sent (checked later, in the run: a name of Object.prototype is no action)
  const need = isActionName(sent.action) ? ACTION_NEEDS[sent.action] : 'write'
  requireNeed(scope, need, `The action ${String(sent.action)}`)
  if (need === 'claimed' && scope && scope.role !== 'write') {
    const held =
      typeof projectId === 'string' &&
      typeof nodeId === 'string' &&
      typeof claimToken === 'string' &&
      user.keyId &&
      (await claimHeldByKey(deps.db, projectId, nodeId, claimToken, user.keyId, deps.now()))
    if (!held)
      throw roleRefusal(
        scope,
        `An update of ${typeof nodeId === 'string' ? nodeId : 'a node'} without a live claim of this key`,
        `a key with role write, or this key's live claim on the node sent as claimToken (claim it first: {action:'claim', projectId, nodeIds:['${typeof nodeId === 'string' ? nodeId : 'NODE_ID'}'], agent})`,
      )
  }
  // 3. the project's access
  return typeof projectId === 'string' ? await listedProjectAccess(deps, user, projectId) : undefined
}

/** The node a fresh `add` answered (src/nodes/service.ts: its node and its _meta), if it answered one. */
function addedNode(answer: Record<string, unknown>): Node | undefined {
  const added = answer as { success?: unknown; node?: Node }
  return added.success === true && added.node ? added.node : undefined
}

/** `answer` with `advisory` added to its `_meta` (as `advisory`, or beside the ones it has, `advisories`). */
function withAdvisory(answer: Record<string, unknown>, advisory: object | null): Record<string, unknown> {
  if (!advisory) return answer
  const meta: Record<string, unknown> = { ...((answer._meta as Record<string, unknown> | undefined) ?? {}) }
  if (!meta.advisory) meta.advisory = advisory
  else meta.advisories = [...((meta.advisories as unknown[] | undefined) ?? [meta.advisory]), advisory]
  return { ...answer, _meta: meta }
}

/** The preference of RFC 7240 a caller sends to have a write's answer name its changes. */
const CHANGE_IDS = 'change-ids'
const prefersChangeIds = (prefer: string | undefined) =>
  !!prefer &&
  prefer
    .split(',')
    .map((p) => p.split(';')[0]!.trim().toLowerCase())
    .includes(CHANGE_IDS)

/** The answer as the caller sees it: a write's `changeIds` only when asked for (a revert's are its own result). */
function shown(found: Action, body: Record<string, unknown>, wanted: boolean, set: Context['set']): Record<string, unknown> {
  if (found.changeIdsAreResult || !('changeIds' in body)) return body
  if (wanted) {
    set.headers['preference-applied'] = CHANGE_IDS
    return body
  }
  const { changeIds: _, ...rest } = body
  return rest
}

export const mutateRoutes = (deps: Deps) => {
  return new Elysia({ name: 'mutate' })
    .derive(withUser(deps))
    .post(
      '/mutate',
      async ({ user, body, headers, set }) => {
        try {
          return await mutate(deps, user, body, headers, set)
        } catch (err) {
          throw withKeyTip(withProjectTip(err, body), body)
        }
      },
      {
        // no Elysia body schema: its messages are not docs/reference/mutate.md's. The body is checked by the action's run
        // against the action's schema (ACTION_BODIES, src/mutate/model.ts); OpenAPI documents the same schemas.
        detail: {
          summary: 'Every write: nodes, iterations, projects',
          tags: ['mutate'],
          requestBody: documentedBody(MutateBody),
          ...documentedResponse(MutateResult),
        },
      },
    )
    .post(
      '/import-okf',
      async ({ user, body, headers }) => {
        // the whole import is one request of the history (its changes share one requestId), made `via` the caller's X-Arbor-Via
        const input = checkInput('body', ImportBody, body)
        const author = await authorOfRequest(deps, user, headers, { action: 'import' })
        return importOkf({ ...deps, author }, user, input)
      },
      {
        response: {
          200: t.Object({
            success: t.Literal(true),
            project: t.Object({ id: t.String(), name: t.String() }),
            nodes: t.Integer(),
            _meta: MetaBody,
          }),
          400: ValidationBody,
        },
        detail: {
          requestBody: documentedBody(ImportBody),
          summary: 'Import an OKF bundle as a new project: all of it, or nothing (written in chunks; the project is shown once whole)',
          tags: ['export'],
        },
      },
    )
}
