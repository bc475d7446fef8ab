import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { documentedQuery } from '../http/documented'
import { RefusalBody } from '../http/schemas'
import { NodeSchema } from '../nodes/routes'
import { SearchParams } from './model'
import { search } from './service'

const Result = t.Object({
  // rev: absent only on a Meilisearch document indexed before revisions (until the index is rebuilt)
  node: t.Composite([t.Omit(NodeSchema, ['createdAt', 'depth', 'rev']), t.Object({ rev: t.Optional(t.String()) })]),
  similarity: t.Number({ minimum: 0, maximum: 1 }),
  ancestors: t.Array(t.Object({ id: t.String(), type: t.String(), label: t.String() }), {
    description: 'from the immediate parent up to the root goal',
  }),
})

export const searchRoutes = (deps: Deps) => {
  return new Elysia({ name: 'search' }).derive(withUser(deps)).get('/search', ({ user, query }) => search(deps, user, query), {
    response: {
      200: t.Object({
        results: t.Array(Result),
        _meta: t.Optional(t.Object({ search: t.Optional(t.Unknown()), _tip: t.Optional(t.String()) }, { additionalProperties: true })),
      }),
      503: t.Composite([RefusalBody, t.Object({ _tip: t.Optional(t.String()) })], {
        description: 'search_unavailable: the Meilisearch server (MEILI_URL) did not answer; retry shortly',
      }),
    },
    detail: {
      ...documentedQuery(SearchParams),
      summary: 'Semantic search: nodes closest in meaning to q, ranked by similarity (0 to 1), each with its ancestors',
      tags: ['tree'],
    },
  })
}
