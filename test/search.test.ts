import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import eventsSinceSql from '../sql/search/events-since.sql' with { type: 'text' }
import { createApp } from '../src/app'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/create-deps'
import type { Db } from '../src/db'
import type { Deps } from '../src/deps'
import { outboxOf, save } from '../src/events/outbox'
import { createLogger } from '../src/log'
import { findMiniLm } from '../src/search/embedder/minilm'
import { tick } from '../src/search/loop'
import { ADMIN_TOKEN, type Res, startApp, type TestApp } from './helpers'
import { until } from './receiver'
import { expectSepaJobFirst } from './search-contract'

// GET /search through HTTP, on the built-in backend: the contract of api.md, the index
// following writes, surviving a restart, seeing another replica's writes, an embedder change,
// and the near-duplicate advisory. Most apps here use a small local /embeddings server (bag of
// words, so tests are fast and exact); the first block runs the real offline default model.

const GUIDE = 'http://arbor.test/api/v1/guide'

/** An OpenAI-compatible /embeddings server: a 64-d bag of hashed words per text. */
function embeddingsServer() {
  const calls: string[][] = []
  let down = false
  const vector = (text: string) => {
    const v = new Array(64).fill(0)
    for (const w of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
      let h = 7
      for (const c of w) h = (h * 31 + c.charCodeAt(0)) % 64
      v[h] += 1
    }
    return v
  }
  const server = Bun.serve({
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as { input: string[] }
      calls.push(body.input)
      if (down) return new Response('overloaded', { status: 400 })
      return Response.json({ data: body.input.map((t, index) => ({ index, embedding: vector(t) })) })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    calls,
    setDown: (d: boolean) => (down = d),
    stop: () => server.stop(true),
  }
}

/** A second app (a replica) on the same database, with its own config and search index. */
function replica(app: TestApp, env: Record<string, string>, db: Db = app.db) {
  const config = loadConfig({
    DATABASE_URL: 'memory://',
    RATE_LIMIT_PER_MINUTE: '0',
    ADMIN_TOKEN,
    PUBLIC_BASE_URL: 'http://arbor.test',
    LOG_LEVEL: 'silent',
    ...env,
  })
  // the same process and database: the commits of the app's writes reach this one's search too
  const deps: Deps = createDeps({ config, db, log: createLogger('silent'), commits: app.deps.commits })
  const { handle } = createApp(deps)
  const call = async (path: string): Promise<Res> => {
    const res = await handle(new Request(`http://arbor.test${path}`, { headers: { authorization: `Bearer ${app.ownerKey}` } }), '127.0.0.1')
    return { status: res.status, body: await res.json(), headers: res.headers }
  }
  return { deps, call }
}

async function batch(
  app: TestApp,
  projectId: string,
  nodes: { id: string; type: string; parentId?: string | null; data: Record<string, unknown> }[],
) {
  const res = await app.call('POST', '/api/v1/mutate', {
    body: { action: 'batch', projectId, mutations: nodes.map((node) => ({ action: 'add', node })) },
  })
  expect(res.status).toBe(200)
  return res.body.idMap as Record<string, string>
}

const search = (app: { call: TestApp['call'] }, projectId: string, params: Record<string, string>) =>
  app.call('GET', `/api/v1/search?${new URLSearchParams({ projectId, ...params })}`)

const TREE = [
  {
    id: 'draft-g',
    type: 'goal',
    data: { label: 'Get paid faster', description: 'Shrink the time between sending an invoice and the money arriving.' },
  },
  { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Payers can settle invoices online' } },
  {
    id: 'draft-a',
    type: 'approach',
    parentId: 'draft-n',
    data: {
      label: 'Hosted pay-by-link checkout',
      description: 'Every emailed invoice carries a link to a hosted checkout.',
      measure: 'Share of invoices paid through the link',
    },
  },
  { id: 'draft-j1', type: 'job', parentId: 'draft-a', data: { label: 'A payer can pay an invoice by card from the email link' } },
  { id: 'draft-j2', type: 'job', parentId: 'draft-a', data: { label: 'Payers in the eurozone can pay by SEPA Direct Debit' } },
  { id: 'draft-t', type: 'task', data: { label: 'Renew the TLS certificate of the marketing site' } },
]

describe('GET /search on the built-in offline model', () => {
  let app: TestApp
  let projectId: string
  let ids: Record<string, string>
  beforeAll(async () => {
    app = await startApp()
    projectId = await app.project()
    ids = await batch(app, projectId, TREE)
    // On a fresh install the offline model's first use builds its word-vector cache, which
    // takes seconds: let the index loop finish embedding before the tests look at results.
    for (let i = 0; i < 100; i++) {
      await tick(app.deps, new Date())
      const meta = (await search(app, projectId, { q: 'warm up' })).body._meta?.search
      if (meta?.semantic === 'full' && meta.pendingNodes === 0) break
      await Bun.sleep(200)
    }
  }, 60_000)
  afterAll(() => app.close())

  test('returns nodes ranked by similarity, each with its ancestors from the parent up to the root goal', async () => {
    const res = await search(app, projectId, { q: 'SEPA Direct Debit' })
    expect(res.status).toBe(200)
    expect(res.body.results.length).toBeGreaterThan(0)
    expect(res.body.results.length).toBeLessThanOrEqual(5)
    expectSepaJobFirst(res, { job: ids['draft-j2'], approach: ids['draft-a'], need: ids['draft-n'], goal: ids['draft-g'] })
    // the sentence model when `model:fetch` has put it in place (CI does), else the npm-only fallback, which says so
    const model = findMiniLm(app.config.embeddingsModelDir)
    expect(res.body._meta.search).toEqual({
      backend: 'builtin',
      embedder: model ? model.id : 'builtin-mix-use-glove-v1',
      mode: 'hybrid',
      semantic: 'full',
      pendingNodes: 0,
      ...(model ? {} : { fallback: expect.stringContaining('npm run model:fetch') }),
    })
  })

  test('CI searches with the real sentence model (model:fetch ran before the tests)', () => {
    if (!process.env.CI) return
    expect(findMiniLm(app.config.embeddingsModelDir)?.id).toBe('minilm-l6-v2-int8-v1-aq8')
  })

  test('matches by meaning when the query shares no word with the node', async () => {
    const res = await search(app, projectId, { q: 'the security certificate of our website is about to expire', limit: '1' })
    expect(res.body.results.map((r: any) => r.node.id)).toEqual([ids['draft-t']])
  })

  test('a root node has no ancestors; type filters the results', async () => {
    const res = await search(app, projectId, { q: 'get paid faster', type: 'goal' })
    expect(res.body.results).toEqual([
      {
        node: { id: ids['draft-g'], rev: expect.any(String), type: 'goal', parentId: null, data: TREE[0]!.data },
        similarity: expect.any(Number),
        ancestors: [],
      },
    ])
  })
})

describe('GET /search: the contract', () => {
  let app: TestApp
  let emb: ReturnType<typeof embeddingsServer>
  let projectId: string
  let ids: Record<string, string>
  beforeAll(async () => {
    emb = embeddingsServer()
    app = await startApp({ EMBEDDINGS_URL: emb.url, EMBEDDINGS_MODEL: 'bag-of-words' })
    projectId = await app.project()
    const many = Array.from({ length: 24 }, (_, i) => ({
      id: `draft-x${i}`,
      type: 'task',
      data: { label: `Invoice reminder number ${i}` },
    }))
    ids = await batch(app, projectId, [...TREE, ...many])
  })
  afterAll(async () => {
    await app.close()
    emb.stop()
  })

  test('limit defaults to 5 and goes up to 20', async () => {
    expect((await search(app, projectId, { q: 'invoice reminder' })).body.results).toHaveLength(5)
    expect((await search(app, projectId, { q: 'invoice reminder', limit: '20' })).body.results).toHaveLength(20)
  })

  test('limit above 20 or below 1 is a 400 validation error with the guide', async () => {
    for (const limit of ['21', '0', 'ten', '-1', '2.5']) {
      const res = await search(app, projectId, { q: 'invoice', limit })
      expect(res.status).toBe(400)
      expect(res.body).toEqual({
        success: false,
        errors: ['limit must be an integer from 1 to 20'],
        _meta: { _tip: 'Omit limit for the default of 5.', guide: GUIDE },
      })
    }
  })

  test('q is required; type must be a node type', async () => {
    const noQ = await app.call('GET', `/api/v1/search?projectId=${projectId}`)
    expect(noQ.status).toBe(400)
    expect(noQ.body).toMatchObject({ success: false, errors: ['q is required'], _meta: { guide: GUIDE } })
    const badType = await search(app, projectId, { q: 'invoice', type: 'epic' })
    expect(badType.status).toBe(400)
    expect(badType.body).toEqual({
      success: false,
      errors: ['type must be one of: goal, need, approach, job, task'],
      _meta: { guide: GUIDE },
    })
  })

  test('access follows the other reads: 401 without a key, 403 on a project the key cannot reach', async () => {
    const anon = await app.call('GET', `/api/v1/search?projectId=${projectId}&q=x`, { key: null })
    expect(anon.status).toBe(401)
    expect(anon.body).toEqual({ error: 'unauthorized', message: 'Missing or invalid API key', _meta: { guide: GUIDE } })
    const stranger = await app.user()
    const denied = await app.call('GET', `/api/v1/search?projectId=${projectId}&q=x`, { key: stranger.key })
    expect(denied.status).toBe(403)
    expect(denied.body).toEqual({
      error: 'project_access_denied',
      message: 'API key does not have access to this project',
      _meta: { guide: GUIDE },
    })
  })

  test('the legacy path answers the same, with Deprecation and a Link to /api/v1/search', async () => {
    const res = await app.call('GET', `/api/search?projectId=${projectId}&q=sepa`)
    expect(res.status).toBe(200)
    expect(res.body.results[0].node.id).toBe(ids['draft-j2'])
    expect(res.headers.get('deprecation')).toBe('true')
    expect(res.headers.get('link')).toBe('<http://arbor.test/api/v1/search>; rel="successor-version"')
  })

  test('a huge query or description is cut before it reaches the embedder, and search still answers', async () => {
    const long = 'invoice reminder '.repeat(900) // ~15 KB, under the 16 KB a path and query may have
    const res = await search(app, projectId, { q: long })
    expect(res.status).toBe(200)
    expect(res.body.results.length).toBeGreaterThan(0)
    const add = await app.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId, node: { type: 'task', data: { label: 'Bulk notes', description: 'ledger '.repeat(2800) } } },
    })
    expect({ status: add.status, body: add.status === 200 ? null : add.body }).toEqual({ status: 200, body: null })
    expect((await search(app, projectId, { q: 'bulk notes ledger', limit: '1' })).body.results[0].node.data.label).toBe('Bulk notes')
    const longest = Math.max(...emb.calls.flat().map((t) => t.length))
    expect(longest).toBeLessThanOrEqual(2000)
    expect(emb.calls.flat().some((t) => t.startsWith('invoice reminder') && t.length <= 1000 && t.length > 900)).toBe(true)
  })

  test('the index follows updates and deletes', async () => {
    await app.call('POST', '/api/v1/mutate', {
      body: { action: 'update', projectId, nodeId: ids['draft-t'], data: { label: 'Rotate the signing keys of the webhooks' } },
    })
    const renamed = await search(app, projectId, { q: 'rotate signing keys', limit: '1' })
    expect(renamed.body.results.map((r: any) => [r.node.id, r.node.data.label])).toEqual([
      [ids['draft-t'], 'Rotate the signing keys of the webhooks'],
    ])
    await app.call('POST', '/api/v1/mutate', { body: { action: 'delete', projectId, nodeId: ids['draft-t'] } })
    const gone = await search(app, projectId, { q: 'rotate signing keys webhooks' })
    expect(gone.body.results.map((r: any) => r.node.id)).not.toContain(ids['draft-t'])
  })

  test.skipIf(!!process.env.TEST_DATABASE_URL)(
    'on PGlite a keyword search answers while another transaction holds the database, and sees every committed write',
    async () => {
      await search(app, projectId, { q: 'invoice reminder', mode: 'keyword' }) // the index is loaded and current
      let release!: () => void
      let holding!: () => void
      const gate = new Promise<void>((r) => (release = r))
      const held = new Promise<void>((r) => (holding = r))
      // a long write on the one PGlite connection, as a 1,000-node batch is
      const long = app.db.tx(async (tx) => {
        await tx.query('select 1')
        holding()
        await gate
      })
      await held
      const during = await Promise.race([
        search(app, projectId, { q: 'invoice reminder number 7', limit: '1', mode: 'keyword' }),
        Bun.sleep(3000),
      ])
      release()
      await long
      expect((during as any)?.body.results.map((r: any) => r.node.id)).toEqual([ids['draft-x7']])
      // a write that committed is seen by the very next search
      const added = await app.call('POST', '/api/v1/mutate', {
        body: { action: 'add', projectId, node: { type: 'task', data: { label: 'Archive the quarterly ledger' } } },
      })
      const found = await search(app, projectId, { q: 'quarterly ledger', limit: '1', mode: 'keyword' })
      expect(found.body.results.map((r: any) => r.node.id)).toEqual([added.body.node.id])
    },
  )

  test.skipIf(!!process.env.TEST_DATABASE_URL)(
    'on PGlite a write that commits while the next transaction already waits for the database is searchable during that transaction',
    async () => {
      await search(app, projectId, { q: 'invoice reminder', mode: 'keyword' }) // the index is loaded and current
      let release!: () => void
      let holding!: () => void
      const gate = new Promise<void>((r) => (release = r))
      const held = new Promise<void>((r) => (holding = r))
      // an import's batches back to back: the write commits, and the next batch has the
      // database before any read the commit could queue (the index must not need one)
      const write = app.db.tx((tx) =>
        save(
          { ...app.deps, db: tx },
          outboxOf(projectId, [
            {
              type: 'node.added',
              node: { id: 'late-import', type: 'task', parentId: null, data: { label: 'Reconcile the petty cash drawer' } },
            },
          ]),
        ),
      )
      const next = app.db.tx(async (tx) => {
        await tx.query('select 1')
        holding()
        await gate
      })
      await write
      await held
      const during = await Promise.race([search(app, projectId, { q: 'petty cash drawer', limit: '1', mode: 'keyword' }), Bun.sleep(3000)])
      release()
      await next
      expect((during as any)?.body.results.map((r: any) => r.node.id)).toEqual(['late-import'])
    },
  )

  test.skipIf(!!process.env.TEST_DATABASE_URL)(
    'on PGlite the commits told while an index reads the outbox are applied from memory: a stream of writes never makes it read again',
    async () => {
      // a replica whose database counts the outbox reads of its index (the database itself is real)
      let reads = 0
      const counted = new Proxy(app.db, {
        get(target, prop) {
          if (prop === 'query')
            return (text: string, params?: unknown[]) => {
              if (text === eventsSinceSql) reads++
              return target.query(text, params)
            }
          const value = Reflect.get(target, prop)
          return typeof value === 'function' ? value.bind(target) : value
        },
      })
      const other = replica(app, { EMBEDDINGS_URL: emb.url, EMBEDDINGS_MODEL: 'bag-of-words' }, counted)
      const streamed = await app.project()
      // an import's commits back to back, from before the index loads until after the last search
      let writing = true
      let written = 0
      const writer = (async () => {
        for (; writing; written++) {
          // batches, as an import sends them: each commit is long and hands over many events
          const labels = Array.from({ length: 100 }, (_, i) => `Streamed item q${written}x part ${i}`)
          const res = await app.call('POST', '/api/v1/mutate', {
            body: {
              action: 'batch',
              projectId: streamed,
              mutations: labels.map((label) => ({ action: 'add', node: { type: 'task', data: { label } } })),
            },
          })
          if (res.status !== 200) throw new Error(JSON.stringify(res.body))
          await Bun.sleep(0) // as through the network: the searches get their turn
        }
      })()
      const find = (n: number) =>
        other.call(`/api/v1/search?${new URLSearchParams({ projectId: streamed, q: `q${n}x`, limit: '1', mode: 'keyword' })}`)
      try {
        while (written < 3) await Bun.sleep(5)
        const found = (res: Res, n: number) =>
          res.body.results.map((r: any) => (r.node.data.label.startsWith(`Streamed item q${n}x `) ? 'found' : r.node.data.label))
        expect(found(await find(0), 0)).toEqual(['found']) // loads the index
        const readsAtLoad = reads
        const seen: string[] = []
        for (let i = 0; i < 10 || written < 30; i++) {
          const n = written - 1 // answered before this search began
          seen.push(...found(await find(n), n))
          await Bun.sleep(0) // and the writes theirs (a search from memory never waits for anything)
        }
        expect(seen).toEqual(new Array(seen.length).fill('found'))
        expect(readsAtLoad).toBeLessThanOrEqual(2)
        expect(reads).toBe(readsAtLoad) // every later commit came in memory
      } finally {
        writing = false
        await writer
      }
    },
  )

  test('mode=keyword ranks by words only; mode=semantic by vectors only', async () => {
    const kw = await search(app, projectId, { q: 'eurozone', mode: 'keyword' })
    expect(kw.body.results.map((r: any) => r.node.id)).toEqual([ids['draft-j2']])
    expect(kw.body._meta.search.semantic).toBe('off')
    const sem = await search(app, projectId, { q: 'eurozone', mode: 'semantic' })
    expect(sem.body._meta.search.mode).toBe('semantic')
  })

  test('vectors are stored in the database: a restarted server embeds only the query', async () => {
    await search(app, projectId, { q: 'warm' })
    for (let i = 0; i < 5 && (await tick(app.deps, new Date())).embedded; i++);
    const restarted = replica(app, { EMBEDDINGS_URL: emb.url, EMBEDDINGS_MODEL: 'bag-of-words' })
    const before = emb.calls.length
    const res = await restarted.call(`/api/v1/search?projectId=${projectId}&q=${encodeURIComponent('pay by card from the email')}`)
    expect(res.body.results[0].node.id).toBe(ids['draft-j1'])
    expect(res.body._meta.search.semantic).toBe('full')
    expect(emb.calls.slice(before)).toEqual([['pay by card from the email']])
  })

  test("a replica sees another replica's writes on its next search", async () => {
    const other = replica(app, { EMBEDDINGS_URL: emb.url, EMBEDDINGS_MODEL: 'bag-of-words' })
    await other.call(`/api/v1/search?projectId=${projectId}&q=anything`) // its index is loaded now
    const [id] = Object.values(
      await batch(app, projectId, [{ id: 'draft-new', type: 'task', data: { label: 'Translate the onboarding emails into Portuguese' } }]),
    )
    const res = await other.call(`/api/v1/search?projectId=${projectId}&q=portuguese&limit=1`)
    expect(res.body.results.map((r: any) => r.node.id)).toEqual([id])
  })
})

