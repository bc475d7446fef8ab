import { afterAll, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { TObject, TSchema } from '@sinclair/typebox'
import { createApp } from '../src/app'
import { checkInput } from '../src/http/action-schema'
import { IterationsParams, IterationsQuery } from '../src/iterations/model'
import { NodesParams, NodesQuery } from '../src/nodes/input'
import { SearchParams, SearchQuery } from '../src/search/model'
import { OutlineParams, OutlineQuery, TreeOutlineQuery, TreeParams, TreeWalkQuery } from '../src/tree/model'
import { ReadyParams, ReadyQuery } from '../src/work/model'
import { ADMIN_TOKEN, startApp } from './helpers'

// docs/validation.md: one way to check input (checkInput after the access check), 403 before 400
const app = await startApp()
afterAll(() => app.close())

const SRC = join(import.meta.dir, '..', 'src')
const routeFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? routeFiles(join(dir, e.name)) : e.name === 'routes.ts' ? [join(dir, e.name)] : [],
  )

describe('one way to check input', () => {
  it('leaves no query or body schema for Elysia to check before the service', () => {
    const checked = routeFiles(SRC).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (/^\s*(query|body): /.test(line) ? [`${relative(SRC, file)}:${i + 1}`] : [])),
    )
    expect(checked).toEqual([])
  })

  it('answers a caller without access 403 before any 400 about a value', async () => {
    const p = await app.project()
    const stranger = await app.user()
    const reads = [`/api/v1/ready?projectId=${p}&limit=0`, `/api/v1/nodes?projectId=${p}&type=epic`, `/api/v1/events?projectId=${p}&wait=x`]
    for (const path of reads) {
      const denied = await app.call('GET', path, { key: stranger.key })
      expect([path, denied.status, denied.body.error]).toEqual([path, 403, 'project_access_denied'])
      expect([path, (await app.call('GET', path)).status]).toEqual([path, 400])
    }
    const share = { projectId: p, settings: 'all' }
    expect((await app.call('POST', '/api/v1/share', { key: stranger.key, body: share })).body).toEqual({ error: 'Not your project' })
    expect((await app.call('POST', '/api/v1/share', { body: share })).status).toBe(400)
    const unknownName = await app.call('GET', `/api/v1/iterations?projectId=${p}&stauts=done`, { key: stranger.key })
    expect(unknownName.status).toBe(403)
  })

  it('answers a write of a caller without access 403 before any 400 about its body (POST /mutate)', async () => {
    const p = await app.project()
    const stranger = await app.user()
    const bodies = [
      { action: 'add', projectId: p, node: { type: 'epic', data: { label: 'x' } } },
      { action: 'update', projectId: p, nodeId: 'goal-1', data: { status: 'sideways' } },
      { action: 'batch', projectId: p, mutations: 'all of them' },
      { action: 'claim', projectId: p, agent: '' },
      { action: 'addIteration', projectId: p, iteration: { name: 7 } },
      { action: 'revert', projectId: p, changeIds: 'latest' },
      { action: 'propose', projectId: p },
    ]
    for (const body of bodies) {
      const denied = await app.call('POST', '/api/v1/mutate', { key: stranger.key, body })
      expect([body.action, denied.status, denied.body.error]).toEqual([body.action, 403, 'project_access_denied'])
      // the owner, who may write there, hears what is wrong with the body
      expect([body.action, (await app.call('POST', '/api/v1/mutate', { body })).status]).toEqual([body.action, 400])
    }
  })

  it('answers a workflow call of a caller without access 403 before any 400 about its body (POST /workflow)', async () => {
    const p = await app.project()
    const stranger = await app.user()
    for (const body of [
      { projectId: p, action: 'finish' },
      { projectId: p, action: 'start', flow: 'nope' },
      { projectId: p, action: 'advance' },
    ]) {
      const denied = await app.call('POST', '/api/v1/workflow', { key: stranger.key, body })
      expect([body.action, denied.status, denied.body.error]).toEqual([body.action, 403, 'project_access_denied'])
      expect([body.action, (await app.call('POST', '/api/v1/workflow', { body })).status]).toEqual([body.action, 400])
    }
  })

  it('refuses a missing projectId with 400 (there is no project to ask about), every plain mistake at once', async () => {
    const res = await app.call('GET', '/api/v1/ready?projectID=p&limit=5')
    expect(res.status).toBe(400)
    expect(res.body).toEqual({
      success: false,
      errors: ['projectId is required', "projectID: Property 'projectID' should not be provided"],
      _meta: { _tip: 'The query string has `projectID`: did you mean `projectId`?' },
    })
  })

  it('refuses a body that is no JSON object the same way on every route', async () => {
    for (const path of ['/api/v1/feedback', '/api/v1/presence', '/api/v1/webhooks', '/api/v1/mutate', '/api/v1/view-command']) {
      const res = await app.call('POST', path, { body: [1] })
      expect([path, res.status, res.body.errors]).toEqual([
        path,
        400,
        ['Request body must be a JSON object (Content-Type: application/json)'],
      ])
    }
  })

  it("documents each typed read parameter as its query's checker reads it: the same names, bounds, values", () => {
    const p = { projectId: 'p' }
    const reads: { params: TObject; query: TObject; base: Record<string, string>; names?: string[] }[] = [
      { params: NodesParams, query: NodesQuery, base: p },
      { params: ReadyParams, query: ReadyQuery, base: p },
      { params: SearchParams, query: SearchQuery, base: { ...p, q: 'churn' } },
      { params: IterationsParams, query: IterationsQuery, base: p },
      { params: OutlineParams, query: OutlineQuery, base: p },
      // GET /tree documents a walk's parameters and an outline's in one
      { params: TreeParams, query: TreeOutlineQuery, base: { ...p, format: 'outline' }, names: ['nodeId', 'format', 'budget'] },
      { params: TreeParams, query: TreeWalkQuery, base: { ...p, nodeId: 'goal-1', direction: 'up' }, names: ['nodeId', 'direction'] },
    ]
    const passes = (query: TObject, value: Record<string, string>) => {
      try {
        checkInput('query', query, value)
        return true
      } catch {
        return false
      }
    }
    for (const { params, query, base, names } of reads) {
      if (!names) {
        expect(Object.keys(params.properties)).toEqual(Object.keys(query.properties))
        expect(params.required).toEqual(query.required)
      }
      for (const name of names ?? Object.keys(params.properties)) {
        const typed = params.properties[name] as TSchema
        const values: unknown[] | null = typed.anyOf ? typed.anyOf.map((v: TSchema) => v.const) : 'const' in typed ? [typed.const] : null
        const [good, bad] =
          typed.type === 'integer'
            ? [
                [typed.minimum, typed.maximum],
                [typed.minimum - 1, typed.maximum + 1, 1.5],
              ]
            : typed.type === 'boolean'
              ? [
                  ['true', 'false'],
                  ['yes', '1'],
                ]
              : values
                ? [values, ['none-of-these']]
                : [['x'], []]
        for (const v of good) expect([name, v, passes(query, { ...base, [name]: String(v) })]).toEqual([name, v, true])
        for (const v of bad) expect([name, v, passes(query, { ...base, [name]: String(v) })]).toEqual([name, v, false])
      }
    }
  })
})

