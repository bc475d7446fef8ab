import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { documentedResponse } from '../http/documented'
import { asQuery, QueryText } from '../http/query'
import { NodesParams } from './model'
import { listChangelog, listNodes } from './service'

export const NodeSchema = t.Object({
  id: t.String(),
  type: t.Union([t.Literal('goal'), t.Literal('need'), t.Literal('approach'), t.Literal('job'), t.Literal('task')]),
  parentId: t.Nullable(t.String()),
  data: t.Object(
    { label: t.String() },
    { additionalProperties: true, description: 'the node fields of api.md (label, description, notes, iteration, status, …)' },
  ),
  claim: t.Optional(
    t.Object(
      { agent: t.String(), expiresAt: t.String({ description: 'ISO 8601 UTC' }) },
      { description: 'only while a live claim holds this work item (agents-and-app.md, 2); never the token' },
    ),
  ),
  createdAt: t.Optional(t.String()),
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
      query: asQuery(NodesParams),
      detail: {
        summary: 'Every node of a project in creation order (the JSON export); filters by type and iteration',
        tags: ['tree'],
        ...documentedResponse(NodesResponse),
      },
    })
    .get('/changelog', ({ user, query }) => listChangelog(deps, user, query), {
      query: t.Object({
        projectId: t.String(),
        limit: t.Optional(QueryText(t.Integer({ minimum: 1, maximum: 1000 }), '1 to 1000, default 100')),
      }),
      response: {
        200: t.Object({
          changelog: t.Array(
            t.Object({ id: t.Integer(), nodeId: t.String(), action: t.Literal('delete'), node: NodeSchema, deletedAt: t.String() }),
          ),
        }),
      },
      detail: { summary: 'Deleted nodes, newest first; restore one with mutate restore', tags: ['tree'] },
    })
