import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { documentedQuery } from '../http/documented'
import { MetaBody } from '../http/schemas'
import { MAX_LIMIT, MAX_WAIT_SECONDS } from './model'
import { listEvents } from './service'

const Payload = t.Object(
  {
    event: t.String({
      description:
        'node.added, node.updated, node.deleted, iteration.added, iteration.updated, iteration.deleted, node.claimed, node.released (with nodeId, agent, expiresAt?), proposal.created, proposal.applied, proposal.rejected, proposal.withdrawn (with proposalId, title, actor)',
    }),
    project_id: t.String(),
    timestamp: t.String({ description: 'ISO 8601 UTC' }),
    node: t.Optional(
      t.Object({
        id: t.String(),
        rev: t.Optional(t.String({ description: "the node's revision after this event (absent on events written before revisions)" })),
        type: t.String(),
        parentId: t.Union([t.String(), t.Null()]),
        data: t.Unknown(),
      }),
    ),
    iteration: t.Optional(
      t.Object({ name: t.String(), status: t.Optional(t.String()), previous_name: t.Optional(t.String()) }, { additionalProperties: true }),
    ),
  },
  { additionalProperties: true },
)

/** The pull feed: what webhooks push, for agents without a public URL. */
export const eventRoutes = (deps: Deps) =>
  new Elysia({ name: 'events' })
    .derive(withUser(deps))
    .get('/events', ({ user, query, request }) => listEvents(deps, user, query, () => deps.waiters.waited.add(request)), {
      response: {
        200: t.Object({
          events: t.Array(Payload, { description: 'oldest first; each exactly the body a webhook receives' }),
          nextCursor: t.Union([t.String(), t.Null()], { description: 'pass as after on the next call' }),
          hasMore: t.Boolean(),
          _meta: MetaBody,
        }),
      },
      detail: {
        ...documentedQuery(
          t.Object({
            projectId: t.String(),
            after: t.Optional(t.String({ description: 'the nextCursor of the previous call; omit to start at the oldest event kept' })),
            limit: t.Optional(
              t.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `at most this many events, 1 to ${MAX_LIMIT} (default 100)` }),
            ),
            wait: t.Optional(
              t.Integer({
                minimum: 0,
                maximum: MAX_WAIT_SECONDS,
                description: `seconds, 0 to ${MAX_WAIT_SECONDS} (default 0): hold an empty page open until an event arrives or wait passes; a waiting request is not counted against the rate limit`,
              }),
            ),
          }),
        ),
        summary: 'Pull feed of the project events webhooks deliver, oldest first after a cursor (kept 7 days)',
        tags: ['events'],
      },
    })
