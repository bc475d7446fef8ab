import { openapi } from '@elysiajs/openapi'
import { Elysia, t } from 'elysia'
import { guardRoute } from './accounts/auth'
import { keyRoutes } from './accounts/routes'
import { adminRoutes } from './admin/routes'
import type { Deps } from './deps'
import { eventRoutes } from './events/routes'
import { exportRoutes } from './export/routes'
import { feedbackRoutes } from './feedback/routes'
import { guideRoutes } from './guide/routes'
import { historyRoutes } from './history/routes'
import { clientIp } from './http/client-ip'
import { errorPlugin } from './http/error-plugin'
import { completeOpenApi } from './http/schemas'
import { createHandler } from './http/server'
import { iterationRoutes } from './iterations/routes'
import { liveRoutes } from './live/routes'
import { handleMcp, MCP_PATH } from './mcp/http'
import { metricsRoutes } from './metrics/routes'
import { readProposal } from './mutate/proposals'
import { mutateRoutes } from './mutate/routes'
import { nodeRoutes } from './nodes/routes'
import { projectRoutes } from './projects/routes'
import { proposalRoutes } from './proposals/routes'
import { fastReads, HEALTHZ } from './reads/fast-reads'
import { searchRoutes } from './search/routes'
import { sharePageRoutes, shareRoutes } from './share/routes'
import { tierRoutes } from './tiers/routes'
import { treeRoutes } from './tree/routes'
import { viewRoutes } from './view/routes'
import { docsRoutes, webRoutes } from './web/routes'
import { webhookRoutes } from './webhooks/routes'
import { workRoutes } from './work/routes'
import { renewForReader } from './work/service'
import { workflowRoutes } from './workflow/routes'

/**
 * Builds the Elysia app and the request handler around it. Never listens: main.ts hands
 * `handle` to Bun.serve, and tests call it directly.
 */
