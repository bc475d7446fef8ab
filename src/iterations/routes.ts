import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { documentedQuery } from '../http/documented'
import { IterationOut, IterationsParams } from './model'
import { listIterations } from './service'

export const iterationRoutes = (deps: Deps) =>
  new Elysia({ name: 'iterations' }).derive(withUser(deps)).get('/iterations', ({ user, query }) => listIterations(deps, user, query), {
    response: {
      200: t.Union([t.Object({ iterations: t.Array(IterationOut) }), t.Object({ iteration: t.Nullable(IterationOut) })]),
    },
    detail: {
      summary: 'Iterations in display order; current=true gives the first active, non-system one',
      tags: ['iterations'],
      ...documentedQuery(IterationsParams),
    },
  })
