import { Elysia, t } from 'elysia'
import { authenticate } from '../accounts/service'
import type { Deps } from '../deps'
import { RefusalError } from '../errors'
import { documentedBody } from '../http/documented'
import { MetaBody } from '../http/schemas'
import { FeedbackBody } from './model'
import { submitFeedback } from './service'

export const feedbackRoutes = (deps: Deps) =>
  new Elysia({ name: 'feedback' })
    // docs/reference/account.md: feedback answers a bare 401 `Unauthorized`
    .derive(async ({ headers }) => {
      try {
        return { user: await authenticate(deps, headers.authorization) }
      } catch {
        throw new RefusalError(401, 'Unauthorized', { message: 'Missing or invalid API key' })
      }
    })
    .post('/feedback', ({ user, body, headers }) => submitFeedback(deps, user, headers['x-agent-id'], body), {
      response: { 200: t.Object({ success: t.Literal(true), id: t.String(), createdAt: t.String(), _meta: MetaBody }) },
      // the body is checked by the service (FeedbackInput), each field with its own error code (invalid_kind, …)
      detail: { summary: 'Send feedback about the service', tags: ['account'], requestBody: documentedBody(FeedbackBody) },
    })
