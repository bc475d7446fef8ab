import { Elysia, t } from 'elysia'
import type { Deps } from '../deps'
import { withUser } from '../http/auth'
import { runIdempotent } from '../http/idempotency'
import { actionOf, afterCommit, NOT_IDEMPOTENT } from './service'

export const mutateRoutes = (deps: Deps) =>
  new Elysia({ name: 'mutate' }).derive(withUser(deps)).post(
    '/mutate',
    async ({ user, body, headers, set }) => {
      const { idempotencyKey, ...request } = body as Record<string, any>
      const handler = actionOf(request)
      const key = NOT_IDEMPOTENT.has(request.action) ? undefined : (headers['idempotency-key'] ?? idempotencyKey)
      const outcome = await runIdempotent(deps.db, user.id, key, request, (db) => handler({ ...deps, db }, user, request))
      if (outcome.replayed) set.headers['idempotent-replayed'] = 'true'
      set.status = outcome.status
      deps.wake('events')
      deps.wake('classify')
      return outcome.replayed || outcome.status !== 200 ? outcome.body : await afterCommit(deps, request, outcome.body)
    },
    {
      body: t.Object(
        {
          action: t.String({
            description:
              'add, update, delete, restore, batch, classify, addIteration, updateIteration, deleteIteration, reorderIterations, addProject, renameProject',
          }),
          projectId: t.Optional(t.String()),
          idempotencyKey: t.Optional(t.String({ description: 'same as the Idempotency-Key header' })),
        },
        { additionalProperties: true },
      ),
      response: { 200: t.Object({ success: t.Boolean() }, { additionalProperties: true }), 400: t.Any(), 409: t.Any() },
      detail: { summary: 'Every write: nodes, iterations, projects', tags: ['mutate'] },
    },
  )
