import { Elysia } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { documentedBody, documentedResponse } from '../http/documented'
import { runIdempotent } from '../http/idempotency'
import { requireProject } from '../projects/access'
import { MutateBody, MutateResult } from './model'
import { actionOf, afterCommit, authorOfRequest, NOT_IDEMPOTENT, runAction } from './service'

export const mutateRoutes = (deps: Deps) =>
  new Elysia({ name: 'mutate' }).derive(withUser(deps)).post(
    '/mutate',
    async ({ user, body, headers, set }) => {
      const { found, request: sent } = actionOf(body)
      const { idempotencyKey, ...request } = sent
      const key = NOT_IDEMPOTENT.has(request.action) ? undefined : (headers['idempotency-key'] ?? idempotencyKey)
      // the body is checked inside the idempotent run, so a refusal is stored and replayed like any answer
      // a replay needs the access a first run would: the caller may have lost the project since
      const authorize = typeof request.projectId === 'string' ? () => requireProject(deps, user, request.projectId) : undefined
      const author = await authorOfRequest(deps, user, headers, sent)
      const outcome = await runIdempotent(
        deps.db,
        user.id,
        key,
        request,
        (db) => runAction(found, { ...deps, db, author }, user, request),
        {
          authorize,
        },
      )
      if (outcome.replayed) set.headers['idempotent-replayed'] = 'true'
      set.status = outcome.status
      deps.wake('events')
      deps.wake('classify')
      return outcome.replayed || outcome.status !== 200 ? outcome.body : await afterCommit(deps, request, outcome.body)
    },
    {
      // no Elysia body schema: its messages are not api.md's. The body is checked by runAction
      // against the action's schema (ACTION_BODIES, src/mutate/model.ts); OpenAPI documents the same schemas.
      detail: {
        summary: 'Every write: nodes, iterations, projects',
        tags: ['mutate'],
        requestBody: documentedBody(MutateBody),
        ...documentedResponse(MutateResult),
      },
    },
  )
