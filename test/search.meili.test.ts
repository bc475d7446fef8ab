import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chooseEmbedder } from '../src/search/embedder/runtime'
import { tick } from '../src/search/loop'
import { MEILI_INDEX, MeiliBackend } from '../src/search/meili'
import { startApp, type TestApp } from './helpers'
import { type FakeMeili, startFakeMeili } from './meili-fake'
import { MEILI_BIN, MEILI_SKIP, type RealMeili, startRealMeili } from './meili-real'
import { expectSepaJobFirst } from './search-contract'

// The GET /search contract on the Meilisearch backend, twice: against test/meili-fake.ts, a small
// HTTP server that speaks the part of the Meilisearch API the adapter uses (it can also fail on
// request: the outage tests), and against the real Meilisearch of test/meili-real.ts
// (../shared/tools/meilisearch or MEILI_BIN; skipped without one).

/** A tiny OpenAI-compatible /embeddings endpoint: 16-dimension bags of hashed words, another embedder than the app's. */
function startTinyEmbeddings() {
  const vector = (text: string) => {
    const v = new Array<number>(16).fill(0)
    for (const w of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) v[[...w].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 16, 7)]! += 1
    v[0]! += 0.01 // never a zero vector
    return v
  }
  return Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const { input } = (await req.json()) as { input: string[] }
      return Response.json({ object: 'list', data: input.map((t, index) => ({ object: 'embedding', index, embedding: vector(t) })) })
    },
  })
}

