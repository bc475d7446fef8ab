import { t } from 'elysia'
import { QUERY_OF_PATH } from './documented'
import { portableSchemas, uniqueTitles } from './openapi-portable'
import { INTEGER_QUERY, operationId, REQUIRED_QUERY } from './operation-ids'
import { TYPED } from './query'

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

/** The two error bodies, once in components.schemas (a generated client has one class for each, not one per operation). */
const COMPONENTS = { ErrorList: ValidationBody, Refusal: RefusalBody }
const refusal = { $ref: '#/components/schemas/Refusal' }
const EitherBody = { anyOf: [{ $ref: '#/components/schemas/ErrorList' }, refusal] }

/**
 * The error answers every operation may give, whatever its route declares: they come from the
 * error plugin and the transport wrapper (src/http/server.ts), never from a handler's return.
 */
const ERRORS: Record<string, { description: string; schema: unknown }> = {
  400: { description: 'Invalid request: a broken validation rule, a NUL character, a body nested too deep', schema: EitherBody },
  401: { description: 'Missing or invalid API key (admin paths: admin token)', schema: refusal },
  403: {
    description:
      "No access to the project, or the plan does not allow it, or outside the key's scope (key_scope: its role or projects, docs/keys.md)",
    schema: refusal,
  },
  404: { description: 'Unknown project, resource or endpoint', schema: refusal },
  409: {
    description:
      'Conflict: the resource exists, an Idempotency-Key was reused, or a write based on a stale ifRev (stale_write: conflicts, current)',
    schema: EitherBody,
  },
  413: { description: 'Request body over MAX_BODY_BYTES', schema: refusal },
  429: { description: 'Rate limited; retry after the Retry-After header', schema: refusal },
  500: { description: 'Failed on our side; see the body for what survived', schema: EitherBody },
}

/** The parts of an OpenAPI operation completed here. */
interface Operation {
  [QUERY_OF_PATH]?: NonNullable<Operation['parameters']>
  operationId?: string
  parameters?: {
    in: string
    name: string
    required?: boolean
    schema?: { type?: string | string[]; description?: string; [TYPED]?: unknown }
  }[]
  responses?: Record<string, Response>
  requestBody?: { content?: Record<string, unknown> }
  security?: unknown[]
  tags?: string[]
}
interface Response {
  description?: string
  content?: Record<string, unknown>
}

const isHtml = (response: Response | undefined) => !!response?.content?.['text/html']

/** Operations that answer only what their route declares (no key, no body, no database). */
const ONLY_DECLARED = new Set(['get /healthz', 'get /readyz'])

/**
 * The error statuses the error plugin and the wrapper can give this operation: no 401/403 on a
 * public one, no 413 without a body, 409 only on a write, 429 only where the rate limits count
 * (/api/ and /admin/), none at all on the health checks. A status the route declares itself stays.
 */
function errorStatuses(method: string, path: string, op: Operation): string[] {
  if (ONLY_DECLARED.has(`${method} ${path}`)) return []
  const isPublic = Array.isArray(op.security) && op.security.length === 0
  const limited = path.startsWith('/api/') || path.startsWith('/admin/')
  return Object.keys(ERRORS).filter((status) => {
    if (op.responses?.[status]) return true
    if (status === '401' || status === '403') return !isPublic
    if (status === '413') return !!op.requestBody
    if (status === '409') return method !== 'get'
    if (status === '429') return limited
    return true
  })
}

/**
 * Completes the generated OpenAPI document in place (idempotent): every operation documents the
 * error statuses it can answer with their body schemas, request bodies are JSON only (the API
 * parses nothing else), and the schemas are plain OpenAPI 3.1 with unique titles
 * (./openapi-portable.ts). Run on the document @elysiajs/openapi builds, so routes added by any
 * module are covered without each one repeating the list.
 */
export function completeOpenApi(doc: unknown): unknown {
  if (!doc || typeof doc !== 'object' || !('paths' in doc) || !doc.paths || 'x-arbor-complete' in doc) return doc
  // a copy: the generated document shares its schema objects with the routes' validators
  const paths = JSON.parse(JSON.stringify(doc.paths)) as Record<string, Record<string, Operation | undefined>>
  ;(doc as { paths: unknown }).paths = paths
  const tags = new Set<string>()
  const titles = new Map<string, string>()
  for (const [path, operations] of Object.entries(paths))
    for (const [method, op] of Object.entries(operations)) {
      if (!op || typeof op !== 'object' || !('responses' in op || 'summary' in op)) continue
      op.operationId = operationId(method, path)
      for (const tag of op.tags ?? []) tags.add(tag)
      // the query parameters of a route with a path parameter (./documented.ts)
      if (op[QUERY_OF_PATH]) op.parameters = [...(op.parameters ?? []), ...op[QUERY_OF_PATH]]
      delete op[QUERY_OF_PATH]
      for (const p of op.parameters ?? []) {
        // a value read as text and checked by the service: documented as the value it must be (./query.ts)
        const typed = p.schema?.[TYPED]
        if (typed && typeof typed === 'object') p.schema = { ...typed, description: p.schema?.description }
        else if (p.in === 'query' && INTEGER_QUERY.has(p.name) && p.schema?.type === 'string') p.schema.type = 'integer'
        if (p.in === 'query' && REQUIRED_QUERY.has(`${method.toUpperCase()} ${path} ${p.name}`)) p.required = true
      }
      op.responses ??= {}
      const html = Object.values(op.responses).some(isHtml)
      const statuses = errorStatuses(method, path, op)
      for (const status of Object.keys(ERRORS)) {
        const declared = op.responses[status]
        if (!statuses.includes(status)) {
          delete op.responses[status]
          continue
        }
        // a route's own error schema is replaced: every error body comes from the error plugin or
        // the transport wrapper, in one of the two shapes, whatever the route declared
        const { description, schema } = ERRORS[status]!
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
      portableSchemas(op)
      uniqueTitles(op.requestBody, `${op.operationId} body`, titles)
      for (const [status, response] of Object.entries(op.responses)) uniqueTitles(response, `${op.operationId} ${status}`, titles)
    }
  const components = ((doc as { components?: Record<string, unknown> }).components ??= {}) as { schemas?: Record<string, unknown> }
  components.schemas = { ...components.schemas, ...JSON.parse(JSON.stringify(COMPONENTS)) }
  portableSchemas(components.schemas)
  const known = new Set(((doc as { tags?: { name: string }[] }).tags ?? []).map((t) => t.name))
  ;(doc as { tags?: { name: string }[] }).tags = [
    ...((doc as { tags?: { name: string }[] }).tags ?? []),
    ...[...tags].filter((t) => !known.has(t)).map((name) => ({ name })),
  ]
  Object.defineProperty(doc, 'x-arbor-complete', { value: true, enumerable: false })
  return doc
}

/** The advisory `_meta` next to a response's data (docs/reference/errors.md: _tip, advisory, focus, guide, …). */
export const MetaBody = t.Optional(
  t.Object({}, { additionalProperties: true, description: 'advisory: _tip, advisory, focus, guide; clients tolerate unknown fields' }),
)
