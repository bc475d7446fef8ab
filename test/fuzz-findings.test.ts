import { afterAll, describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN, startApp } from './helpers'

// What the outside fuzzer (test/fuzz/run.sh, Schemathesis) found, one regression test each,
// through app.handle.
const app = await startApp()
afterAll(() => app.close())

const admin = (method: string, path: string, body?: unknown) => app.call(method, `/admin/v1${path}`, { key: ADMIN_TOKEN, body })

describe('fuzz findings', () => {
  it('refuses a creditsLimit past a 32-bit integer with 400, not a 500 from the database', async () => {
    const u = await app.user()
    const res = await admin('PATCH', `/users/${u.id}`, { creditsLimit: 8_533_291_968 })
    expect(res.status).toBe(400)
    expect(res.body.success).toBe(false)
    expect((await admin('PATCH', `/users/${u.id}`, { creditsLimit: 2_147_483_647 })).status).toBe(200)
  })

  it('documents the validation body as well as the refusal body for every 400 (a route that declared only {error} was wrong)', async () => {
    const doc = (await app.call('GET', '/openapi.json', { key: null })).body
    const schema = doc.paths['/api/v1/webhooks'].post.responses['400'].content['application/json'].schema
    // the two error bodies are declared once, in components.schemas, and referenced
    const resolve = (s: any) => (s.$ref ? doc.components.schemas[s.$ref.replace('#/components/schemas/', '')] : s)
    expect(schema.anyOf.map((s: any) => resolve(s).required)).toEqual([['success', 'errors'], ['error']])
    const res = await app.call('POST', '/api/v1/webhooks', { body: { projectId: 5 } })
    expect(res.status).toBe(400)
    expect(res.body.success).toBe(false)
  })
})