export function createApp(deps: Deps) {
  // the guide lists the routes of the finished app, known only once it is built
  let routeTable: () => { method: string; path: string; hooks?: unknown }[] = () => []
  const api = new Elysia({ name: 'api-v1', prefix: '/api/v1' })
    .use(guideRoutes(deps, () => routeTable()))
    .use(tierRoutes(deps))
    .use(feedbackRoutes(deps))
    .use(projectRoutes(deps))
    .use(mutateRoutes(deps))
    .use(nodeRoutes(deps))
    .use(treeRoutes(deps))
    .use(iterationRoutes(deps))
    .use(searchRoutes(deps))
    .use(webhookRoutes(deps))
    .use(shareRoutes(deps))
    .use(eventRoutes(deps))
    .use(liveRoutes(deps))
    .use(historyRoutes(deps))
    .use(exportRoutes(deps))
    .use(viewRoutes(deps))
    .use(workflowRoutes(deps))
    .use(keyRoutes(deps))
    .use(workRoutes(deps))
    .use(proposalRoutes(deps, readProposal))

  const app = new Elysia({ normalize: false })
    .use(errorPlugin(deps, () => routeTable()))
    // what the key may (live.md §6): each route's need is declared in src/accounts/roles.ts
    // (a transform runs once the body is parsed, before validation: a row may depend on the body)
    .onTransform({ as: 'global' }, ({ request, route, body, query }) =>
      guardRoute(deps, request.method, route, request.headers.get('authorization'), { body, query }),
    )
    // every operation documents every error status it can answer (src/http/schemas.ts)
    .onAfterHandle({ as: 'global' }, ({ path, response }) => {
      if (path === '/openapi.json') completeOpenApi(response)
    })
    // a read of a node by an agent (X-Agent-Id) that holds its claim renews the claim (docs/agents.md);
    // it runs only after the route answered, so after its access checks
    .onAfterHandle({ as: 'global' }, async ({ request, query, set }) => {
      if (request.method !== 'GET' || (typeof set.status === 'number' && set.status >= 300)) return
      const agent = request.headers.get('x-agent-id')
      const { projectId, nodeId } = query as Record<string, unknown>
      if (agent && typeof projectId === 'string' && typeof nodeId === 'string') await renewForReader(deps, projectId, nodeId, agent)
    })
    .use(
      openapi({
        // no CDN page: /docs is served from the swagger-ui-dist package (web/routes.ts)
        provider: null,
        path: '/docs',
        specPath: '/openapi.json',
        exclude: { paths: ['/docs', '/openapi.json'] },
        documentation: {
          info: {
            title: 'Arbor API',
            version: '1.0.0',
            description: 'The self-hosted Planning Tree Service. Every /api/v1 path also answers on its unversioned /api/ twin.',
          },
          // PUBLIC_BASE_URL: the address clients reach this server at (paths begin with /api/v1)
          servers: [{ url: deps.config.publicBaseUrl }],
          components: {
            securitySchemes: {
              apiKey: {
                type: 'http',
                scheme: 'bearer',
                description:
                  'arb_… API key. A key may carry a scope (role read, propose, work or write; projects): a call outside it gets 403 key_scope (docs/keys.md).',
              },
            },
          },
          security: [{ apiKey: [] }],
        },
      }),
    )
    // the same bytes every time: no object made, serialised and checked against the schema
    // (a plain GET takes the fast lane, src/reads/fast-reads.ts; this route answers the rest and documents it)
    .get('/healthz', () => new Response(HEALTHZ.body, { headers: { 'content-type': HEALTHZ.type } }), {
      response: { 200: t.Object({ status: t.Literal('ok') }) },
      detail: { summary: 'The process is up', tags: ['meta'], security: [] },
    })
    .get(
      '/readyz',
      async ({ status }) => {
        const ok = await deps.db.ping().catch(() => false)
        return ok ? { status: 'ready' as const } : status(503, { status: 'unavailable', message: 'database unreachable' })
      },
      {
        response: { 200: t.Object({ status: t.Literal('ready') }), 503: t.Object({ status: t.String(), message: t.String() }) },
        detail: { summary: 'The database answers', tags: ['meta'], security: [] },
      },
    )
    .use(adminRoutes(deps))
    .use(metricsRoutes(deps))
    .use(sharePageRoutes(deps))
    .use(webRoutes())
    .use(docsRoutes())
    .use(api)
    // the MCP server over Streamable HTTP; its tool calls come back through `handle` as REST requests
    .all(
      MCP_PATH,
      ({ request }) => {
        const ip = request.headers.get(CLIENT_IP) || undefined
        return handleMcp(request, {
          publicBaseUrl: deps.config.publicBaseUrl,
          api: async (r) => inner(r, ip),
          warn: (msg, fields) => deps.log.warn(msg, fields),
        })
      },
      {
        parse: 'none',
        // JSON-RPC, not REST: described in docs/mcp.md and the guide, kept out of the REST reference
        detail: { summary: 'The MCP server (Streamable HTTP, stateless; Bearer API key)', tags: ['meta'], hide: true },
      },
    )

  routeTable = () => app.routes
  deps.metrics.routes(() => app.routes)
  const inner = createHandler(deps, app, {
    read: fastReads(deps),
    // /mcp learns the caller's address (for the rate limit of its REST calls) from a header only we
    // set: on every request that may reach /mcp, and on any that arrives with it, it is ours. The
    // address is the one REST requests are counted by: behind a proxy (TRUST_PROXY), the
    // forwarded one, not the proxy's, which every caller would share
    prepare: (line, socketIp) => {
      if (!line.url.pathname.startsWith(MCP_PATH) && !line.req.headers.has(CLIENT_IP)) return line
      const headers = new Headers(line.req.headers)
      headers.set(CLIENT_IP, clientIp(line.req, socketIp, deps.config.trustProxy))
      return { req: new Request(line.req, { headers }), url: line.url }
    },
  })
  return { app, handle: inner }
}

const CLIENT_IP = 'x-arbor-mcp-client-ip'
