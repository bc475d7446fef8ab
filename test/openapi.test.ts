import { afterAll, describe, expect, it } from 'bun:test'
import SwaggerParser from '@apidevtools/swagger-parser'
import { createApp } from '../src/app'
import { startApp } from './helpers'

// issue 2: OpenAPI 3.1 at /openapi.json, validated by a real validator, covering every endpoint
const app = await startApp({ WEBHOOK_ALLOW_INSECURE: 'true' })
afterAll(() => app.close())

const doc = (await app.call('GET', '/openapi.json', { key: null })).body
/** `/api/v1/share/:token` as OpenAPI writes it: `/api/v1/share/{token}` */
const openapiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
const v1Routes = createApp(app.deps)
  .app.routes.filter((r) => r.path.startsWith('/api/v1/') && !['HEAD', 'OPTIONS'].includes(r.method))
  .map((r) => ({ method: r.method.toLowerCase(), path: openapiPath(r.path) }))

describe('/openapi.json', () => {
  it('is served without authentication as OpenAPI 3.1', async () => {
    const res = await app.call('GET', '/openapi.json', { key: null })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('application/json')
    expect(res.body.openapi).toStartWith('3.1')
    expect(res.body.info.title).toBe('Arbor API')
  })

  it('passes swagger-parser validation with zero errors', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeDefined()
  })

  it('documents every /api/v1 route of the app with a summary and a 200 response', () => {
    expect(v1Routes.length).toBeGreaterThan(0)
    const missing = v1Routes.filter((r) => !doc.paths[r.path]?.[r.method]).map((r) => `${r.method.toUpperCase()} ${r.path}`)
    expect(missing).toEqual([])
    for (const r of v1Routes) {
      const op = doc.paths[r.path][r.method]
      expect(op.summary, `${r.method} ${r.path}`).toBeTruthy()
      expect(
        Object.keys(op.responses ?? {}).some((s) => s.startsWith('2')),
        `${r.method} ${r.path}`,
      ).toBe(true)
    }
  })

  it('documents the health checks and the admin API', () => {
    for (const path of [
      '/healthz',
      '/readyz',
      '/admin/v1/users',
      '/admin/v1/users/{id}',
      '/admin/v1/users/{id}/api-keys',
      '/admin/v1/api-keys/{keyId}',
    ])
      expect(Object.keys(doc.paths)).toContain(path)
  })

  it('declares the bearer API key scheme', () => {
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' })
  })

  it('serves a docs page at /docs', async () => {
    const res = await app.handle(new Request('http://arbor.test/docs'))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
  })
})