/** One request of a route that passes its checks (`p`: a project of the owner's; `u`: another user's id). */
type Sample = (p: string, u: string) => { method: string; path: string; body?: Record<string, unknown>; key?: string }
const get =
  (path: string): Sample =>
  (p) => ({ method: 'GET', path: path.replace('$p', p) })
const del =
  (path: string): Sample =>
  (p) => ({ method: 'DELETE', path: path.replace('$p', p) })
const send =
  (method: string, path: string, body: (p: string) => Record<string, unknown>, key?: string): Sample =>
  (p, u) => ({ method, path: path.replace('$u', u), body: body(p), key })

/** The routes whose schema is strict: an unknown name is refused, as docs/validation.md says. */
const STRICT: Record<string, Sample> = {
  'GET /api/v1/projects': get('/api/v1/projects?includeArchived=true'),
  'PATCH /api/v1/projects': send('PATCH', '/api/v1/projects', (p) => ({ projectId: p, archived: false })),
  'GET /api/v1/members': get('/api/v1/members?projectId=$p'),
  'POST /api/v1/members': send('POST', '/api/v1/members', (p) => ({ projectId: p, userId: 'usr_nobody' })),
  'DELETE /api/v1/members': del('/api/v1/members?projectId=$p&userId=usr_nobody'),
  'POST /api/v1/import-okf': send('POST', '/api/v1/import-okf', () => ({ files: {} })),
  'GET /api/v1/nodes': get('/api/v1/nodes?projectId=$p'),
  'GET /api/v1/changelog': get('/api/v1/changelog?projectId=$p'),
  'GET /api/v1/tree': get('/api/v1/tree?projectId=$p&format=outline'),
  'GET /api/v1/outline': get('/api/v1/outline?projectId=$p'),
  'GET /api/v1/iterations': get('/api/v1/iterations?projectId=$p'),
  'GET /api/v1/search': get('/api/v1/search?projectId=$p&q=x'),
  'POST /api/v1/webhooks': send('POST', '/api/v1/webhooks', (p) => ({ projectId: p, url: 'https://example.com/hook' })),
  'GET /api/v1/webhooks': get('/api/v1/webhooks?projectId=$p'),
  'PATCH /api/v1/webhooks': send('PATCH', '/api/v1/webhooks', (p) => ({ projectId: p, id: 'wh_nope', rotateSecret: true })),
  'POST /api/v1/share': send('POST', '/api/v1/share', (p) => ({ projectId: p })),
  'GET /api/v1/share': get('/api/v1/share?projectId=$p'),
  'GET /api/v1/events': get('/api/v1/events?projectId=$p'),
  'GET /api/v1/stream': get('/api/v1/stream?projectId=$p&after=nope'),
  'GET /api/v1/presence': get('/api/v1/presence?projectId=$p'),
  'DELETE /api/v1/presence': del('/api/v1/presence?projectId=$p'),
  'GET /api/v1/history': get('/api/v1/history?projectId=$p'),
  'GET /api/v1/export-okf': get('/api/v1/export-okf?projectId=$p'),
  'POST /api/v1/view-command': send('POST', '/api/v1/view-command', (p) => ({ projectId: p, command: { type: 'expandAll' } })),
  'GET /api/v1/view-state': get('/api/v1/view-state?projectId=$p'),
  'GET /api/v1/view/commands': get('/api/v1/view/commands?projectId=$p'),
  'POST /api/v1/view/report': send('POST', '/api/v1/view/report', (p) => ({
    projectId: p,
    state: { view_mode: 'tree', selected_iteration: null, expanded_nodes: [], focused_goals: [], selected_node: null },
  })),
  'POST /api/v1/keys': send('POST', '/api/v1/keys', () => ({ label: 'x' })),
  'DELETE /api/v1/keys': del('/api/v1/keys?keyId=key_nope'),
  'GET /api/v1/ready': get('/api/v1/ready?projectId=$p'),
  'GET /api/v1/proposals': get('/api/v1/proposals?projectId=$p'),
  'GET /api/v1/proposals/:proposalId': get('/api/v1/proposals/prp_nope?projectId=$p'),
  'POST /admin/v1/users': send('POST', '/admin/v1/users', () => ({ name: 'x' }), ADMIN_TOKEN),
  'PATCH /admin/v1/users/:id': send('PATCH', '/admin/v1/users/$u', () => ({ name: 'y' }), ADMIN_TOKEN),
  'POST /admin/v1/users/:id/api-keys': send('POST', '/admin/v1/users/$u/api-keys', () => ({}), ADMIN_TOKEN),
  'PATCH /admin/v1/api-keys/:keyId': send('PATCH', '/admin/v1/api-keys/key_nope', () => ({ scope: { role: 'read' } }), ADMIN_TOKEN),
}
/** The inputs that take names they do not know and ignore them (docs/validation.md lists them, and why). */
const IGNORED: Record<string, Sample> = {
  'POST /api/v1/mutate': send('POST', '/api/v1/mutate', (p) => ({
    action: 'add',
    projectId: p,
    node: { type: 'goal', data: { label: 'G' } },
  })),
  'POST /api/v1/workflow': send('POST', '/api/v1/workflow', (p) => ({ projectId: p, action: 'start', flow: 'task-curate' })),
  'POST /api/v1/presence': send('POST', '/api/v1/presence', (p) => ({ projectId: p, note: 'here' })),
  'POST /api/v1/feedback': send('POST', '/api/v1/feedback', () => ({ kind: 'note', summary: 'x' })),
  'DELETE /api/v1/share': del('/api/v1/share?projectId=$p&token=shr_nope'),
  'DELETE /api/v1/webhooks': del('/api/v1/webhooks?projectId=$p&id=wh_nope'),
  'GET /api/v1/webhooks/deliveries': get('/api/v1/webhooks/deliveries?projectId=$p&id=wh_nope'),
}
/** The routes that read no query string or body (a path parameter at most): one is ignored. */
const NO_INPUT: Record<string, Sample> = {
  'GET /api/v1/workflow': get('/api/v1/workflow'),
  'GET /api/v1/tier-status': get('/api/v1/tier-status'),
  'GET /api/v1/guide': get('/api/v1/guide'),
  'GET /api/v1/keys': get('/api/v1/keys'),
  'GET /api/v1/public/share/:token': get('/api/v1/public/share/shr_nope'),
  'GET /s/:token': get('/s/shr_nope'),
  'GET /admin/v1/users': (p, u) => ({ ...get('/admin/v1/users')(p, u), key: ADMIN_TOKEN }),
  'GET /admin/v1/backup': (p, u) => ({ ...get('/admin/v1/backup')(p, u), key: ADMIN_TOKEN }),
  'DELETE /admin/v1/api-keys/:keyId': (p, u) => ({ ...del('/admin/v1/api-keys/key_nope')(p, u), key: ADMIN_TOKEN }),
  ...Object.fromEntries(
    [
      '/openapi.json',
      '/healthz',
      '/readyz',
      '/metrics',
      '/',
      '/app',
      '/app/app.js',
      '/app/app.css',
      '/favicon.ico',
      '/docs',
      '/docs/swagger-ui.css',
      '/docs/swagger-ui-bundle.js',
      '/docs/init.js',
    ].map((path) => [`GET ${path}`, get(path)]),
  ),
}
/** /mcp speaks JSON-RPC: its own protocol answers its own errors (docs/mcp.md). */
const OWN_PROTOCOL = new Set(['ALL /mcp'])

