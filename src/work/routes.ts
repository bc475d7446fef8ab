import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { queryDetail } from '../http/documented'
import { ReadyParams } from './model'
import { listReady } from './service'

const ReadyResponse = t.Object({
  items: t.Array(
    t.Object({
      node: t.Object({
        id: t.String(),
        rev: t.String({ description: 'the revision: send it as ifRev with your writes of this node' }),
        type: t.String(),
        parentId: t.Nullable(t.String()),
        data: t.Record(t.String(), t.Unknown()),
      }),
      ancestors: t.Array(t.Object({ id: t.String(), type: t.String(), label: t.String() }), { description: 'root first' }),
      blockedBy: t.Array(t.String(), { description: 'blockers not clear yet: always empty on a ready item' }),
    }),
  ),
  _meta: t.Object(
    {
      total: t.Integer({ description: 'ready items (beyond limit too)' }),
      claimed: t.Integer({ description: 'open work items held by a live claim' }),
      blocked: t.Integer({ description: 'open work items not ready for another reason' }),
    },
    { additionalProperties: true },
  ),
})

export const workRoutes = (deps: Deps) =>
  new Elysia({ name: 'work' }).derive(withUser(deps)).get('/ready', ({ user, query }) => listReady(deps, user, query), {
    detail: queryDetail(
      'work',
      'Work ready to start: open jobs and do-it tasks, unclaimed, not blocked; urgent tasks, then by iteration, focus goals, creation',
      ReadyParams,
      ReadyResponse,
    ),
  })
