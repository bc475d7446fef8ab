import { Elysia, t } from 'elysia'
import type { Deps } from '../deps'
import { guideUrl } from '../http/meta'
import { actionsGuide, commonGuide, nodeGuide } from './content'

/** The parts of a JSON schema (TypeBox's) the guide reads. */
interface SchemaPart {
  type?: string
  const?: unknown
  description?: string
  required?: string[]
  properties?: Record<string, SchemaPart>
  anyOf?: SchemaPart[]
}

/** What the guide reads of a route's hooks (Elysia's route table): its summary, query and body schemas. */
interface RouteHooks {
  query?: SchemaPart
  body?: SchemaPart
  detail?: { summary?: string; requestBody?: { content?: { 'application/json'?: { schema?: SchemaPart } } } }
}

type RouteInfo = { method: string; path: string; hooks?: unknown }

/** GET /api/v1/guide: the machine-readable guide, built from the live route table plus content.ts. */
export const guideRoutes = (deps: Deps, routes: () => RouteInfo[]) =>
  new Elysia({ name: 'guide' }).get(
    '/guide',
    () => ({
      service: 'Arbor',
      version: 'v1',
      baseUrl: `${deps.config.publicBaseUrl}/api/v1`,
      guide: guideUrl(deps.config.publicBaseUrl),
      openapi: `${deps.config.publicBaseUrl}/openapi.json`,
      endpoints: routes()
        .filter((r) => r.path.startsWith('/api/v1/') && r.method !== 'HEAD' && r.method !== 'OPTIONS')
        .map((r) => {
          const hooks = r.hooks as RouteHooks | undefined
          const body = bodyOf(hooks)
          return {
            method: r.method,
            path: r.path,
            summary: hooks?.detail?.summary ?? '',
            ...(hooks?.query ? { query: schemaFields(hooks.query) } : {}),
            ...(body ? { body: schemaFields(body) } : {}),
          }
        }),
      actions: actionsGuide,
      nodes: nodeGuide,
      ...commonGuide,
    }),
    {
      response: {
        200: t.Object({ service: t.String(), endpoints: t.Array(t.Unknown()), actions: t.Unknown() }, { additionalProperties: true }),
      },
      detail: {
        summary: 'This guide: endpoints, actions, field rules, limits, examples (no authentication)',
        tags: ['meta'],
        security: [],
      },
    },
  )

/** A route's body schema: Elysia's, or the one only documented (POST /mutate checks its own). */
const bodyOf = (hooks: RouteHooks | undefined) => hooks?.body ?? hooks?.detail?.requestBody?.content?.['application/json']?.schema

/** `{field: description}` for an object schema, enough for an agent to build a request. */
function schemaFields(schema: SchemaPart): Record<string, string> {
  const out: Record<string, string> = {}
  if (Array.isArray(schema?.anyOf) && schema.anyOf.every((v) => v?.properties?.action?.const)) {
    // one variant per action (POST /mutate): every field any of them has, and the list of actions
    for (const variant of schema.anyOf)
      for (const [name, text] of Object.entries(schemaFields(variant)))
        if (!Object.hasOwn(out, name)) out[name] = `${text.replace(', required', '')} (see actions for which action needs it)`
    out.action = `string, required — one of: ${schema.anyOf.map((v) => v.properties?.action?.const).join(', ')}`
    return out
  }
  const required = new Set<string>(schema?.required ?? [])
  for (const [name, prop] of Object.entries(schema?.properties ?? {})) {
    const type = prop.type ?? (prop.anyOf ? prop.anyOf.map((p) => p.const ?? p.type).join('|') : 'any')
    out[name] = `${type}${required.has(name) ? ', required' : ''}${prop.description ? ` — ${prop.description}` : ''}`
  }
  return out
}
