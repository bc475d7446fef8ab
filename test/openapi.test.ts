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
