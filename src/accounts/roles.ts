import type { ActionName } from '../ports/actions'
import type { Need } from './scope'

/**
 * What every route and every /mutate action needs of the caller's key (live.md §6): the one
 * place a new endpoint declares it. `src/app.ts` checks each request against ROUTE_NEEDS before
 * the route runs (on every replica, with the key's scope from the auth cache); POST /mutate
 * checks its action against ACTION_NEEDS. A route missing here is refused to every key but an
 * unrestricted one, and test/authz-matrix.test.ts fails for it: add its row.
 *
 * Keyed by `METHOD path` as Elysia registers the route (`ALL` for a route of every method). A
 * row is a need, or a function of the request's parsed body and query when the need depends on
 * them (presence: with a `field` it is an edit intent, the propose role's).
 */
export type RouteNeed = Need | ((request: { body: unknown; query: Record<string, unknown> }) => Need)

/** POST /presence: "I am here" is a read; with `field` it is an edit intent (live.md §4), propose's. */
const presenceNeed: RouteNeed = ({ body }) => {
  const field = (body as { field?: unknown } | null | undefined)?.field
  return field === undefined || field === null ? 'read' : 'propose'
}

export const ROUTE_NEEDS: Readonly<Record<string, RouteNeed>> = {
  // reads: any role (a project list on the key is checked where the project is: projects/access.ts)
  'GET /api/v1/projects': 'read',
  'GET /api/v1/nodes': 'read',
  'GET /api/v1/tree': 'read',
  'GET /api/v1/outline': 'read',
  'GET /api/v1/iterations': 'read',
  'GET /api/v1/search': 'read',
  'GET /api/v1/ready': 'read',
  'GET /api/v1/events': 'read',
  'GET /api/v1/changelog': 'read',
  'GET /api/v1/history': 'read',
  'GET /api/v1/export-okf': 'read',
  'GET /api/v1/members': 'read',
  'GET /api/v1/share': 'read',
  'GET /api/v1/webhooks': 'read',
  'GET /api/v1/webhooks/deliveries': 'read',
  'GET /api/v1/view-state': 'read',
  'GET /api/v1/view/commands': 'read',
  'GET /api/v1/workflow': 'read',
  'GET /api/v1/tier-status': 'read',
  'POST /api/v1/feedback': 'read',
  // live.md §2, §3, §5: the stream and presence are any role's (presence with a field: propose's); proposals are read
  'GET /api/v1/stream': 'read',
  'GET /api/v1/presence': 'read',
  'POST /api/v1/presence': presenceNeed,
  'DELETE /api/v1/presence': 'read',
  'GET /api/v1/proposals': 'read',
  'GET /api/v1/proposals/:proposalId': 'read',
  // the MCP endpoint: each tool's REST call is checked as its own request
  'ALL /mcp': 'read',
  // writes: the action decides (ACTION_NEEDS)
  'POST /api/v1/mutate': 'action',
  // writes outside /mutate: a key of role write
  // a new project: as addProject
  'POST /api/v1/import-okf': 'account',
  'PATCH /api/v1/projects': 'write',
  'POST /api/v1/members': 'write',
  'DELETE /api/v1/members': 'write',
  'POST /api/v1/share': 'write',
  'DELETE /api/v1/share': 'write',
  'POST /api/v1/webhooks': 'write',
  'PATCH /api/v1/webhooks': 'write',
  'DELETE /api/v1/webhooks': 'write',
  'POST /api/v1/view-command': 'write',
  'POST /api/v1/view/report': 'write',
  'POST /api/v1/workflow': 'write',
  // the caller's own keys: role write and no project list
  'GET /api/v1/keys': 'account',
  'POST /api/v1/keys': 'account',
  'DELETE /api/v1/keys': 'account',
  // no key: the guide, a share link's view, the app, the docs, health
  'GET /api/v1/guide': 'public',
  'GET /api/v1/public/share/:token': 'public',
  'GET /': 'public',
  'GET /app': 'public',
  'GET /app/app.css': 'public',
  'GET /app/app.js': 'public',
  'GET /docs': 'public',
  'GET /docs/init.js': 'public',
  'GET /docs/swagger-ui-bundle.js': 'public',
  'GET /docs/swagger-ui.css': 'public',
  'GET /favicon.ico': 'public',
  'GET /healthz': 'public',
  'GET /readyz': 'public',
  'GET /metrics': 'public',
  'GET /openapi.json': 'public',
  'GET /s/:token': 'public',
  // the operator's API: ADMIN_TOKEN, never an API key
  'GET /admin/v1/users': 'admin',
  'POST /admin/v1/users': 'admin',
  'PATCH /admin/v1/users/:id': 'admin',
  'POST /admin/v1/users/:id/api-keys': 'admin',
  'PATCH /admin/v1/api-keys/:keyId': 'admin',
  'DELETE /admin/v1/api-keys/:keyId': 'admin',
  'GET /admin/v1/backup': 'admin',
}

/**
 * What each /mutate action needs; a batch needs `write` whatever its entries. Of the proposal
 * actions (live.md §5), propose and withdrawProposal are the propose role's (a withdrawal by
 * anyone but the author is 403 not_author), applying and rejecting need a key that may write.
 * Keyed by the action names of src/ports/actions.ts: a misspelt or missing row fails `tsc`.
 */
export const ACTION_NEEDS: Readonly<Record<ActionName, Need>> = {
  add: 'write',
  update: 'claimed',
  delete: 'write',
  restore: 'write',
  batch: 'write',
  classify: 'write',
  addIteration: 'write',
  updateIteration: 'write',
  deleteIteration: 'write',
  reorderIterations: 'write',
  addProject: 'account',
  renameProject: 'write',
  claim: 'work',
  renewClaim: 'work',
  releaseClaim: 'work',
  revert: 'write',
  propose: 'propose',
  withdrawProposal: 'propose',
  applyProposal: 'write',
  rejectProposal: 'write',
}

/**
 * Rows declared ahead of their routes, which other work adds (live.md §2, §3): the table is
 * ready when they arrive. test/authz-matrix.test.ts lets these rows, and only these, name a route
 * the app does not serve yet.
 */
export const DECLARED_AHEAD: ReadonlySet<string> = new Set([
  'GET /api/v1/stream',
  'GET /api/v1/presence',
  'POST /api/v1/presence',
  'DELETE /api/v1/presence',
])

/** The row of a request to `route` (Elysia's path) with `method`; none: the route needs an unrestricted key. */
export function routeRow(method: string, route: string): RouteNeed | undefined {
  const m = method === 'HEAD' ? 'GET' : method
  return ROUTE_NEEDS[`${m} ${route}`] ?? ROUTE_NEEDS[`ALL ${route}`]
}

/** What a request needs: its route's row, applied to the request when it depends on it. */
export function routeNeed(
  method: string,
  route: string,
  request: { body: unknown; query: Record<string, unknown> } = { body: undefined, query: {} },
): Need | undefined {
  const row = routeRow(method, route)
  return typeof row === 'function' ? row(request) : row
}
