import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { ProjectQuery } from '../http/action-schema'
import { documentedQuery } from '../http/documented'
import { MetaBody, RefusalBody } from '../http/schemas'
import { exportOkf } from './service'

export const exportRoutes = (deps: Deps) =>
  new Elysia({ name: 'export' }).derive(withUser(deps)).get('/export-okf', ({ user, query }) => exportOkf(deps, user, query), {
    response: {
      200: t.Object({
        okf_version: t.Literal('0.1'),
        project: t.Object({ id: t.String(), name: t.String() }),
        file_count: t.Integer(),
        files: t.Record(t.String(), t.String(), {
          description: 'path → markdown: index.md and goals/ needs/ approaches/ jobs/ tasks/<id>.md, each with YAML frontmatter',
        }),
        _meta: MetaBody,
      }),
      400: RefusalBody,
      403: RefusalBody,
    },
    detail: {
      ...documentedQuery(ProjectQuery),
      summary: 'Export the project as an Open Knowledge Format (OKF v0.1) bundle',
      tags: ['export'],
    },
  })
