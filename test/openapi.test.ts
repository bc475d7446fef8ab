import { afterAll, describe, expect, it } from 'bun:test'
import SwaggerParser from '@apidevtools/swagger-parser'
import { createApp } from '../src/app'
import { startApp } from './helpers'

// issue 2: OpenAPI 3.1 at /openapi.json, validated by a real validator, covering every endpoint
const app = await startApp()
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
  it('documents the body of each of the sixteen /mutate actions, chosen by action', () => {
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

  it('declares every error status of every operation with a body schema', () => {
    const missing: string[] = []
    for (const [path, operations] of Object.entries<any>(doc.paths))
      for (const [method, op] of Object.entries<any>(operations))
        for (const status of ['400', '401', '403', '404', '409', '413', '429', '500']) {
          const schema = op.responses?.[status]?.content?.['application/json']?.schema
          if (!schema || Object.keys(schema).length === 0) missing.push(`${method} ${path} ${status}`)
        }
    expect(missing).toEqual([])
  })

  it('keeps the action schemas importable without any service (the MCP server reuses them)', async () => {
    const source = await Bun.file(new URL('../src/mutate/model.ts', import.meta.url)).text()
    const imports = [...source.matchAll(/^import .* from '([^']+)'/gm)].map((m) => m[1])
    // the schemas of each resource's own model file, and the engine of their messages: no service, no query
    expect(imports).toEqual([
      '@sinclair/typebox',
      '../history/model',
      '../http/action-schema',
      '../iterations/model',
      '../nodes/input',
      '../nodes/model',
      '../projects/model',
      '../work/model',
    ])
  })
})
