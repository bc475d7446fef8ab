import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { documentedQuery, queryDetail } from '../http/documented'
import { ChangelogQuery, NodesParams } from './input'
import { NodeOut } from './model'
import { listChangelog, listNodes } from './service'

/** A node as the reads answer it: NodeOut, with its live claim (work items) and its depth (tree reads). */
export const NodeSchema = t.Object({
  ...NodeOut.properties,
  claim: t.Optional(
    t.Object(
      { agent: t.String(), expiresAt: t.String({ description: 'ISO 8601 UTC' }) },
      { description: 'only while a live claim holds this work item (docs/agents.md); never the token' },
    ),
  ),
  depth: t.Optional(t.Integer()),
})

export const NodesResponse = t.Object({
  nodes: t.Array(NodeSchema),
  _meta: t.Object(
    {
      currentIteration: t.Nullable(t.String()),
      iterations: t.Object({ active: t.Array(t.String()), total: t.Integer() }),
      nodeCounts: t.Record(t.String(), t.Integer()),
    },
    { additionalProperties: true },
  ),
})

export const nodeRoutes = (deps: Deps) =>
  new Elysia({ name: 'nodes' })
    .derive(withUser(deps))
    .get('/nodes', ({ user, query }) => listNodes(deps, user, query), {
      detail: queryDetail(
        'tree',
        'Every node of a project in creation order (the JSON export); filters by type and iteration',
        NodesParams,
        NodesResponse,
      ),
    })
    .get('/changelog', ({ user, query }) => listChangelog(deps, user, query), {
      response: {
        200: t.Object({
          changelog: t.Array(
            t.Object({
              id: t.Integer(),
              nodeId: t.String(),
              action: t.Literal('delete'),
              // the node as it was deleted: with the rev it had (a deletion recorded before revisions has none)
              node: t.Object({ ...NodeSchema.properties, rev: t.Optional(t.String()) }),
              deletedAt: t.String(),
            }),
          ),
        }),
      },
      detail: {
        summary: 'Deleted nodes, newest first; restore one with mutate restore',
        tags: ['tree'],
        ...documentedQuery(ChangelogQuery),
      },
    })
