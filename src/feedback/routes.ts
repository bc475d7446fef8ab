import { Elysia, t } from 'elysia'
import { authenticate } from '../accounts/service'
import type { Deps } from '../deps'
import { ApiError } from '../http/errors'
import { MetaBody } from '../http/schemas'
import { submitFeedback } from './service'

export const feedbackRoutes = (deps: Deps) =>
  new Elysia({ name: 'feedback' })
    // api.md: feedback answers a bare 401 `Unauthorized`
    .derive(async ({ headers }) => {
      try {
        return { user: await authenticate(deps.db, headers.authorization) }
      } catch {
        throw new ApiError(401, 'Unauthorized', { message: 'Missing or invalid API key' })
      }
    })
    .post('/feedback', ({ user, body, headers }) => submitFeedback(deps, user, headers['x-agent-id'], body as any), {
      // fields are checked by the service so each gets its own error code (invalid_kind, …)
      body: t.Object(
        {
          kind: t.Optional(t.Any({ description: 'feature_request, friction, bug or note' })),
          summary: t.Optional(t.Any({ description: '1 to 200 characters' })),
          details: t.Optional(t.Any({ description: 'up to 5000 characters' })),
          context: t.Optional(t.Any({ description: 'JSON object up to 4 KB' })),
          projectId: t.Optional(t.Any()),
        },
        { additionalProperties: true },
      ),
      response: { 200: t.Object({ success: t.Literal(true), id: t.String(), createdAt: t.String(), _meta: MetaBody }) },
      detail: { summary: 'Send feedback about the service', tags: ['account'] },
    })