describe('every route of the app', () => {
  it('is in one of the lists above: a new route says how its input is checked', () => {
    const rows = createApp(app.deps).app.routes.map((r) => `${r.method} ${r.path}`)
    const known = new Set([...Object.keys(STRICT), ...Object.keys(IGNORED), ...Object.keys(NO_INPUT), ...OWN_PROTOCOL])
    expect(rows.filter((row) => !known.has(row))).toEqual([])
    expect([...known].filter((row) => !rows.includes(row))).toEqual([])
  })

  it('refuses an unknown name where the schema is strict, takes it where docs/validation.md says it is ignored, ignores a query string where none is read', async () => {
    const p = await app.project()
    const u = (await app.user()).id
    const withUnknown = (sample: ReturnType<Sample>) =>
      sample.body
        ? { ...sample, body: { ...sample.body, zzUnknown: 1 } }
        : { ...sample, path: `${sample.path}${sample.path.includes('?') ? '&' : '?'}zzUnknown=1` }
    const call = (s: ReturnType<Sample>) => app.call(s.method, s.path, { body: s.body, key: s.key })
    const wrong: unknown[] = []
    for (const [row, sample] of Object.entries(STRICT)) {
      const res = await call(withUnknown(sample(p, u)))
      if (res.status !== 400 || !res.body.errors?.includes("zzUnknown: Property 'zzUnknown' should not be provided"))
        wrong.push({ row, expected: 'refused', status: res.status, body: res.body })
    }
    for (const [row, sample] of Object.entries(IGNORED)) {
      const res = await call(withUnknown(sample(p, u)))
      if (res.status === 400 || res.status >= 500) wrong.push({ row, expected: 'ignored', status: res.status, body: res.body })
    }
    // and wherever the input names a project, a key without access to it hears that first: 403 (PATCH /projects: 404), never a 400
    const stranger = await app.user()
    let asked = 0
    for (const [row, sample] of [...Object.entries(STRICT), ...Object.entries(IGNORED)]) {
      const s = withUnknown(sample(p, u))
      if (s.key || !JSON.stringify(s).includes(p)) continue
      asked++
      const res = await app.call(s.method, s.path, { body: s.body, key: stranger.key })
      if (res.status !== 403 && res.status !== 404)
        wrong.push({ row, expected: '403 or 404 for a stranger', status: res.status, body: res.body })
    }
    for (const [row, sample] of Object.entries(NO_INPUT)) {
      const plain = await call(sample(p, u))
      const res = await call(withUnknown(sample(p, u)))
      if (res.status !== plain.status || res.status === 400 || res.status >= 500)
        wrong.push({ row, expected: `as without it (${plain.status})`, status: res.status })
    }
    expect(wrong).toEqual([])
    expect(asked).toBeGreaterThan(30)
  })
})
