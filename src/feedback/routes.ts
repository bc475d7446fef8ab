import { Elysia, t } from 'elysia'
import { authenticate } from '../accounts/service'
import type { Deps } from '../deps'
import { RefusalError } from '../errors'
import { asLoose } from '../http/query'
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
      // fields are checked by the service so each gets its own error code (invalid_kind, …)
      body: asLoose(FeedbackBody),
      response: { 200: t.Object({ success: t.Literal(true), id: t.String(), createdAt: t.String(), _meta: MetaBody }) },
      detail: { summary: 'Send feedback about the service', tags: ['account'] },
    })
