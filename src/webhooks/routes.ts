import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { documentedQuery } from '../http/documented'
import { MetaBody, RefusalBody as Refusal } from '../http/schemas'
import {
  CLAIM_EVENT_TYPES,
  DeliveriesQuery,
  deleteWebhook,
  EVENT_TYPES,
  listWebhookDeliveries,
  listWebhooks,
  PROPOSAL_EVENT_TYPES,
  registerWebhook,
  updateWebhook,
} from './service'

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()])
const Webhook = t.Object({
  id: t.String(),
  url: t.String(),
  events: t.Array(t.String()),
  secret: t.Optional(t.String({ description: 'only at creation and rotation' })),
  lastDeliveryAt: Nullable(t.String({ description: 'when the last attempt started' })),
  lastStatus: Nullable(t.Integer({ description: 'HTTP status of the last attempt; null when the receiver did not answer' })),
  lastError: Nullable(t.String({ description: 'why the last attempt failed, null when it succeeded' })),
  createdAt: t.String(),
})
const eventsDoc = `event names; omitted means all six: ${EVENT_TYPES.join(', ')}; ${[...CLAIM_EVENT_TYPES, ...PROPOSAL_EVENT_TYPES].join(', ')} only when listed`

export const webhookRoutes = (deps: Deps) =>
  new Elysia({ name: 'webhooks' })
    .derive(withUser(deps))
    .post(
      '/webhooks',
      async ({ user, body, set }) => {
        const result = await registerWebhook(deps, user, body)
        set.status = 201
        return result
      },
      {
        body: t.Object({
          projectId: t.String(),
          url: t.String({ description: 'https, publicly routable receiver URL' }),
          events: t.Optional(t.Array(t.String(), { description: eventsDoc })),
        }),
        response: {
          201: t.Object({
            webhook: t.Object({ id: t.String(), url: t.String(), events: t.Array(t.String()), secret: t.String() }),
            _meta: MetaBody,
          }),
          400: Refusal,
          403: Refusal,
          404: Refusal,
        },
        detail: { summary: 'Register a webhook (at most 10 per project); its secret is shown once', tags: ['webhooks'] },
      },
    )
    .get('/webhooks', ({ user, query }) => listWebhooks(deps, user, query.projectId), {
      query: t.Object({ projectId: t.String() }),
      response: { 200: t.Object({ webhooks: t.Array(Webhook) }), 403: Refusal, 404: Refusal },
      detail: { summary: 'List webhooks with lastDeliveryAt and lastStatus (never secrets)', tags: ['webhooks'] },
    })
    .patch('/webhooks', ({ user, body }) => updateWebhook(deps, user, body), {
      body: t.Object({
        projectId: t.String(),
        id: t.Optional(t.String()),
        url: t.Optional(t.String()),
        events: t.Optional(t.Array(t.String(), { description: eventsDoc })),
        rotateSecret: t.Optional(t.Boolean({ description: 'true mints a new secret, shown once; the old one stops working at once' })),
      }),
      response: { 200: t.Object({ webhook: Webhook, _meta: MetaBody }), 400: Refusal, 403: Refusal, 404: Refusal },
      detail: { summary: 'Update a webhook in place (keeps id and secret) or rotate its secret', tags: ['webhooks'] },
    })
    .delete('/webhooks', ({ user, query }) => deleteWebhook(deps, user, query), {
      query: t.Object({ projectId: t.String(), id: t.Optional(t.String()) }, { additionalProperties: true }),
      response: {
        200: t.Object({ success: t.Literal(true), deleted: t.String(), _meta: MetaBody }),
        400: Refusal,
        403: Refusal,
        404: Refusal,
      },
      detail: { summary: 'Delete a webhook by id', tags: ['webhooks'] },
    })
    .get('/webhooks/deliveries', ({ user, query }) => listWebhookDeliveries(deps, user, query), {
      response: {
        200: t.Object({
          deliveries: t.Array(
            t.Object({
              id: t.String({ description: 'the X-Arbor-Delivery id' }),
              event: t.String(),
              status: t.Union([t.Literal('pending'), t.Literal('delivered'), t.Literal('failed')]),
              attempts: t.Integer(),
              lastStatus: Nullable(t.Integer()),
              lastError: Nullable(t.String()),
              lastAttemptAt: Nullable(t.String()),
              nextAttemptAt: Nullable(t.String({ description: 'when a pending delivery is tried next' })),
              createdAt: t.String(),
            }),
          ),
        }),
        400: Refusal,
        403: Refusal,
        404: Refusal,
      },
      detail: {
        ...documentedQuery(DeliveriesQuery),
        summary: 'Recent deliveries of one webhook, newest first: status, attempts, last error',
        tags: ['webhooks'],
      },
    })
