import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { ProjectQuery } from '../http/action-schema'
import { documentedBody, documentedQuery, documentedResponse, queryDetail } from '../http/documented'
import { PresenceBody, StreamParams } from './model'
import { deletePresenceOf, listPresenceOf, postPresenceOf } from './service'
import { createStreamHub } from './stream'

const Actor = t.Object({
  userId: t.String(),
  userName: t.String(),
  agent: t.Optional(t.String({ description: 'X-Agent-Id of the request that posted it, or the agent holding the claim' })),
  via: t.String({ description: 'api, mcp, app, workflow or cli (X-Arbor-Via)' }),
})
const PresenceOut = t.Object({
  actor: Actor,
  nodeId: t.Optional(t.String()),
  field: t.Optional(t.String({ description: 'an edit intent: writes of this field by other actors answer 409 being_edited' })),
  note: t.Optional(t.String()),
  since: t.String({ description: 'ISO 8601 UTC' }),
  expiresAt: t.String({ description: 'ISO 8601 UTC; post again to keep it' }),
  claim: t.Optional(t.Literal(true, { description: 'listed because this agent holds a live claim on the node' })),
})

const STREAM_DESCRIPTION = [
  'Server-sent events (text/event-stream). Every event GET /events lists, in the same order, as one message: `id:` its cursor, `event:` its name, `data:` the event as /events lists it.',
  'Without a cursor the stream starts with the events committed after it opened; with `Last-Event-ID` (or `after`) it first sends every event after that cursor.',
  'A cursor older than the events kept gives `event: reset` with `{"reason":"cursor_expired"}`: read the tree again.',
  '`event: presence` messages (no id) say who is where: `{actor, nodeId?, field?, note?, state: here|gone, claim?}`.',
  'A `: keep-alive` comment at least every 15 s. At most 20 open streams per key (429 with Retry-After).',
].join(' ')

/** live.md, 2 and 3: the stream and presence. */
export function liveRoutes(deps: Deps) {
  const hub = createStreamHub(deps)
  return new Elysia({ name: 'live' })
    .derive(withUser(deps))
    .get(
      '/stream',
      ({ user, query, headers, request }) =>
        hub.open(user, headers.authorization ?? '', query, request.headers.get('last-event-id'), request),
      {
        detail: {
          summary: 'Live stream of the project events (SSE) and of presence',
          description: STREAM_DESCRIPTION,
          tags: ['events'],
          parameters: [
            ...documentedQuery(StreamParams).parameters,
            {
              name: 'Last-Event-ID',
              in: 'header',
              required: false,
              description: 'the id of the last message received: resume after it without a gap or a duplicate',
              schema: { type: 'string' },
            },
          ],
          responses: {
            200: {
              description: 'the stream',
              content: {
                'text/event-stream': { schema: { type: 'string', description: 'id:, event: and data: lines; see the description' } },
              },
            },
          },
        },
      },
    )
    .get('/presence', ({ user, query }) => listPresenceOf(deps, user, query), {
      detail: queryDetail(
        'events',
        'Who is on the project now: posted presence, and agents holding a live claim (claim:true)',
        ProjectQuery,
        t.Object({ presence: t.Array(PresenceOut) }),
      ),
    })
    .post('/presence', ({ user, body, headers }) => postPresenceOf(deps, user, headers, body), {
      detail: {
        summary: 'Say where you are (held 30 s; post again to keep it). With field: an edit intent on that field',
        tags: ['events'],
        requestBody: documentedBody(PresenceBody),
        ...documentedResponse(t.Object({ presence: PresenceOut, expiresAt: t.String() })),
      },
    })
    .delete('/presence', ({ user, query, headers }) => deletePresenceOf(deps, user, headers, query), {
      detail: queryDetail('events', 'End your own presence on the project at once', ProjectQuery, t.Object({ success: t.Literal(true) })),
    })
}
