import { Elysia, t } from 'elysia'
import type { Deps } from '../deps'
import { withUser } from '../http/auth'
import { documentedResponse } from '../http/documented'
import { asQuery } from '../http/query'
import { NodeSchema } from '../nodes/routes'
import { TreeParams } from './model'
import { walk } from './service'

const Nodes = t.Array(NodeSchema)

/** One object with optional parts rather than a union per direction: a union checks each node once per variant. */
export const TreeResponse = t.Object({
  nodes: t.Optional(Nodes),
  path: t.Optional(t.Array(t.String())),
  ancestors: t.Optional(Nodes),
  siblings: t.Optional(Nodes),
  children: t.Optional(Nodes),
  outline: t.Optional(t.String({ description: 'format=outline only: the project as a text outline within budget' })),
  _meta: t.Optional(t.Record(t.String(), t.Any())),
})

export const treeRoutes = (deps: Deps) =>
  new Elysia({ name: 'tree' }).derive(withUser(deps)).get('/tree', ({ user, query }) => walk(deps, user, query) as any, {
    query: asQuery(TreeParams),
    detail: {
      summary: 'Walk the tree from a node: up to the root, down its subtree, lateral siblings, or the whole context',
      tags: ['tree'],
      ...documentedResponse(TreeResponse),
    },
  })
