import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { documentedQuery } from '../http/documented'
import { MetaBody } from '../http/schemas'
import { VIAS } from '../ports/actor'
import { MAX_LIMIT } from './model'
import { listHistory } from './service'

const State = t.Union([t.Object({}, { additionalProperties: true }), t.Null()])

export const Change = t.Object({
  changeId: t.String(),
  at: t.String({ description: 'ISO 8601 UTC' }),
  actor: t.Object({
    userId: t.Union([t.String(), t.Null()]),
    userName: t.Union([t.String(), t.Null()]),
    keyId: t.Union([t.String(), t.Null()]),
    agent: t.Optional(t.String()),
    via: t.String({ description: VIAS.join(', ') }),
  }),
  requestId: t.String({ description: 'shared by every change of one request' }),
  action: t.String({
    description: 'add, update, delete, restore, revert; addIteration, updateIteration, deleteIteration, reorderIterations',
  }),
  target: t.Object({ kind: t.String({ description: 'node or iteration' }), id: t.String(), type: t.Optional(t.String()) }),
  before: State,
  after: State,
  fields: t.Array(t.String(), { description: 'the names that differ: parentId and the keys of data (an iteration: its fields)' }),
  revertOf: t.Optional(t.String({ description: 'the change this revert change undid' })),
  proposal: t.Optional(
    t.Object(
      { proposalId: t.String(), actor: t.Object({}, { additionalProperties: true, description: 'who proposed it' }) },
      { description: 'the proposal this change applied (live.md §5); actor above is who applied it' },
    ),
  ),
})

const q = (description: string) => t.Optional(t.String({ description }))

/** GET /history (history.md, 2): who changed what, newest first. */
export const historyRoutes = (deps: Deps) =>
  new Elysia({ name: 'history' }).derive(withUser(deps)).get('/history', ({ user, query }) => listHistory(deps, user, query), {
    detail: {
      ...documentedQuery(
        t.Object({
          projectId: t.String(),
          nodeId: q('only the changes of this node (it may no longer exist)'),
          userId: q('only changes by this user'),
          agent: q('only changes made with this agent name (X-Agent-Id, a claim, the MCP client)'),
          via: t.Optional(
            t.Union(
              VIAS.map((v) => t.Literal(v)),
              { description: `only changes that came in this way: ${VIAS.join(', ')}` },
            ),
          ),
          requestId: q('only the changes of one request'),
          since: q('ISO 8601: changes at or after'),
          until: q('ISO 8601: changes at or before'),
          after: q('the next cursor of the previous page'),
          limit: t.Optional(t.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `1 to ${MAX_LIMIT} (default 50)` })),
        }),
      ),
      summary: 'The changes made to the project: who changed what and when, newest first, with filters (history.md)',
      tags: ['history'],
    },
    response: {
      200: t.Object({
        changes: t.Array(Change, { description: 'newest first' }),
        next: t.Optional(t.String({ description: 'pass as after for the next page' })),
        _meta: MetaBody,
      }),
    },
  })
