import { Elysia, t } from 'elysia'
import type { Deps } from '../deps'
import { guideUrl } from '../http/meta'
import { actionsGuide, commonGuide, nodeGuide } from './content'

type RouteInfo = { method: string; path: string; hooks?: any }

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
        .map((r) => ({
          method: r.method,
          path: r.path,
          summary: r.hooks?.detail?.summary ?? '',
          ...(r.hooks?.query ? { query: schemaFields(r.hooks.query) } : {}),
          ...(bodyOf(r.hooks) ? { body: schemaFields(bodyOf(r.hooks)) } : {}),
        })),
      actions: actionsGuide,
      nodes: nodeGuide,
      ...commonGuide,
    }),
    {
      response: { 200: t.Object({ service: t.String(), endpoints: t.Array(t.Any()), actions: t.Any() }, { additionalProperties: true }) },
      detail: { summary: 'This guide: endpoints, actions, field rules, limits, examples (no authentication)', tags: ['meta'] },
    },
  )

/** A route's body schema: Elysia's, or the one only documented (POST /mutate checks its own). */
const bodyOf = (hooks: any) => hooks?.body ?? hooks?.detail?.requestBody?.content?.['application/json']?.schema

/** `{field: description}` for an object schema, enough for an agent to build a request. */
function schemaFields(schema: any): Record<string, string> {
  const out: Record<string, string> = {}
  if (Array.isArray(schema?.anyOf) && schema.anyOf.every((v: any) => v?.properties?.action?.const)) {
    // one variant per action (POST /mutate): every field any of them has, and the list of actions
    for (const variant of schema.anyOf)
      for (const [name, text] of Object.entries(schemaFields(variant)))
        if (!Object.hasOwn(out, name)) out[name] = `${text.replace(', required', '')} (see actions for which action needs it)`
    out.action = `string, required — one of: ${schema.anyOf.map((v: any) => v.properties.action.const).join(', ')}`
    return out
  }
  const required = new Set<string>(schema?.required ?? [])
  for (const [name, prop] of Object.entries<any>(schema?.properties ?? {})) {
    const type = prop.type ?? (prop.anyOf ? prop.anyOf.map((p: any) => p.const ?? p.type).join('|') : 'any')
    out[name] = `${type}${required.has(name) ? ', required' : ''}${prop.description ? ` — ${prop.description}` : ''}`
  }
  return out
}
