import { Elysia, t } from 'elysia'
import type { Deps } from '../deps'
import { withUser } from '../http/auth'
import { documentedResponse } from '../http/documented'
import { NodeSchema } from '../nodes/routes'
import { walk } from './service'

const Nodes = t.Array(NodeSchema)

/** One object with optional parts rather than a union per direction: a union checks each node once per variant. */
export const TreeResponse = t.Object({
  nodes: t.Optional(Nodes),
  path: t.Optional(t.Array(t.String())),
  ancestors: t.Optional(Nodes),
  siblings: t.Optional(Nodes),
  children: t.Optional(Nodes),
  _meta: t.Optional(t.Record(t.String(), t.Any())),
})

export const treeRoutes = (deps: Deps) =>
  new Elysia({ name: 'tree' }).derive(withUser(deps)).get('/tree', ({ user, query }) => walk(deps, user, query) as any, {
    query: t.Object({
      projectId: t.String(),
      // checked by the service, so a bad or missing value gets api.md's own message
      nodeId: t.Optional(t.String()),
      direction: t.Optional(t.String({ description: 'up, down, lateral or context (required)' })),
    }),
    detail: {
      summary: 'Walk the tree from a node: up to the root, down its subtree, lateral siblings, or the whole context',
      tags: ['tree'],
      ...documentedResponse(TreeResponse),
    },
  })