for (const target of ['protocol fake', 'real server'] as const)
  describe.skipIf(target === 'real server' && !MEILI_BIN)(
    `GET /search on Meilisearch (${target === 'real server' && !MEILI_BIN ? MEILI_SKIP : target})`,
    () => {
      const REAL = target === 'real server'
      let fake: FakeMeili | undefined
      let real: RealMeili | undefined
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
        fake ? { MEILI_URL: fake.url, MEILI_API_KEY: fake.masterKey! } : { MEILI_URL: real!.url, MEILI_API_KEY: real!.masterKey }

      beforeAll(async () => {
        if (REAL) real = await startRealMeili()
        else fake = startFakeMeili({ masterKey: 'test-master-key' })
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
              {
                action: 'add',
                node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Hosted pay-by-link checkout' } },
              },
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
        await real?.stop()
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

      test("a node's meaning score draws on its parent's, as in the built-in index", async () => {
        // the same text twice (so the same vector): under the approach the query names, and alone
        const twin = 'Receipts are emailed once settled'
        const res = await app.call('POST', '/api/v1/mutate', {
          body: {
            action: 'batch',
            projectId,
            mutations: [
              { action: 'add', node: { id: 'draft-child', type: 'job', parentId: ids['draft-a'], data: { label: twin } } },
              { action: 'add', node: { id: 'draft-alone', type: 'task', data: { label: twin } } },
            ],
          },
        })
        const twins = res.body.idMap as Record<string, string>
        await sync()
        const hits = (await search({ q: 'Hosted pay-by-link checkout', mode: 'semantic', limit: '20' })).body.results
        const sim = (id: string) => hits.find((h: any) => h.node.id === id)?.similarity as number
        const parent = sim(ids['draft-a']!)
        const alone = sim(twins['draft-alone']!)
        expect(parent).toBeGreaterThan(alone)
        // max(own, 0.5 * own + 0.5 * parent), with the built-in parentWeight
        expect(sim(twins['draft-child']!)).toBeCloseTo((alone + parent) / 2, 3)
        for (const id of Object.values(twins))
          await app.call('POST', '/api/v1/mutate', { body: { action: 'delete', projectId, nodeId: id } })
        await sync()
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
        const nodes = (await app.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes.length
        expect(await backend.rebuild()).toEqual({ rebuilt: nodes })
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

      test('an index built by another embedder: keyword results with the reason at once, never a 503; the lease holder rebuilds it for its own', async () => {
        const tiny = startTinyEmbeddings()
        const ownId = app.deps.search.choice.embedder.id
        const other = new MeiliBackend(
          app.deps,
          chooseEmbedder({ ...app.config, embeddingsUrl: `http://127.0.0.1:${tiny.port}/v1`, embeddingsModel: 'tiny-16' }),
        )
        const ask = (backend: MeiliBackend, q: string) => backend.search(projectId, { q, limit: 5, mode: 'hybrid' })
        const labelsOf = (answer: Awaited<ReturnType<typeof ask>>) => answer.hits.map((h) => h.node.data.label)
        try {
          // the index is the app's (its embedder's); `other` is a replica with another embedder
          const byKeyword = await ask(other, 'SEPA Direct Debit')
          expect(labelsOf(byKeyword)).toEqual(['Payers in the eurozone can pay by SEPA Direct Debit'])
          const pglite = app.deps.db.kind === 'pglite' // one process by construction: it holds the lease and rebuilds
          expect(byKeyword.meta).toEqual({
            backend: 'meilisearch',
            embedder: 'openai:tiny-16',
            mode: 'hybrid',
            semantic: pglite ? 'rebuilding' : 'unavailable',
            pendingNodes: 0,
            reason: pglite
              ? `the Meilisearch index was built with embedder ${ownId} and is being rebuilt from the database for this server's embedder openai:tiny-16: results are ranked by keyword until then`
              : expect.stringContaining(`the Meilisearch index was built with embedder ${ownId} and this server uses openai:tiny-16`),
          })
          const res = await app.call('GET', `/api/v1/search?${new URLSearchParams({ projectId, q: 'SEPA Direct Debit' })}`)
          expect(res.body._meta.search).toMatchObject({ embedder: ownId, semantic: 'full' }) // the app's own answer is unchanged
          if (!pglite) {
            // on PostgreSQL the app holds the sync lease: `other` stands by and does not rebuild, until the app gives it up
            expect(await other.tick(new Date())).toEqual({ pushed: 0, standby: 1 })
            await app.deps.search.stop?.()
          }
          const rebuilt = await other.tick(new Date())
          expect(rebuilt).toEqual({
            pushed: expect.any(Number),
            rebuilt: (await app.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes.length,
          })
          const byMeaning = await ask(other, 'SEPA Direct Debit')
          expect(byMeaning.meta).toEqual({
            backend: 'meilisearch',
            embedder: 'openai:tiny-16',
            mode: 'hybrid',
            semantic: 'full',
            pendingNodes: 0,
          })
          expect(labelsOf(byMeaning)[0]).toBe('Payers in the eurozone can pay by SEPA Direct Debit')
          // now the app is the one with another embedder (its last reading said otherwise: a refused query makes it look again):
          // it answers by keyword and says why, never a 503
          const appNow = await app.call('GET', `/api/v1/search?${new URLSearchParams({ projectId, q: 'SEPA Direct Debit' })}`)
          expect(appNow.status).toBe(200)
          expect(appNow.body.results.map((r: any) => r.node.data.label)).toEqual(['Payers in the eurozone can pay by SEPA Direct Debit'])
          expect(appNow.body._meta._tip).toBe(appNow.body._meta.search.reason)
          if (pglite) {
            // two processes that each hold their own lease are two deployments sharing one index: the app, whose index
            // it was, does not rebuild it back (no tug of war) and says so; a forced rebuild makes it the app's again
            expect(appNow.body._meta.search).toMatchObject({ semantic: 'unavailable' })
            expect(await tick(app.deps, new Date())).toEqual({ pushed: 0, contested: 1 })
            const contested = await app.call('GET', `/api/v1/search?${new URLSearchParams({ projectId, q: 'SEPA Direct Debit' })}`)
            expect(contested.body._meta.search.reason).toContain(
              `the Meilisearch index was rebuilt with embedder openai:tiny-16 by a server outside this database's sync lease`,
            )
            expect(await (app.deps.search as MeiliBackend).rebuild()).toEqual({ rebuilt: expect.any(Number) })
            // `other` (its last reading said the index was its own: the refused query makes it look again) leaves it too
            expect((await ask(other, 'SEPA Direct Debit')).meta).toMatchObject({
              semantic: 'unavailable',
              reason: expect.stringContaining(`the Meilisearch index was rebuilt with embedder ${ownId} by a server outside`),
            })
            expect(await other.tick(new Date())).toEqual({ pushed: 0, contested: 1 })
          } else {
            expect(appNow.body._meta.search).toMatchObject({ semantic: 'unavailable' })
            expect(appNow.body._meta.search.reason).toContain('was built with embedder openai:tiny-16 and this server uses')
            expect(await tick(app.deps, new Date())).toEqual({ pushed: 0, standby: 1 }) // `other` holds the lease now
            await other.stop()
            expect(await tick(app.deps, new Date())).toEqual({ pushed: expect.any(Number), rebuilt: expect.any(Number) })
          }
          const restored = await app.call('GET', `/api/v1/search?${new URLSearchParams({ projectId, q: 'SEPA Direct Debit' })}`)
          expect(restored.body._meta.search).toEqual({
            backend: 'meilisearch',
            embedder: ownId,
            mode: 'hybrid',
            semantic: 'full',
            pendingNodes: 0,
          })
        } finally {
          await other.stop()
          tiny.stop(true)
        }
      })

      test.skipIf(REAL)('an outage: the sync keeps its cursor, backs off, then catches up without losing a change', async () => {
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

      test.skipIf(REAL)('while Meilisearch is down GET /search answers 503 search_unavailable as JSON, not a 500', async () => {
        fake!.failNext(1_000)
        const res = await search({ q: 'quarterly VAT returns' })
        fake!.failNext(0)
        expect(res.status).toBe(503)
        expect(res.body).toEqual({ error: 'search_unavailable', message: expect.stringContaining('Meilisearch'), _tip: expect.any(String) })
        expect((await search({ q: 'quarterly VAT returns' })).status).toBe(200)
      })

      test.skipIf(REAL)('documents carry projectId, type and one vector per embedded text; deleted nodes leave the index', async () => {
        const docs = [...fake!.documents(MEILI_INDEX).values()].filter((d) => d.projectId === projectId)
        const job = docs.find((d) => d.id === ids['draft-j'])!
        expect(job).toMatchObject({ uid: `${projectId}_${ids['draft-j']}`, projectId, type: 'job', parentId: ids['draft-a'] })
        expect(Object.keys(job._vectors)).toEqual([app.deps.search.choice.embedder.id]) // the index's embedder, by its id
        expect(job._vectors[app.deps.search.choice.embedder.id].length).toBeGreaterThanOrEqual(1)
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
    },
  )
