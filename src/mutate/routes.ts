import { type Context, Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { checkInput } from '../http/action-schema'
import { documentedBody, documentedResponse } from '../http/documented'
import { runIdempotent } from '../http/idempotency'
import { MetaBody, ValidationBody } from '../http/schemas'
import type { Author } from '../ports/actor'
import { requireProject } from '../projects/access'
import { checkBatchCost } from './cost-limit'
import { withKeyTip, withProjectTip } from './hints'
import { ImportBody, importOkf } from './import-okf'
import { MutateBody, MutateResult } from './model'
import { type Action, actionOf, authorOfRequest, requireActionScope } from './service'

/**
 * Run the action and keep, in its answer, the changes it recorded (`changeIds`, history.md 2), so
 * that the caller can take its own write back with `revert` (the app's Ctrl+Z). Kept in the
 * stored answer, so a replay has them too; shown only to a caller that asks (`Prefer:
 * change-ids`), so every answer of docs/reference/mutate.md stays as it was. A revert's answer keeps its own.
 * Collected afresh for each run of the transaction.
 */
async function withChangeIds(found: Action, deps: Deps & { author: Author }, user: User, request: Record<string, unknown>) {
  const changeIds: number[] = []
  // 403 before 400 (docs/validation.md): the project the body names, before the body is checked
  if (typeof request.projectId === 'string') await requireProject(deps, user, request.projectId)
  // on PGlite, 413 before anything is written (issue 50, item 3)
  if (found.costLimited) await checkBatchCost(deps, request, found.schema, found.costLimited)
  const answer = await found.run({ ...deps, author: { ...deps.author, changeIds } }, user, request)
  if (changeIds.length === 0 || 'changeIds' in answer) return answer
  const { _meta, ...rest } = answer
  return { ...rest, changeIds: changeIds.sort((a, b) => a - b).map(String), ...(_meta === undefined ? {} : { _meta }) }
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
  /** One POST /mutate: the action's schema, its idempotent run, then the after-commit step. */
  async function mutate(user: User, body: unknown, headers: Record<string, string | undefined>, set: Context['set']) {
    const { found, request: sent } = actionOf(body, headers['content-type'])
    const { idempotencyKey, ...request } = sent
    // what the key may (live.md §6), before a first run or a replay
    await requireActionScope(deps, user, sent)
    const key = found.notIdempotent ? undefined : (headers['idempotency-key'] ?? idempotencyKey)
    // the body is checked inside the idempotent run, so a refusal is stored and replayed like any answer
    // a replay needs the access a first run would: the caller may have lost the project since
    const authorize = typeof request.projectId === 'string' ? () => requireProject(deps, user, request.projectId) : undefined
    const author = await authorOfRequest(deps, user, headers, sent, found.author)
    const outcome = await runIdempotent(deps, user.id, key, request, (db) => withChangeIds(found, { ...deps, db, author }, user, request), {
      authorize,
      // a claim's answer holds its claim tokens (a renewal echoes the one sent): kept sealed, never readable at rest
      sealed: found.secretAnswer === true,
    })
    if (outcome.replayed) set.headers['idempotent-replayed'] = 'true'
    set.status = outcome.status
    deps.wake('events')
    deps.wake('classify')
    const fresh = !outcome.replayed && outcome.status === 200
    const answer = fresh && found.afterCommit ? await found.afterCommit(deps, sent, outcome.body) : outcome.body
    return shown(found, answer, prefersChangeIds(headers.prefer), set)
  }

  return new Elysia({ name: 'mutate' })
    .derive(withUser(deps))
    .post(
      '/mutate',
      async ({ user, body, headers, set }) => {
        try {
          return await mutate(user, body, headers, set)
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
        const imported = await importOkf({ ...deps, author }, user, input)
        deps.wake('events')
        deps.wake('classify')
        return imported
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
