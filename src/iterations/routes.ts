import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { asQuery } from '../http/query'
import { IterationsParams } from './model'
import { listIterations } from './service'

export const IterationSchema = t.Object({
  name: t.String(),
  status: t.Union([t.Literal('active'), t.Literal('done')]),
  system: t.Boolean(),
  sortOrder: t.Integer(),
  gitTags: t.Array(t.String()),
  completedAt: t.Nullable(t.Number({ description: 'milliseconds since the epoch' })),
})

export const iterationRoutes = (deps: Deps) =>
  new Elysia({ name: 'iterations' }).derive(withUser(deps)).get('/iterations', ({ user, query }) => listIterations(deps, user, query), {
    query: asQuery(IterationsParams),
    response: {
      200: t.Union([t.Object({ iterations: t.Array(IterationSchema) }), t.Object({ iteration: t.Nullable(IterationSchema) })]),
    },
    detail: { summary: 'Iterations in display order; current=true gives the first active, non-system one', tags: ['iterations'] },
  })
