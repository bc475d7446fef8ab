import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { guardRoute } from '../src/accounts/auth'
import { ACTION_NEEDS, DECLARED_AHEAD, ROUTE_NEEDS, routeNeed } from '../src/accounts/roles'
import { type KeyScope, type Need, ROLES, type Role } from '../src/accounts/scope'
import { createApp } from '../src/app'
import { type ActionName, isActionName } from '../src/ports/actions'
import { ADMIN_TOKEN, startApp, type TestApp } from './helpers'

/**
 * live.md §6: the authorization matrix, generated from the route table. Every route the app
 * serves × every role × (an unrestricted key on its own project | a key limited to that project
 * | the same key on another project); POST /mutate once per action. A route without a row in
 * src/accounts/roles.ts, or without a sample request here, fails the first tests, and an action
 * without them fails `tsc` (ACTION_NEEDS and ACTION_SAMPLES are keyed by ActionName): a new
 * endpoint cannot be added without its row. Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.
 */

/** `stream`: an answer that stays open (text/event-stream): its status is read and the body dropped. */
type Sample = { method: string; path: string; body?: unknown; project: boolean; stream?: boolean }
type SampleOf = (p: string) => Omit<Sample, 'project'> & { project?: boolean }
type Col = 'unlimited' | 'own' | 'other'

