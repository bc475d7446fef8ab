import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { searchOf } from '../src/search/engine'
import { tick } from '../src/search/loop'
import type { MeiliBackend } from '../src/search/meili'
import { startApp, type TestApp } from './helpers'

// The GET /search contract on the Meilisearch backend. No Meilisearch server runs in CI, so
// this file runs only when MEILI_URL is set, e.g.
//   docker run -d -p 7700:7700 -e MEILI_MASTER_KEY=dev getmeili/meilisearch:v1.16
//   MEILI_URL=http://127.0.0.1:7700 MEILI_API_KEY=dev bun test test/search.meili.test.ts
// It uses the index `arbor_nodes` of that server (documents of its own fresh projects only).

const MEILI_URL = process.env.MEILI_URL

describe.skipIf(!MEILI_URL)('GET /search on Meilisearch', () => {
  let app: TestApp
  let projectId: string
  let ids: Record<string, string>
  /** what the scheduler does in a running server: push the outbox to Meilisearch */
  const sync = async () => {
    for (let i = 0; i < 20; i++) if (!(await tick(app.deps, new Date())).pushed) break
  }
  const search = (params: Record<string, string>) => app.call('GET', `/api/v1/search?${new URLSearchParams({ projectId, ...params })}`)

  beforeAll(async () => {
    app = await startApp({ MEILI_URL: MEILI_URL!, ...(process.env.MEILI_API_KEY ? { MEILI_API_KEY: process.env.MEILI_API_KEY } : {}) })
    projectId = await app.project()
    const res = await app.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId,
        mutations: [
          { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Get paid faster' } } },
          { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Payers can settle invoices online' } } },
          { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Hosted pay-by-link checkout' } } },
          { action: 'add', node: { id: 'draft-j', type: 'job', parentId: 'draft-a', data: { label: 'Payers in the eurozone can pay by SEPA Direct Debit' } } },
          { action: 'add', node: { id: 'draft-t', type: 'task', data: { label: 'Renew the TLS certificate of the marketing site' } } },
        ],
      },
    })
    ids = res.body.idMap
    await sync()
  })
  afterAll(() => app.close())

  test('returns {node, similarity, ancestors} ranked by similarity, ancestors from the parent up', async () => {
    const res = await search({ q: 'SEPA Direct Debit' })
    expect(res.status).toBe(200)
    expect(res.body.results[0]).toEqual({
      node: { id: ids['draft-j'], type: 'job', parentId: ids['draft-a'], data: { label: 'Payers in the eurozone can pay by SEPA Direct Debit', iteration: 'Later' } },
      similarity: expect.any(Number),
      ancestors: [
        { id: ids['draft-a'], type: 'approach', label: 'Hosted pay-by-link checkout' },
        { id: ids['draft-n'], type: 'need', label: 'Payers can settle invoices online' },
        { id: ids['draft-g'], type: 'goal', label: 'Get paid faster' },
      ],
    })
    const sims = res.body.results.map((r: any) => r.similarity)
    for (const s of sims) expect(s >= 0 && s <= 1).toBe(true)
    expect([...sims].sort((a, b) => b - a)).toEqual(sims)
    expect(res.body._meta.search.backend).toBe('meilisearch')
  })

  test('type filters; limit above 20 is a 400', async () => {
    const res = await search({ q: 'paid', type: 'goal' })
    expect(res.body.results.map((r: any) => r.node.id)).toEqual([ids['draft-g']])
    expect((await search({ q: 'x', limit: '21' })).status).toBe(400)
  })

  test('documents follow updates and deletes through the outbox', async () => {
    await app.call('POST', '/api/v1/mutate', { body: { action: 'update', projectId, nodeId: ids['draft-t'], data: { label: 'Rotate the webhook signing keys' } } })
    await sync()
    expect((await search({ q: 'webhook signing keys', limit: '1' })).body.results[0].node.id).toBe(ids['draft-t'])
    await app.call('POST', '/api/v1/mutate', { body: { action: 'delete', projectId, nodeId: ids['draft-t'] } })
    await sync()
    expect((await search({ q: 'webhook signing keys' })).body.results.map((r: any) => r.node.id)).not.toContain(ids['draft-t'])
  })

  test('rebuild loads every node again from the database', async () => {
    const backend = searchOf(app.deps) as MeiliBackend
    expect(await backend.rebuild()).toBeGreaterThanOrEqual(4)
    expect((await search({ q: 'SEPA Direct Debit', limit: '1' })).body.results[0].node.id).toBe(ids['draft-j'])
  })
})
