/**
 * OpenAPI operation ids a generated client can use as method names (`listNodes`, `mutate`), in
 * one place rather than in every route file. A route not named here gets one derived from its
 * method and path (`POST /api/v1/claims` → `postClaims`), always a valid identifier.
 */
const NAMES: Record<string, string> = {
  'GET /healthz': 'getHealth',
  'GET /readyz': 'getReadiness',
  'GET /metrics': 'getMetrics',
  'GET /admin/v1/users': 'listUsers',
  'POST /admin/v1/users': 'createUser',
  'PATCH /admin/v1/users/{id}': 'updateUser',
  'POST /admin/v1/users/{id}/api-keys': 'createApiKey',
  'DELETE /admin/v1/api-keys/{keyId}': 'revokeApiKey',
  'PATCH /admin/v1/api-keys/{keyId}': 'rescopeApiKey',
  'GET /admin/v1/backup': 'getBackup',
  'GET /s/{token}': 'getSharePage',
  'GET /app': 'getApp',
  'GET /api/v1/guide': 'getGuide',
  'GET /api/v1/tier-status': 'getTierStatus',
  'POST /api/v1/feedback': 'sendFeedback',
  'GET /api/v1/projects': 'listProjects',
  'PATCH /api/v1/projects': 'archiveProject',
  'GET /api/v1/members': 'listMembers',
  'POST /api/v1/members': 'addMember',
  'DELETE /api/v1/members': 'removeMember',
  'POST /api/v1/mutate': 'mutate',
  'GET /api/v1/nodes': 'listNodes',
  'GET /api/v1/changelog': 'listChangelog',
  'GET /api/v1/tree': 'getTree',
  'GET /api/v1/iterations': 'listIterations',
  'GET /api/v1/search': 'search',
  'POST /api/v1/webhooks': 'createWebhook',
  'GET /api/v1/webhooks': 'listWebhooks',
  'PATCH /api/v1/webhooks': 'updateWebhook',
  'DELETE /api/v1/webhooks': 'deleteWebhook',
  'GET /api/v1/webhooks/deliveries': 'listWebhookDeliveries',
  'GET /api/v1/public/share/{token}': 'getSharedProject',
  'POST /api/v1/share': 'createShareLink',
  'GET /api/v1/share': 'listShareLinks',
  'DELETE /api/v1/share': 'revokeShareLink',
  'GET /api/v1/events': 'listEvents',
  'GET /api/v1/history': 'listHistory',
  'GET /api/v1/export-okf': 'exportOkf',
  'POST /api/v1/view-command': 'sendViewCommand',
  'GET /api/v1/view-state': 'getViewState',
  'GET /api/v1/view/commands': 'pollViewCommands',
  'POST /api/v1/view/report': 'reportViewState',
  'GET /api/v1/workflow': 'listWorkflows',
  'POST /api/v1/workflow': 'runWorkflow',
}

const words = (text: string) => text.split(/[^A-Za-z0-9]+/).filter(Boolean)
const capital = (w: string) => w[0]!.toUpperCase() + w.slice(1)

export function operationId(method: string, path: string): string {
  const named = NAMES[`${method.toUpperCase()} ${path}`]
  if (named) return named
  const parts = path
    .replace(/^\/(api|admin)\/v1(?=\/|$)/, '')
    .split('/')
    .filter(Boolean)
    .flatMap((segment) => (segment.startsWith('{') ? ['By', ...words(segment)] : words(segment)))
  return method.toLowerCase() + parts.map(capital).join('')
}

/** Query parameters that take whole numbers: the routes read them as text and check them, the reference says integer. */
export const INTEGER_QUERY = new Set(['limit', 'wait', 'budget'])

/**
 * Query parameters a route leaves optional in its schema so that its service answers a missing one
 * with docs/reference/errors.md's message ("id is required"), but that every call needs: documented as required.
 */
export const REQUIRED_QUERY = new Set(['DELETE /api/v1/webhooks id', 'GET /api/v1/webhooks/deliveries id', 'DELETE /api/v1/share token'])
