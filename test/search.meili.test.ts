import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { tick } from '../src/search/loop'
import { MEILI_INDEX, type MeiliBackend } from '../src/search/meili'
import { startApp, type TestApp } from './helpers'
import { type FakeMeili, startFakeMeili } from './meili-fake'
import { expectSepaJobFirst } from './search-contract'

// The GET /search contract on the Meilisearch backend. No Meilisearch binary can be installed on
// CI machines, so by default these tests run against test/meili-fake.ts, a small HTTP server
// that speaks the part of the Meilisearch API the adapter uses. With MEILI_URL set they run
// against that real server instead (the fake-only outage tests are then skipped), e.g.
//   docker run -d -p 7700:7700 -e MEILI_MASTER_KEY=dev getmeili/meilisearch:v1.16
//   MEILI_URL=http://127.0.0.1:7700 MEILI_API_KEY=dev bun test test/search.meili.test.ts
// On a real server it uses the index `arbor_nodes` (documents of its own fresh projects only).

const REAL_URL = process.env.MEILI_URL

describe(`GET /search on Meilisearch (${REAL_URL ? 'real server' : 'protocol fake'})`, () => {
  let fake: FakeMeili | undefined
  let app: TestApp
  let projectId: string
  let ids: Record<string, string>
  /** what the scheduler does in a running server: push the outbox to Meilisearch */
  const sync = async (now = new Date()) => {
    let pushed = 0
    for (let i = 0; i < 20; i++) {
      const r = await tick(app.deps, now)
      if (r.failed) return { pushed, failed: r.failed }
      if (!r.pushed) break
      pushed += r.pushed
    }
    return { pushed, failed: 0 }
  }
  const search = (params: Record<string, string>) => app.call('GET', `/api/v1/search?${new URLSearchParams({ projectId, ...params })}`)
  const meiliEnv = () =>
    fake
      ? { MEILI_URL: fake.url, MEILI_API_KEY: fake.masterKey! }
      : { MEILI_URL: REAL_URL!, ...(process.env.MEILI_API_KEY ? { MEILI_API_KEY: process.env.MEILI_API_KEY } : {}) }

  beforeAll(async () => {
    if (!REAL_URL) fake = startFakeMeili({ masterKey: 'test-master-key' })
    app = await startApp(meiliEnv(), { persist: true })
    projectId = await app.project()
    const res = await app.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId,
        mutations: [
          { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Get paid faster' } } },
          {
            action: 'add',
            node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Payers can settle invoices online' } },
          },
          { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Hosted pay-by-link checkout' } } },
          {
            action: 'add',
            node: {
              id: 'draft-j',
              type: 'job',
              parentId: 'draft-a',
              data: { label: 'Payers in the eurozone can pay by SEPA Direct Debit' },
            },
          },
          { action: 'add', node: { id: 'draft-t', type: 'task', data: { label: 'Renew the TLS certificate of the marketing site' } } },
        ],
      },
    })
    ids = res.body.idMap
    await sync()
  })
  afterAll(async () => {
    await app.close()
    fake?.stop()
  })

  test('returns {node, similarity, ancestors} ranked by similarity, ancestors from the parent up', async () => {
    const res = await search({ q: 'SEPA Direct Debit' })
    expectSepaJobFirst(res, { job: ids['draft-j'], approach: ids['draft-a'], need: ids['draft-n'], goal: ids['draft-g'] })
    expect(res.body._meta.search.backend).toBe('meilisearch')
  })

  test('type filters; limit above 20 is a 400', async () => {
    const res = await search({ q: 'paid', type: 'goal' })
    expect(res.body.results.map((r: any) => r.node.id)).toEqual([ids['draft-g']])
    expect((await search({ q: 'x', limit: '21' })).status).toBe(400)
  })

  test('documents follow updates and deletes through the outbox', async () => {
    await app.call('POST', '/api/v1/mutate', {
      body: { action: 'update', projectId, nodeId: ids['draft-t'], data: { label: 'Rotate the webhook signing keys' } },
    })
    await sync()
    expect((await search({ q: 'webhook signing keys', limit: '1' })).body.results[0].node.id).toBe(ids['draft-t'])
    await app.call('POST', '/api/v1/mutate', { body: { action: 'delete', projectId, nodeId: ids['draft-t'] } })
    await sync()
    expect((await search({ q: 'webhook signing keys' })).body.results.map((r: any) => r.node.id)).not.toContain(ids['draft-t'])
  })

  test('rebuild loads every node again from the database', async () => {
    const backend = app.deps.search as MeiliBackend
    expect(await backend.rebuild()).toBeGreaterThanOrEqual(4)
    expect((await search({ q: 'SEPA Direct Debit', limit: '1' })).body.results[0].node.id).toBe(ids['draft-j'])
  })

  test('an add close to an existing node of the same type gets the possible_duplicate advisory', async () => {
    const res = await app.call('POST', '/api/v1/mutate', {
      body: {
        action: 'add',
        projectId,
        node: { type: 'job', parentId: ids['draft-a'], data: { label: 'Payers in the eurozone can pay by SEPA Direct Debit' } },
      },
    })
    expect(res.status).toBe(200)
    expect(res.body._meta.advisory).toEqual({
      type: 'possible_duplicate',
      nodes: [{ id: ids['draft-j'], label: 'Payers in the eurozone can pay by SEPA Direct Debit', similarity: expect.any(Number) }],
    })
    expect(res.body._meta.advisory.nodes[0].similarity).toBeGreaterThan(0.86)
    await app.call('POST', '/api/v1/mutate', { body: { action: 'delete', projectId, nodeId: res.body.nodeId ?? res.body.node?.id } })
    await sync()
  })

  test.skipIf(!!REAL_URL)('an outage: the sync keeps its cursor, backs off, then catches up without losing a change', async () => {
    const add = await app.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId, node: { type: 'task', data: { label: 'Archive the quarterly VAT returns' } } },
    })
    const taskId = add.body.nodeId ?? add.body.node?.id
    expect(typeof taskId).toBe('string')
    fake!.failNext(1_000)
    const now = Date.now()
    expect((await sync(new Date(now))).failed).toBe(1)
    // backing off: the next tick inside the wait does not even call Meilisearch
    const calls = fake!.requests.length
    expect((await sync(new Date(now + 500))).failed).toBe(0)
    expect(fake!.requests.length).toBe(calls)
    fake!.failNext(0)
    const caughtUp = await sync(new Date(now + 120_000))
    expect(caughtUp).toEqual({ pushed: expect.any(Number), failed: 0 })
    expect(caughtUp.pushed).toBeGreaterThanOrEqual(1)
    expect((await search({ q: 'quarterly VAT returns', limit: '1' })).body.results[0].node.id).toBe(taskId)
  })

  test.skipIf(!!REAL_URL)('while Meilisearch is down GET /search answers 503 search_unavailable as JSON, not a 500', async () => {
    fake!.failNext(1_000)
    const res = await search({ q: 'quarterly VAT returns' })
    fake!.failNext(0)
    expect(res.status).toBe(503)
    expect(res.body).toEqual({ error: 'search_unavailable', message: expect.stringContaining('Meilisearch'), _tip: expect.any(String) })
    expect((await search({ q: 'quarterly VAT returns' })).status).toBe(200)
  })

  test.skipIf(!!REAL_URL)('documents carry projectId, type and one vector per embedded text; deleted nodes leave the index', async () => {
    const docs = [...fake!.documents(MEILI_INDEX).values()].filter((d) => d.projectId === projectId)
    const job = docs.find((d) => d.id === ids['draft-j'])!
    expect(job).toMatchObject({ uid: `${projectId}_${ids['draft-j']}`, projectId, type: 'job', parentId: ids['draft-a'] })
    expect(job._vectors.arbor.length).toBeGreaterThanOrEqual(1)
    expect(docs.some((d) => d.id === ids['draft-t'])).toBe(false) // deleted above
  })

  test('`bun run search:rebuild` (server stopped) reloads the index from the database', async () => {
    const nodes = (await app.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes.length
    expect(nodes).toBeGreaterThanOrEqual(4)
    await app.close() // persisted: the database stays, as when the server is stopped
    if (fake) fake.documents(MEILI_INDEX).clear() // an index that lost everything
    const env: Record<string, string | undefined> = {
      ...process.env,
      ...meiliEnv(),
      LOG_LEVEL: 'error',
      ARBOR_CACHE_DIR: app.config.cacheDir,
    }
    if (app.store.pgUrl) env.DATABASE_URL = app.store.pgUrl
    else {
      delete env.DATABASE_URL
      env.DATA_DIR = app.store.dataDir
    }
    const proc = Bun.spawn([process.execPath, 'src/search/rebuild.ts'], {
      cwd: `${import.meta.dir}/..`,
      env,
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()])
    expect({ code, err: code === 0 ? '' : err }).toEqual({ code: 0, err: '' })
    expect(out).toContain('rebuilt the Meilisearch index from')
    if (fake) expect([...fake.documents(MEILI_INDEX).values()].filter((d) => d.projectId === projectId).length).toBe(nodes)
    app = await startApp(meiliEnv(), { reopen: app, persist: true })
    expect((await search({ q: 'SEPA Direct Debit', limit: '1' })).body.results[0].node.id).toBe(ids['draft-j'])
  })

  test('after a restart the sync carries on from its stored cursor: old nodes stay findable, new ones are pushed', async () => {
    await app.close() // persisted: the database stays
    app = await startApp(meiliEnv(), { reopen: app })
    const add = await app.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId, node: { type: 'task', data: { label: 'Renew the domain name before it lapses' } } },
    })
    expect(add.status).toBe(200)
    const r = await sync()
    expect(r.failed).toBe(0)
    expect(r.pushed).toBeGreaterThanOrEqual(1) // the new node, plus the last minute re-read (pushes are idempotent)
    const found = await search({ q: 'renew the domain name', limit: '1' })
    expect(found.body.results[0].node.data.label).toBe('Renew the domain name before it lapses')
    expect((await search({ q: 'SEPA Direct Debit', limit: '1' })).body.results[0].node.id).toBe(ids['draft-j'])
  })
})