/** One request per route that reaches its checks (valid enough to get past validation); `p` is the project. */
const SAMPLES: Record<string, SampleOf | SampleOf[]> = {
  'GET /api/v1/projects': () => ({ method: 'GET', path: '/api/v1/projects?includeArchived=true', project: false }),
  'GET /api/v1/nodes': (p) => ({ method: 'GET', path: `/api/v1/nodes?projectId=${p}` }),
  'GET /api/v1/tree': (p) => ({ method: 'GET', path: `/api/v1/tree?projectId=${p}&format=outline` }),
  'GET /api/v1/outline': (p) => ({ method: 'GET', path: `/api/v1/outline?projectId=${p}` }),
  'GET /api/v1/iterations': (p) => ({ method: 'GET', path: `/api/v1/iterations?projectId=${p}` }),
  'GET /api/v1/search': (p) => ({ method: 'GET', path: `/api/v1/search?projectId=${p}&q=job` }),
  'GET /api/v1/ready': (p) => ({ method: 'GET', path: `/api/v1/ready?projectId=${p}` }),
  'GET /api/v1/events': (p) => ({ method: 'GET', path: `/api/v1/events?projectId=${p}` }),
  'GET /api/v1/changelog': (p) => ({ method: 'GET', path: `/api/v1/changelog?projectId=${p}` }),
  'GET /api/v1/history': (p) => ({ method: 'GET', path: `/api/v1/history?projectId=${p}` }),
  'GET /api/v1/export-okf': (p) => ({ method: 'GET', path: `/api/v1/export-okf?projectId=${p}` }),
  'GET /api/v1/members': (p) => ({ method: 'GET', path: `/api/v1/members?projectId=${p}` }),
  'GET /api/v1/share': (p) => ({ method: 'GET', path: `/api/v1/share?projectId=${p}` }),
  'GET /api/v1/webhooks': (p) => ({ method: 'GET', path: `/api/v1/webhooks?projectId=${p}` }),
  'GET /api/v1/webhooks/deliveries': (p) => ({ method: 'GET', path: `/api/v1/webhooks/deliveries?projectId=${p}` }),
  'GET /api/v1/view-state': (p) => ({ method: 'GET', path: `/api/v1/view-state?projectId=${p}` }),
  'GET /api/v1/view/commands': (p) => ({ method: 'GET', path: `/api/v1/view/commands?projectId=${p}` }),
  'GET /api/v1/workflow': () => ({ method: 'GET', path: '/api/v1/workflow', project: false }),
  'GET /api/v1/tier-status': () => ({ method: 'GET', path: '/api/v1/tier-status', project: false }),
  'GET /api/v1/guide': () => ({ method: 'GET', path: '/api/v1/guide', project: false }),
  'GET /api/v1/public/share/:token': () => ({ method: 'GET', path: '/api/v1/public/share/shr_nope', project: false }),
  // feedback's projectId is context: one the key cannot reach is dropped and the item kept (api.md), a project list included
  'POST /api/v1/feedback': (p) => ({
    method: 'POST',
    path: '/api/v1/feedback',
    body: { kind: 'note', summary: 'matrix', projectId: p },
    project: false,
  }),
  'ALL /mcp': () => ({
    method: 'POST',
    path: '/mcp',
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
    project: false,
  }),
  'POST /api/v1/import-okf': () => ({ method: 'POST', path: '/api/v1/import-okf', body: { files: {} }, project: false }),
  'PATCH /api/v1/projects': (p) => ({ method: 'PATCH', path: '/api/v1/projects', body: { projectId: p, archived: false } }),
  'POST /api/v1/members': (p) => ({ method: 'POST', path: '/api/v1/members', body: { projectId: p, userId: 'usr_nobody' } }),
  'DELETE /api/v1/members': (p) => ({ method: 'DELETE', path: `/api/v1/members?projectId=${p}&userId=usr_nobody` }),
  'POST /api/v1/share': (p) => ({ method: 'POST', path: '/api/v1/share', body: { projectId: p } }),
  'DELETE /api/v1/share': (p) => ({ method: 'DELETE', path: `/api/v1/share?projectId=${p}&token=shr_nope` }),
  'POST /api/v1/webhooks': (p) => ({ method: 'POST', path: '/api/v1/webhooks', body: { projectId: p, url: 'https://example.com/hook' } }),
  'PATCH /api/v1/webhooks': (p) => ({ method: 'PATCH', path: '/api/v1/webhooks', body: { projectId: p, id: 'whk_nope' } }),
  'DELETE /api/v1/webhooks': (p) => ({ method: 'DELETE', path: `/api/v1/webhooks?projectId=${p}&id=whk_nope` }),
  'POST /api/v1/view-command': (p) => ({
    method: 'POST',
    path: '/api/v1/view-command',
    body: { projectId: p, command: { type: 'setViewMode', mode: 'tree' } },
  }),
  'POST /api/v1/view/report': (p) => ({
    method: 'POST',
    path: '/api/v1/view/report',
    body: {
      projectId: p,
      state: { view_mode: 'tree', selected_iteration: null, expanded_nodes: [], focused_goals: [], selected_node: null },
    },
  }),
  'POST /api/v1/workflow': (p) => ({ method: 'POST', path: '/api/v1/workflow', body: { projectId: p, action: 'start', flow: 'nope' } }),
  // the rows declared ahead (src/accounts/roles.ts), used once their routes are served; then proposals (live.md §5)
  'GET /api/v1/stream': (p) => ({ method: 'GET', path: `/api/v1/stream?projectId=${p}`, stream: true }),
  'GET /api/v1/presence': (p) => ({ method: 'GET', path: `/api/v1/presence?projectId=${p}` }),
  'POST /api/v1/presence': [
    (p) => ({ method: 'POST', path: '/api/v1/presence', body: { projectId: p, note: 'matrix' } }),
    (p) => ({ method: 'POST', path: '/api/v1/presence', body: { projectId: p, nodeId: 'goal-nope', field: 'label' } }),
  ],
  'DELETE /api/v1/presence': (p) => ({ method: 'DELETE', path: `/api/v1/presence?projectId=${p}` }),
  'GET /api/v1/proposals': (p) => ({ method: 'GET', path: `/api/v1/proposals?projectId=${p}` }),
  'GET /api/v1/proposals/:proposalId': (p) => ({ method: 'GET', path: `/api/v1/proposals/prp_nope?projectId=${p}` }),
  'GET /api/v1/keys': () => ({ method: 'GET', path: '/api/v1/keys', project: false }),
  'POST /api/v1/keys': () => ({ method: 'POST', path: '/api/v1/keys', body: { label: 'matrix' }, project: false }),
  'DELETE /api/v1/keys': () => ({ method: 'DELETE', path: '/api/v1/keys?keyId=key_nope', project: false }),
}