describe('/openapi.json types every write and every answer', () => {
  it('documents the body of each of the twenty /mutate actions, chosen by action', () => {
    const schema = doc.paths['/api/v1/mutate'].post.requestBody.content['application/json'].schema
    expect(schema.anyOf.map((s: any) => s.properties.action.const)).toEqual([
      'add',
      'update',
      'delete',
      'restore',
      'batch',
      'classify',
      'addIteration',
      'updateIteration',
      'deleteIteration',
      'reorderIterations',
      'addProject',
      'renameProject',
      'claim',
      'renewClaim',
      'releaseClaim',
      'revert',
      'propose',
      'applyProposal',
      'rejectProposal',
      'withdrawProposal',
    ])
    const batch = schema.anyOf[4]
    expect(batch.required).toEqual(['action', 'projectId', 'mutations'])
    expect(batch.properties.mutations.items.anyOf.map((s: any) => s.properties.action.const)).toEqual([
      'add',
      'update',
      'delete',
      'addIteration',
    ])
    // add: one node variant per type, with that type's fields only
    const goal = schema.anyOf[0].properties.node.anyOf[0]
    expect(goal.properties.type.const).toBe('goal')
    expect(Object.keys(goal.properties.data.properties)).toEqual(['label', 'description', 'goalStatus', 'externalRefs'])
    expect(Object.keys(doc.paths['/api/v1/mutate'].post.requestBody.content)).toEqual(['application/json'])
  })

  it('declares the error statuses each operation can answer, each with a body schema', () => {
    const wrong: string[] = []
    for (const [path, operations] of Object.entries<any>(doc.paths))
      for (const [method, op] of Object.entries<any>(operations)) {
        const statuses = Object.keys(op.responses).filter((s) => s >= '400')
        for (const status of statuses) {
          const schema = op.responses[status].content?.['application/json']?.schema
          if (!schema || Object.keys(schema).length === 0) wrong.push(`${method} ${path} ${status}: no body schema`)
        }
        const isPublic = Array.isArray(op.security) && op.security.length === 0
        // an authenticated API operation: every refusal of the key, the project, the input and the rate limit
        if (path.startsWith('/api/') && !isPublic)
          for (const status of ['400', '401', '403', '404', '429', '500'])
            if (!statuses.includes(status)) wrong.push(`${method} ${path} ${status}: missing`)
        if (isPublic && (statuses.includes('401') || statuses.includes('403')))
          wrong.push(`${method} ${path}: public but documents 401/403`)
        if (!op.requestBody && statuses.includes('413')) wrong.push(`${method} ${path}: no body but documents 413`)
      }
    expect(wrong).toEqual([])
    // the health checks answer only what they declare
    expect(Object.keys(doc.paths['/healthz'].get.responses)).toEqual(['200'])
    expect(Object.keys(doc.paths['/readyz'].get.responses).sort()).toEqual(['200', '503'])
  })

  it('is plain OpenAPI 3.1 that other languages generate clients from', () => {
    const text = JSON.stringify(doc)
    // 3.1 writes type arrays; `nullable` is 3.0
    expect(text).not.toContain('"nullable"')
    // Elysia's t.Integer is a number in JSON, not a string whose default is 0
    expect(text).not.toContain('"format":"integer"')
    expect(doc.servers).toEqual([{ url: app.deps.config.publicBaseUrl }])
    // a node's type is one enum (a generator makes one enum type), not an anyOf of consts
    const node = doc.paths['/api/v1/nodes'].get.responses['200'].content['application/json'].schema.properties.nodes.items
    expect(node.properties.type).toMatchObject({ type: 'string', enum: ['goal', 'need', 'approach', 'job', 'task'] })
    // every title names one schema: generators name a class after it
    const titles = new Map<string, string>()
    const clash: string[] = []
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) {
        for (const item of value) walk(item)
        return
      }
      if (!value || typeof value !== 'object') return
      const o = value as Record<string, unknown>
      if (typeof o.title === 'string') {
        const known = titles.get(o.title)
        if (known !== undefined && known !== JSON.stringify(o)) clash.push(o.title)
        titles.set(o.title, JSON.stringify(o))
      }
      Object.values(o).forEach(walk)
    }
    walk(doc.paths)
    expect(clash).toEqual([])
    // the public routes say so
    for (const [method, path] of [
      ['get', '/api/v1/guide'],
      ['get', '/api/v1/public/share/{token}'],
      ['get', '/healthz'],
    ])
      expect(doc.paths[path][method].security, `${method} ${path}`).toEqual([])
  })

  it('declares the bounds of integer query parameters as the routes enforce them', async () => {
    const projectId = await app.project()
    const hook = await app.call('POST', '/api/v1/webhooks', { body: { projectId, url: 'http://127.0.0.1:9/hook' } })
    const extra: Record<string, string> = {
      '/api/v1/tree': '&format=outline',
      '/api/v1/search': '&q=plan',
      '/api/v1/webhooks/deliveries': `&id=${hook.body.webhook.id}`,
    }
    const checked: string[] = []
    for (const [path, operations] of Object.entries<any>(doc.paths))
      for (const param of operations.get?.parameters ?? []) {
        const { minimum, maximum } = param.schema
        if (param.in !== 'query' || param.schema.type !== 'integer') continue
        expect({ path, name: param.name, minimum: typeof minimum, maximum: typeof maximum }).toEqual({
          path,
          name: param.name,
          minimum: 'number',
          maximum: 'number',
        })
        const ask = async (value: number) =>
          (await app.call('GET', `${path}?projectId=${projectId}&${param.name}=${value}${extra[path] ?? ''}`)).status
        expect([path, param.name, await ask(minimum - 1), await ask(maximum + 1), await ask(minimum)]).toEqual([
          path,
          param.name,
          400,
          400,
          200,
        ])
        checked.push(`${path} ${param.name}`)
      }
    expect(checked.length).toBeGreaterThanOrEqual(8)
  })

  it('declares as required the query parameters every call needs', async () => {
    const projectId = await app.project()
    const values: Record<string, string> = { projectId, q: 'plan', userId: 'u', keyId: 'k', id: 'w', token: 't' }
    const checked: string[] = []
    for (const [path, operations] of Object.entries<any>(doc.paths))
      for (const [method, op] of Object.entries<any>(operations)) {
        if (path.includes('{') || !['get', 'delete'].includes(method)) continue
        const required = (op.parameters ?? []).filter((p: any) => p.in === 'query' && p.required).map((p: any) => p.name)
        for (const name of required) {
          const query = required
            .filter((n: string) => n !== name)
            .map((n: string) => `${n}=${values[n]}`)
            .join('&')
          const res = await app.call(method.toUpperCase(), `${path}?${query}`)
          expect([method, path, name, res.status]).toEqual([method, path, name, 400])
          checked.push(`${method} ${path} ${name}`)
        }
      }
    expect(checked).toContain('delete /api/v1/webhooks id')
    expect(checked).toContain('get /api/v1/webhooks/deliveries id')
  })

  it('keeps the action schemas importable without any service (the MCP server reuses them)', async () => {
    const source = await Bun.file(new URL('../src/mutate/model.ts', import.meta.url)).text()
    const imports = [...source.matchAll(/^import [^']*? from '([^']+)'/gm)].map((m) => m[1])
    // the schemas of each resource's own model file, the engine of their messages and the action names: no service, no query
    expect(imports).toEqual([
      '@sinclair/typebox',
      '../history/model',
      '../http/action-schema',
      '../iterations/model',
      '../nodes/input',
      '../nodes/model',
      '../ports/actions',
      '../projects/model',
      '../proposals/model',
      '../work/model',
    ])
  })
})