describe('embedder change, near-duplicates, late commits', () => {
  let app: TestApp
  let emb: ReturnType<typeof embeddingsServer>
  let projectId: string
  const env = () => ({ EMBEDDINGS_URL: emb.url, EMBEDDINGS_MODEL: 'bag-of-words' })
  beforeAll(async () => {
    emb = embeddingsServer()
    app = await startApp(env())
    projectId = await app.project()
  })
  afterAll(async () => {
    await app.close()
    emb.stop()
  })

  test('a changed embedder re-embeds in the background; meanwhile search answers by keyword and says so', async () => {
    const nodes = Array.from({ length: 12 }, (_, i) => ({ id: `draft-c${i}`, type: 'task', data: { label: `Chase overdue invoice ${i}` } }))
    await batch(app, projectId, nodes)
    await search(app, projectId, { q: 'overdue' })
    for (let i = 0; i < 5 && (await tick(app.deps, new Date())).embedded; i++);
    await tick(app.deps, new Date()) // marks the project done
    expect(await app.deps.search.backfillProgress!()).toEqual({ embedder: 'openai:bag-of-words', projects: 1, waiting: 0, waitingNodes: 0 })

    const changed = replica(app, { ...env(), EMBEDDINGS_MODEL: 'bag-of-words-v2' })
    // the progress of the re-embedding, as `arbor doctor` and GET /metrics say it
    expect(await changed.deps.search.backfillProgress!()).toEqual({
      embedder: 'openai:bag-of-words-v2',
      projects: 1,
      waiting: 1,
      waitingNodes: 12,
    })
    const scraped = await changed.deps.metrics.scrape()
    expect(scraped).toContain('arbor_search_reembed_projects{state="waiting",embedder="openai:bag-of-words-v2"} 1\n')
    expect(scraped).toContain('arbor_search_reembed_projects{state="done",embedder="openai:bag-of-words-v2"} 0\n')
    expect(scraped).toContain('arbor_search_reembed_nodes_waiting 12\n')
    const during = await changed.call(`/api/v1/search?projectId=${projectId}&q=overdue&limit=3`)
    expect(during.status).toBe(200)
    expect(during.body.results).toHaveLength(3)
    expect(during.body._meta).toEqual({
      search: {
        backend: 'builtin',
        embedder: 'openai:bag-of-words-v2',
        mode: 'hybrid',
        semantic: 'partial',
        pendingNodes: 12,
        etaSeconds: null, // nothing embedded yet by this replica: no rate to estimate from
      },
      _tip: '12 node(s) are still being indexed for meaning (embedder openai:bag-of-words-v2); until then they match by keyword only.',
    })
    for (let i = 0; i < 10 && (await tick(changed.deps, new Date())).embedded; i++);
    const after = await changed.call(`/api/v1/search?projectId=${projectId}&q=overdue&limit=3`)
    expect(after.body._meta.search).toMatchObject({ semantic: 'full', pendingNodes: 0 })
    await tick(changed.deps, new Date())
    expect(await changed.deps.search.backfillProgress!()).toMatchObject({ projects: 1, waiting: 0, waitingNodes: 0 })
    const models = await app.db.query<{ embedder: string; n: number }>(
      'select embedder, count(*)::int as n from search_vectors where project_id = $1 group by embedder order by embedder',
      [projectId],
    )
    expect(models).toEqual([
      { embedder: 'openai:bag-of-words', n: 12 },
      { embedder: 'openai:bag-of-words-v2', n: 12 },
    ])
  })

  test('an add very close to an existing node of the same type carries _meta.advisory possible_duplicate', async () => {
    const add = (label: string, description?: string) =>
      app.call('POST', '/api/v1/mutate', {
        body: { action: 'add', projectId, node: { type: 'task', data: { label, ...(description ? { description } : {}) } } },
      })
    const first = await add('Export invoices as PDF files', 'Bulk export for accountants')
    await tick(app.deps, new Date()) // the loop follows the write (woken by it in a running server)
    const again = await add('Export invoices as pdf files', 'bulk export for accountants')
    expect(again.status).toBe(200)
    expect(again.body.success).toBe(true)
    expect(again.body._meta.advisory).toEqual({
      type: 'possible_duplicate',
      nodes: [{ id: first.body.node.id, label: 'Export invoices as PDF files', similarity: 1 }],
    })
    const different = await add('Call the bank about the overdraft limit')
    expect(different.body._meta.advisory).toBeUndefined()
  })

  test.skipIf(!process.env.TEST_DATABASE_URL)('an event that commits after a later one was read is still applied', async () => {
    const { authenticate } = await import('../src/accounts/service')
    const { actions } = await import('../src/mutate/service')
    const { runWrite } = await import('../src/mutate/sequence')
    const { requireProject } = await import('../src/projects/access')
    const owner = await authenticate(app.deps, `Bearer ${app.ownerKey}`)
    const access = await requireProject(app.deps, owner, projectId)
    const [goalId] = Object.values(await batch(app, projectId, [{ id: 'draft-slow', type: 'goal', data: { label: 'Check the refunds' } }]))
    await search(app, projectId, { q: 'warm' })
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    let slowId = ''
    // a write that takes its event seq first and commits last: a label change, which the work
    // state's lock (sql/migrations/0016, taken by every write that adds nodes or moves what the
    // readiness rule reads) does not serialise against the batch below
    const slow = app.db.tx(async (tx) => {
      const { answer: res } = await runWrite(
        { ...app.deps, db: tx },
        actions.update,
        { user: owner, access },
        { action: 'update', projectId, nodeId: goalId!, data: { label: 'Audit the refund approvals' } },
      )
      slowId = (res.node as any).id
      await held
    })
    // the slow write has its node (and its event seq) once slowId is set
    for (const end = Date.now() + 10_000; slowId === '' && Date.now() < end; ) await Bun.sleep(5)
    await batch(app, projectId, [{ id: 'draft-fast', type: 'task', data: { label: 'Audit the payout approvals' } }])
    const before = await search(app, projectId, { q: 'audit approvals', mode: 'keyword' })
    expect(before.body.results.map((r: any) => r.node.data.label)).toEqual(['Audit the payout approvals'])
    release()
    await slow
    const after = await search(app, projectId, { q: 'audit approvals', mode: 'keyword' })
    expect(after.body.results.map((r: any) => r.node.id)).toContain(slowId)
  })
  test('a read that reaches further back than the last one applies no event twice: a node never goes back to older text', async () => {
    const q = await import('../src/search/queries')
    const [id] = Object.values(
      await batch(app, projectId, [{ id: 'draft-h', type: 'task', data: { label: 'Rotate the signing keys v0' } }]),
    )
    for (let v = 1; v <= 3; v++) {
      const res = await app.call('POST', '/api/v1/mutate', {
        body: { action: 'update', projectId, nodeId: id, data: { label: `Rotate the signing keys v${v}` } },
      })
      expect(res.status).toBe(200)
      await search(app, projectId, { q: 'signing keys', mode: 'keyword' }) // each update applied by a read of its own
    }
    // pg_stat_activity is not a snapshot: a later read may see a transaction start older than
    // the last read did, and then reads from there. It must meet no event already applied:
    // every one of them belongs to a transaction below the xmin the last read stored. That xmin
    // is the cluster's: a transaction open in another database (another test file's, beside this
    // one in CI) holds it back, so the read point is taken once it has passed this project's events
    const [newest] = await app.db.query<{ txid: string }>(`select max(txid)::text as txid from events where project_id = $1`, [projectId])
    const point = await until(
      async () => {
        const p = await q.horizon(app.db)
        return p.xmin > BigInt(newest!.txid) ? p : null
      },
      "the cluster's xmin past the project's newest event",
      60_000,
    )
    const head = await q.head(app.db, projectId)
    expect(await q.eventsSince(app.db, projectId, head, { at: new Date(0), xmin: point.xmin }, [])).toEqual([])
    // the same through the index: its read point moved back in time, the next search is still current
    const idx = (app.deps.search as any).loaded.get(projectId)
    idx.horizon = { at: new Date(0), xmin: idx.horizon.xmin }
    const found = await search(app, projectId, { q: 'signing keys', mode: 'keyword', limit: '1' })
    expect(found.body.results.map((r: any) => r.node.data.label)).toEqual(['Rotate the signing keys v3'])
  })
})

describe('without the sentence model', () => {
  test('falls back to the npm-only model and says so in _meta.search', async () => {
    const app = await startApp({ EMBEDDINGS_MODEL_DIR: '/nonexistent/arbor-model' })
    try {
      const projectId = await app.project()
      await batch(app, projectId, [{ id: 'draft-t', type: 'task', parentId: null, data: { label: 'Renew the TLS certificate' } }])
      const res = await search(app, projectId, { q: 'certificate', mode: 'keyword' })
      expect(res.body._meta.search).toEqual({
        backend: 'builtin',
        embedder: 'builtin-mix-use-glove-v1',
        mode: 'keyword',
        semantic: 'off',
        pendingNodes: 1, // a keyword search embeds nothing: the loop has not run
        etaSeconds: null,
        fallback:
          'the sentence model is not in /nonexistent/arbor-model (run: npm run model:fetch); using the smaller USE-lite + GloVe model',
      })
    } finally {
      await app.close()
    }
  })
})
