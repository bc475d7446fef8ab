import { t } from 'elysia'
import { INTEGER_QUERY, operationId } from './operation-ids'

/** The `{error, message?}` body of an RefusalError (src/errors.ts), for route response schemas. */
export const RefusalBody = t.Object(
  {
    error: t.String({ description: 'a code such as project_access_denied, or a message' }),
    message: t.Optional(t.String()),
    _meta: t.Optional(t.Object({}, { additionalProperties: true, description: '_tip, guide' })),
  },
  { additionalProperties: true, description: 'access, tier and other refusals' },
)

/** The `{success:false, errors:[...]}` body of a ErrorListError. */
export const ValidationBody = t.Object(
  {
    success: t.Literal(false),
    errors: t.Array(t.String(), { description: 'one message per broken rule; a batch prefixes mutations[<index>]: ' }),
    _meta: t.Optional(t.Object({}, { additionalProperties: true, description: '_tip, guide' })),
    rolledBack: t.Optional(
      t.Object({ nodes: t.Integer(), iterations: t.Integer() }, { description: 'a batch that failed while writing: what was undone' }),
    ),
  },
  { additionalProperties: true, description: 'a request that breaks a validation rule' },
)

const EitherBody = t.Union([ValidationBody, RefusalBody])

/**
 * The error answers every operation may give, whatever its route declares: they come from the
 * error plugin and the transport wrapper (src/http/server.ts), never from a handler's return.
 */
const ERRORS: Record<string, { description: string; schema: unknown }> = {
  400: { description: 'Invalid request: a broken validation rule, a NUL character, a body nested too deep', schema: EitherBody },
  401: { description: 'Missing or invalid API key (admin paths: admin token)', schema: RefusalBody },
  403: { description: 'No access to the project, or the plan does not allow it', schema: RefusalBody },
  404: { description: 'Unknown project, resource or endpoint', schema: RefusalBody },
  409: { description: 'Conflict: the resource exists, or an Idempotency-Key was reused', schema: EitherBody },
  413: { description: 'Request body over MAX_BODY_BYTES', schema: RefusalBody },
  429: { description: 'Rate limited; retry after the Retry-After header', schema: RefusalBody },
  500: { description: 'Failed on our side; see the body for what survived', schema: EitherBody },
}

/** The parts of an OpenAPI operation completed here. */
interface Operation {
  operationId?: string
  parameters?: { in: string; name: string; schema?: { type?: string } }[]
  responses?: Record<string, Response>
  requestBody?: { content?: Record<string, unknown> }
}
interface Response {
  description?: string
  content?: Record<string, unknown>
}

const isHtml = (response: Response | undefined) => !!response?.content?.['text/html']

/**
 * Completes the generated OpenAPI document in place (idempotent): every operation documents
 * every error status above with its body schema, and request bodies are JSON only (the API
 * parses nothing else). Run on the document @elysiajs/openapi builds, so routes added by any
 * module are covered without each one repeating the list.
 */
export function completeOpenApi(doc: unknown): unknown {
  if (!doc || typeof doc !== 'object' || !('paths' in doc) || !doc.paths || 'x-arbor-complete' in doc) return doc
  for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, Operation | undefined>>))
    for (const [method, op] of Object.entries(operations)) {
      if (!op || typeof op !== 'object' || !('responses' in op || 'summary' in op)) continue
      op.operationId = operationId(method, path)
      for (const p of op.parameters ?? [])
        if (p.in === 'query' && INTEGER_QUERY.has(p.name) && p.schema?.type === 'string') p.schema.type = 'integer'
      op.responses ??= {}
      const html = Object.values(op.responses).some(isHtml)
      for (const [status, { description, schema }] of Object.entries(ERRORS)) {
        // a route's own error schema is replaced: every error body comes from the error plugin or
        // the transport wrapper, in one of the two shapes, whatever the route declared
        const declared = op.responses[status]
        op.responses[status] = {
          description: declared?.description ?? description,
          content: {
            'application/json': { schema },
            // a share page's 404 is a page too
            ...(html && status === '404' ? { 'text/html': { schema: { type: 'string' } } } : {}),
          },
        }
      }
      const content = op.requestBody?.content
      if (content?.['application/json']) for (const type of Object.keys(content)) if (type !== 'application/json') delete content[type]
    }
  Object.defineProperty(doc, 'x-arbor-complete', { value: true, enumerable: false })
  return doc
}

/** The advisory `_meta` next to a response's data (api.md: _tip, advisory, focus, guide, …). */
export const MetaBody = t.Optional(
  t.Object({}, { additionalProperties: true, description: 'advisory: _tip, advisory, focus, guide; clients tolerate unknown fields' }),
)
