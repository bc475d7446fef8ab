import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { ProjectQuery } from '../http/action-schema'
import { documentedBody, documentedQuery } from '../http/documented'
import { MetaBody, RefusalBody as Refusal } from '../http/schemas'
import {
  DeleteQuery,
  DeliveriesQuery,
  deleteWebhook,
  listWebhookDeliveries,
  listWebhooks,
  RegisterBody,
  registerWebhook,
  UpdateBody,
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

export const webhookRoutes = (deps: Deps) =>
  new Elysia({ name: 'webhooks' })
    .derive(withUser(deps))
    .post('/webhooks', async ({ user, body, status }) => status(201, await registerWebhook(deps, user, body)), {
      response: {
        201: t.Object({
          webhook: t.Object({ id: t.String(), url: t.String(), events: t.Array(t.String()), secret: t.String() }),
          _meta: MetaBody,
        }),
        400: Refusal,
        403: Refusal,
        404: Refusal,
      },
      detail: {
        summary: 'Register a webhook (at most 10 per project); its secret is shown once',
        tags: ['webhooks'],
        requestBody: documentedBody(RegisterBody),
      },
    })
    .get('/webhooks', ({ user, query }) => listWebhooks(deps, user, query), {
      response: { 200: t.Object({ webhooks: t.Array(Webhook) }), 403: Refusal, 404: Refusal },
      detail: {
        summary: 'List webhooks with lastDeliveryAt and lastStatus (never secrets)',
        tags: ['webhooks'],
        ...documentedQuery(ProjectQuery),
      },
    })
    .patch('/webhooks', ({ user, body }) => updateWebhook(deps, user, body), {
      response: { 200: t.Object({ webhook: Webhook, _meta: MetaBody }), 400: Refusal, 403: Refusal, 404: Refusal },
      detail: {
        summary: 'Update a webhook in place (keeps id and secret) or rotate its secret',
        tags: ['webhooks'],
        requestBody: documentedBody(UpdateBody),
      },
    })
    .delete('/webhooks', ({ user, query }) => deleteWebhook(deps, user, query), {
      response: {
        200: t.Object({ success: t.Literal(true), deleted: t.String(), _meta: MetaBody }),
        400: Refusal,
        403: Refusal,
        404: Refusal,
      },
      detail: { summary: 'Delete a webhook by id', tags: ['webhooks'], ...documentedQuery(DeleteQuery) },
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
