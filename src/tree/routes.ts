import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { queryDetail } from '../http/documented'
import { NodeSchema } from '../nodes/routes'
import { OutlineParams, TreeParams } from './model'
import { tokenOutline, walk } from './service'

const Nodes = t.Array(NodeSchema)

/** One object with optional parts rather than a union per direction: a union checks each node once per variant. */
export const TreeResponse = t.Object({
  nodes: t.Optional(Nodes),
  path: t.Optional(t.Array(t.String())),
  ancestors: t.Optional(Nodes),
  siblings: t.Optional(Nodes),
  children: t.Optional(Nodes),
  outline: t.Optional(t.String({ description: 'format=outline only: the project as a text outline within budget' })),
  _meta: t.Optional(t.Record(t.String(), t.Unknown())),
})

export const OutlineResponse = t.Object({
  outline: t.String({ description: 'indented markdown, one line per node; folded parts as "- … 14 more jobs (9 done)"' }),
  tokens: t.Integer({ description: 'o200k_base tokens of outline, at most budget' }),
  elided: t.Integer({ description: 'nodes not shown on a line of their own' }),
  _meta: t.Record(t.String(), t.Unknown()),
})

export const treeRoutes = (deps: Deps) =>
  new Elysia({ name: 'tree' })
    .derive(withUser(deps))
    .get('/tree', ({ user, query }) => walk(deps, user, query), {
      detail: queryDetail(
        'tree',
        'Walk the tree from a node: up to the root, down its subtree, lateral siblings, or the whole context',
        TreeParams,
        TreeResponse,
      ),
    })
    .get('/outline', ({ user, query }) => tokenOutline(deps, user, query), {
      detail: queryDetail(
        'tree',
        'The project or one subtree as indented markdown within a budget of o200k_base tokens, for a model',
        OutlineParams,
        OutlineResponse,
      ),
    })
