import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { requestAuthor } from '../history/author'
import { documentedBody, documentedResponse } from '../http/documented'
import { guideUrl } from '../http/meta'
import { MetaBody } from '../http/schemas'
import { catalog } from './catalog'
import { WorkflowBody } from './model'
import { postWorkflow } from './service'
import { createStateCodec } from './state'

export const workflowRoutes = (deps: Deps) => {
  const codec = createStateCodec(deps)
  const body = catalog(guideUrl(deps.config.publicBaseUrl))
  return new Elysia({ name: 'workflow' })
    .get('/workflow', () => body, {
      response: { 200: t.Object({ protocol: t.Unknown(), flows: t.Array(t.Unknown()), notes: t.Array(t.String()), _meta: MetaBody }) },
      detail: {
        summary: "The workflow catalog: protocol, flows, the JSON Schema of each step's answer (no authentication)",
        tags: ['workflow'],
        security: [],
      },
    })
    .derive(withUser(deps))
    .post(
      '/workflow',
      async ({ user, body, headers }) => {
        // a terminal advance applies its plan as the workflow (history.md, 1); its commit wakes the loops (src/mutate/sequence.ts `runWrite`)
        const author = requestAuthor(user, headers, { via: 'workflow' })
        return postWorkflow({ ...deps, author }, codec, user, body)
      },
      {
        detail: {
          requestBody: documentedBody(WorkflowBody),
          summary:
            'Start or advance a planning flow driven by your own model: mid-flow {done:false, prompt, state}; at the end {done:true, changeset, focus, message, _meta:{viewCommand}}',
          tags: ['workflow'],
          ...documentedResponse(
            t.Object({
              done: t.Boolean(),
              prompt: t.Optional(t.String({ description: 'mid-flow: send it to your model' })),
              state: t.Optional(t.String({ description: 'mid-flow: pass it back verbatim' })),
              changeset: t.Optional(
                t.Array(
                  t.Object({
                    action: t.String({ description: 'add, update, delete or addIteration' }),
                    nodeId: t.Nullable(t.String()),
                    type: t.String(),
                    before: t.Nullable(t.Unknown()),
                    after: t.Nullable(t.Unknown()),
                  }),
                ),
              ),
              focus: t.Optional(t.Nullable(t.String())),
              message: t.Optional(t.String()),
              _meta: t.Optional(t.Record(t.String(), t.Unknown())),
            }),
            'Mid-flow {done:false, prompt, state}; at the end {done:true, changeset, focus, message, _meta:{viewCommand}}. 400 {error, retry:true, state} for a bad answer; 500 {retry, partialApply, alreadyApplied?} when the final apply fails.',
          ),
        },
      },
    )
}