/** One body per /mutate action that reaches its checks (keyed by ActionName: a missing one fails `tsc`). */
const ACTION_SAMPLES: Readonly<Record<ActionName, (p: string) => Record<string, unknown>>> = {
  add: (p) => ({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Matrix' } } }),
  update: (p) => ({ action: 'update', projectId: p, nodeId: 'goal-nope', data: { label: 'x' } }),
  delete: (p) => ({ action: 'delete', projectId: p, nodeId: 'goal-nope' }),
  restore: (p) => ({ action: 'restore', projectId: p, nodeId: 'goal-nope' }),
  batch: (p) => ({ action: 'batch', projectId: p, mutations: [{ action: 'update', nodeId: 'goal-nope', data: { label: 'x' } }] }),
  classify: (p) => ({ action: 'classify', projectId: p, nodeId: 'task-nope', classification: 'do-it' }),
  addIteration: (p) => ({ action: 'addIteration', projectId: p, iteration: { name: 'Matrix' } }),
  updateIteration: (p) => ({ action: 'updateIteration', projectId: p, iterationId: 'it-nope', updates: { name: 'x' } }),
  deleteIteration: (p) => ({ action: 'deleteIteration', projectId: p, iterationId: 'it-nope' }),
  reorderIterations: (p) => ({ action: 'reorderIterations', projectId: p, iterationIds: [] }),
  addProject: () => ({ action: 'addProject', project: { name: `matrix ${Math.random().toString(36).slice(2)}` } }),
  renameProject: (p) => ({ action: 'renameProject', projectId: p, name: p }),
  claim: (p) => ({ action: 'claim', projectId: p, count: 1, agent: 'matrix/1' }),
  // live.md §5's actions (an unknown proposal: 404 once the key may, key_scope before)
  propose: (p) => ({
    action: 'propose',
    projectId: p,
    title: 'Matrix',
    mutations: [{ action: 'add', node: { type: 'goal', data: { label: 'Proposed' } } }],
  }),
  withdrawProposal: (p) => ({ action: 'withdrawProposal', projectId: p, proposalId: 'prp_nope' }),
  applyProposal: (p) => ({ action: 'applyProposal', projectId: p, proposalId: 'prp_nope' }),
  rejectProposal: (p) => ({ action: 'rejectProposal', projectId: p, proposalId: 'prp_nope' }),
  renewClaim: (p) => ({ action: 'renewClaim', projectId: p, claimToken: 'clm_nope' }),
  releaseClaim: (p) => ({ action: 'releaseClaim', projectId: p, claimToken: 'clm_nope' }),
  revert: (p) => ({ action: 'revert', projectId: p, changeIds: ['999999'], dryRun: true }),
}

const RANK: Record<Role, number> = { read: 0, propose: 1, work: 2, write: 3 }

/** Whether a key of `scope` passes what `need` asks (an update without a claim: `claimed` is write's). */
function allowed(need: Need, scope: KeyScope): boolean {
  if (need === 'account') return scope.role === 'write' && !scope.projects
  if (need === 'claimed') return scope.role === 'write'
  if (need === 'public' || need === 'admin' || need === 'action') return true
  return RANK[scope.role] >= RANK[need]
}

let app: TestApp
let routes: { method: string; path: string }[]
let own: string
let other: string
const keys = {} as Record<Role, Record<'unlimited' | 'limited', string>>

beforeAll(async () => {
  app = await startApp()
  routes = createApp(app.deps).app.routes.map((r) => ({ method: r.method, path: r.path }))
  own = await app.project('matrix-own')
  other = await app.project('matrix-other')
  for (const role of ROLES)
    keys[role] = {
      unlimited: (await app.call('POST', '/api/v1/keys', { body: { label: `${role}`, scope: { role } } })).body.apiKey,
      limited: (await app.call('POST', '/api/v1/keys', { body: { label: `${role} own`, scope: { role, projects: [own] } } })).body.apiKey,
    }
}, 60_000)
afterAll(() => app?.close())

const rowOf = (r: { method: string; path: string }) => `${r.method} ${r.path}`

describe('the route table', () => {
  it('declares what every route the app serves needs, and names no route it does not serve', () => {
    const served = new Set(routes.map(rowOf))
    expect(routes.filter((r) => routeNeed(r.method, r.path) === undefined).map(rowOf)).toEqual([])
    // only a row declared ahead of its route (the stream, presence, proposals) may name a route not served yet
    expect(Object.keys(ROUTE_NEEDS).filter((row) => !served.has(row) && !DECLARED_AHEAD.has(row))).toEqual([])
  })

  it('a row may depend on the request: presence with a field is an edit intent, the propose role’s', async () => {
    expect(routeNeed('POST', '/api/v1/presence', { body: { projectId: 'p' }, query: {} })).toBe('read')
    expect(routeNeed('POST', '/api/v1/presence', { body: { projectId: 'p', nodeId: 'goal-1', field: 'label' }, query: {} })).toBe('propose')
    // the guard applies it with the key's scope, as app.ts does for every request
    const guard = (key: string, body: unknown) =>
      Promise.resolve()
        .then(() => guardRoute(app.deps, 'POST', '/api/v1/presence', `Bearer ${key}`, { body, query: {} }))
        .then(
          () => 'through',
          (err) => err.error,
        )
    expect(await guard(keys.read.unlimited, { projectId: own })).toBe('through')
    expect(await guard(keys.read.unlimited, { projectId: own, nodeId: 'goal-1', field: 'label' })).toBe('key_scope')
    expect(await guard(keys.propose.unlimited, { projectId: own, nodeId: 'goal-1', field: 'label' })).toBe('through')
  })

  it('has a sample request for every route a key reaches and every action', () => {
    // POST /mutate is sampled per action (ACTION_SAMPLES)
    const keyed = routes.filter(
      (r) =>
        (!['public', 'admin', 'action'].includes(routeNeed(r.method, r.path) ?? '') || r.path.startsWith('/api/')) &&
        routeNeed(r.method, r.path) !== 'action',
    )
    expect(keyed.map(rowOf).filter((row) => !SAMPLES[row])).toEqual([])
    // every action has its need (ACTION_NEEDS) and its sample (ACTION_SAMPLES): both keyed by ActionName, checked by `tsc`
  })

  it('the operator routes take ADMIN_TOKEN, never an API key', async () => {
    for (const r of routes.filter((r) => routeNeed(r.method, r.path) === 'admin')) {
      const path = r.path.replace(':id', 'usr_nope').replace(':keyId', 'key_nope')
      const res = await app.call(r.method, path, {
        key: keys.write.unlimited,
        body: r.method === 'GET' || r.method === 'DELETE' ? undefined : {},
      })
      expect({ row: rowOf(r), status: res.status }).toEqual({ row: rowOf(r), status: 401 })
    }
    expect((await app.call('GET', '/admin/v1/users', { key: ADMIN_TOKEN })).status).toBe(200)
  })
})

/** Every cell: [row, role, column, request]; the rows of the routes the app serves, and of the actions it has. */
function cells(): [string, Role, Col, (p: string) => Sample][] {
  const out: [string, Role, Col, (p: string) => Sample][] = []
  const rows: [string, (p: string) => Sample][] = []
  const served = new Set(routes.map(rowOf))
  for (const [row, need] of Object.entries(ROUTE_NEEDS)) {
    if (need === 'public' || need === 'admin' || need === 'action' || !served.has(row)) continue
    const samples = SAMPLES[row]
    for (const sample of Array.isArray(samples) ? samples : samples ? [samples] : [])
      rows.push([row, (p) => ({ project: true, ...sample(p) })])
  }
  for (const [action, sample] of Object.entries(ACTION_SAMPLES))
    rows.push([
      `POST /api/v1/mutate ${action}`,
      (p) => ({ method: 'POST', path: '/api/v1/mutate', body: sample(p), project: action !== 'addProject' }),
    ])
  for (const [row, sample] of rows)
    for (const role of ROLES) for (const col of ['unlimited', 'own', 'other'] as const) out.push([row, role, col, sample])
  return out
}

/** What a cell's request needs: its action's row, or its route's applied to the request. */
function needOf(row: string, req: Sample): Need {
  const action = /^POST \/api\/v1\/mutate (\w+)$/.exec(row)?.[1]
  if (action) return isActionName(action) ? ACTION_NEEDS[action] : 'write'
  const [method, route] = row.split(' ') as [string, string]
  const query = Object.fromEntries(new URL(`http://x${req.path}`).searchParams)
  return routeNeed(method, route, { body: req.body, query }) ?? 'write'
}

/** One cell's request: a JSON call, or for a stream its status and (when refused) its JSON body. */
async function send(req: Sample, key: string): Promise<{ status: number; body: any }> {
  if (!req.stream) return app.call(req.method, req.path, { key, body: req.body })
  const abort = new AbortController()
  const res = await app.handle(
    new Request(`http://arbor.test${req.path}`, { headers: { authorization: `Bearer ${key}` }, signal: abort.signal }),
  )
  const json = (res.headers.get('content-type') ?? '').includes('json')
  const body = json ? await res.json() : undefined
  abort.abort()
  if (!json) await res.body?.cancel().catch(() => {})
  return { status: res.status, body }
}

describe('the matrix: every route and action × every role × own project, limited key, other project', () => {
  it('refuses exactly what each role may not do, with 403 key_scope, and lets the rest through', async () => {
    const wrong: unknown[] = []
    let n = 0
    for (const [row, role, col, sample] of cells()) {
      const scope: KeyScope = col === 'unlimited' ? { role } : { role, projects: [own] }
      const req = sample(col === 'other' ? other : own)
      const need = needOf(row, req)
      const res = await send(req, keys[role][col === 'unlimited' ? 'unlimited' : 'limited'])
      const refused = res.status === 403 && res.body?.error === 'key_scope'
      const expectRefused = !allowed(need, scope) || (col === 'other' && req.project)
      n++
      if (refused !== expectRefused || res.status >= 500)
        wrong.push({
          row,
          role,
          col,
          status: res.status,
          body: JSON.stringify(res.body).slice(0, 200),
          expected: expectRefused ? 'key_scope' : 'through',
        })
      if (refused && !(String(res.body.message).includes(role) && typeof res.body._meta?._tip === 'string'))
        wrong.push({ row, role, col, problem: 'a key_scope refusal names the role and gives a tip', body: res.body })
    }
    expect(wrong).toEqual([])
    // the size of the matrix, for the record
    console.log(`authorization matrix: ${n} cells`)
    expect(n).toBeGreaterThan(500)
  }, 300_000)
})
