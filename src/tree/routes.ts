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
  outline: t.Optional(t.String({ description: 'format=outline only: the project as a text outline within budget' })),
  _meta: t.Optional(t.Record(t.String(), t.Any())),
})

export const treeRoutes = (deps: Deps) =>
  new Elysia({ name: 'tree' }).derive(withUser(deps)).get('/tree', ({ user, query }) => walk(deps, user, query) as any, {
    query: t.Object({
      projectId: t.String(),
      // checked by the service, so a bad or missing value gets api.md's own message
      nodeId: t.Optional(t.String({ description: 'required for a walk; with format=outline, outline this node and the path to it' })),
      direction: t.Optional(t.String({ description: 'up, down, lateral or context (required unless format=outline)' })),
      format: t.Optional(
        t.String({
          description:
            'outline: the whole project (or nodeId and the path to it) as indented text for a model: ids, labels and statuses, breadth-first within budget, the rest summarised as counts per subtree',
        }),
      ),
      budget: t.Optional(t.String({ description: 'format=outline only: characters, 200 to 200000, default 12000 (about 3,000 tokens)' })),
    }),
    detail: {
      summary: 'Walk the tree from a node: up to the root, down its subtree, lateral siblings, or the whole context',
      tags: ['tree'],
      ...documentedResponse(TreeResponse),
    },
  })
