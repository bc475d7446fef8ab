import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MEILI_BIN, MEILI_SKIP, type RealMeili, startRealMeili } from './meili-real'
import { type ServerProcess, startServer } from './process'

// Server processes against a real Meilisearch (test/meili-real.ts: ../shared/tools/meilisearch
// or MEILI_BIN; skipped without one). The index records the embedder it was built with (the
// name of its user-provided embedder); a server with another embedder answers by keyword with
// the reason in `_meta.search`, and the replica holding the sync lease rebuilds the index for
// its own embedder, so that an index set up by another embedder never makes search a 503.

const FALLBACK = 'builtin-mix-use-glove-v1' // the USE-lite + GloVe embedder, 612 dimensions
const MINILM = 'minilm-l6-v2-int8-v1-aq8' // the sentence model of data/models, 384 dimensions
/** a model directory that does not exist: the server falls back to the smaller embedder */
const NO_MODEL = { EMBEDDINGS_MODEL_DIR: '/nonexistent/arbor-no-sentence-model' }
const SEPA = 'Payers in the eurozone can pay by SEPA Direct Debit'
const TLS = 'Renew the TLS certificate of the marketing site'
const LANG = 'Invoices can be produced in German, French, Spanish or Dutch'
/** no word in common with SEPA: only a meaning match finds it */
const PARAPHRASE = 'European customers authorise pulling money from their account'

const search = (s: ServerProcess, projectId: string, q: string, extra: Record<string, string> = {}) =>
  s.call('GET', `/api/v1/search?${new URLSearchParams({ projectId, q, limit: '3', ...extra })}`)
/** how many times a server started rebuilding the index for another embedder */
const rebuilds = (s: ServerProcess) => s.output().split('rebuilding it for').length - 1
const labels = (res: { body: any }) => (res.body.results ?? []).map((r: any) => r.node.data.label)
async function project(s: ServerProcess, id: string, texts: string[]) {
  await s.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: id, id } } })
  const res = await s.call('POST', '/api/v1/mutate', {
    body: {
      action: 'batch',
      projectId: id,
      mutations: texts.map((label, i) => ({ action: 'add', node: { id: `draft-${i}`, type: 'task', data: { label } } })),
    },
  })
  expect(res.status).toBe(200)
  return res.body.idMap as Record<string, string>
}
/** poll a search until its answer is semantic 'full' and `ok` holds; every answer on the way must be a 200 */
async function untilSemantic(s: ServerProcess, projectId: string, q: string, ok: (labels: string[]) => boolean, what: string) {
  const statuses = new Set<number>()
  const res = await s.until(
    async () => {
      const r = await search(s, projectId, q)
      statuses.add(r.status)
      return r.body._meta?.search?.semantic === 'full' && ok(labels(r)) ? r : null
    },
    120_000,
    what,
  )
  expect([...statuses]).toEqual([200])
  return res
}

describe.skipIf(!MEILI_BIN)(`Meilisearch, the real server (${MEILI_BIN ?? MEILI_SKIP})`, () => {
  let meili: RealMeili
  const servers: ServerProcess[] = []
  const start = async (env: Record<string, string>, on?: ServerProcess) => {
    const s = await startServer({ MEILI_URL: meili.url, MEILI_API_KEY: meili.masterKey, ...env }, on)
    servers.push(s)
    return s
  }
  beforeAll(async () => {
    meili = await startRealMeili()
  })
  afterAll(async () => {
    for (const s of servers.reverse()) await s.close()
    await meili?.stop()
  })

  test('an index set up by another embedder, on another database: 200s all along, then the index is rebuilt for the new embedder', async () => {
    // server A, the fallback embedder (612 dimensions), builds the index
    const a = await start(NO_MODEL)
    await project(a, 'first', [SEPA, TLS])
    const found = await untilSemantic(a, 'first', 'SEPA direct debit', (l) => l[0] === SEPA, 'A indexed for meaning')
    expect(found.body._meta.search).toEqual({
      backend: 'meilisearch',
      embedder: FALLBACK,
      mode: 'hybrid',
      semantic: 'full',
      pendingNodes: 0,
      fallback: expect.stringContaining('sentence model'),
    })
    await a.close() // a database reset, Meilisearch kept

    // server B, MiniLM (384 dimensions), on another database
    const b = await start({})
    await project(b, 'second', [SEPA, TLS, LANG])
    // at once: a 200, by keyword with the reason while the index is A's, or by meaning once rebuilt
    const first = await search(b, 'second', 'TLS certificate')
    expect(first.status).toBe(200)
    if (first.body._meta.search.semantic !== 'full')
      expect(first.body._meta.search).toMatchObject({
        semantic: 'rebuilding',
        reason: expect.stringContaining(`built with embedder ${FALLBACK}`),
      })
    const meaning = await untilSemantic(b, 'second', PARAPHRASE, (l) => l[0] === SEPA, 'B rebuilt the index and found a paraphrase')
    expect(meaning.body._meta.search).toEqual({
      backend: 'meilisearch',
      embedder: MINILM,
      mode: 'hybrid',
      semantic: 'full',
      pendingNodes: 0,
    })
    expect(b.output()).toContain(`the Meilisearch index was built with embedder ${FALLBACK}; rebuilding it for ${MINILM}`)
    expect(b.output()).not.toContain('search_unavailable')
    expect(b.output()).not.toContain('Invalid vector dimensions')
    await b.close()
  }, 300_000)

  test.skipIf(!process.env.TEST_DATABASE_URL)(
    'two replicas with different embedders on one database: the index follows the lease holder, the other answers by keyword and says why; no flip-flop',
    async () => {
      const a = await start(NO_MODEL) // holds the sync lease: started first
      const ids = await project(a, 'shared', [SEPA, TLS])
      await untilSemantic(a, 'shared', 'SEPA direct debit', (l) => l[0] === SEPA, 'A indexed for meaning')
      const aRebuilds = rebuilds(a) // 1 when the index left by the test above was another embedder's, else 0
      const b = await start({}, a) // a replica on the same database, with the sentence model

      // B at once: 200, keyword results, and why
      const byKeyword = await search(b, 'shared', 'TLS certificate')
      expect(byKeyword.status).toBe(200)
      expect(labels(byKeyword)).toEqual([TLS])
      expect(byKeyword.body._meta).toEqual({
        search: {
          backend: 'meilisearch',
          embedder: MINILM,
          mode: 'hybrid',
          semantic: 'unavailable',
          pendingNodes: 0,
          reason: expect.stringContaining(`built with embedder ${FALLBACK}`),
        },
        _tip: byKeyword.body._meta.search.reason,
      })
      expect(byKeyword.body._meta.search.reason).toContain('give every replica the same embedder')

      // writes through B reach the index (A pushes them); a delete through B disappears from both
      const add = await b.call('POST', '/api/v1/mutate', {
        body: { action: 'add', projectId: 'shared', node: { type: 'task', data: { label: 'Archive the quarterly VAT returns' } } },
      })
      expect(add.status).toBe(200)
      for (const s of [a, b])
        await s.until(async () => labels(await search(s, 'shared', 'quarterly VAT returns'))[0] === 'Archive the quarterly VAT returns')
      expect(
        (await b.call('POST', '/api/v1/mutate', { body: { action: 'delete', projectId: 'shared', nodeId: ids['draft-1'] } })).status,
      ).toBe(200)
      for (const s of [a, b]) await s.until(async () => !labels(await search(s, 'shared', 'TLS certificate')).includes(TLS))

      // no flip-flop: the index stays A's while A holds the lease (a fixed wait on purpose: nothing may change during it)
      await Bun.sleep(3000)
      const stillA = await search(a, 'shared', PARAPHRASE)
      expect(stillA.body._meta.search.semantic).toBe('full')
      expect(labels(stillA)[0]).toBe(SEPA)
      expect({ a: rebuilds(a), b: rebuilds(b) }).toEqual({ a: aRebuilds, b: 0 })

      // A stops and gives the lease up: B takes over, rebuilds for its embedder, answers by meaning
      await a.stop()
      await untilSemantic(b, 'shared', PARAPHRASE, (l) => l[0] === SEPA, 'B rebuilt the index after taking the lease')
      expect(b.output()).toContain(`the Meilisearch index was built with embedder ${FALLBACK}; rebuilding it for ${MINILM}`)
      expect(labels(await search(b, 'shared', 'quarterly VAT returns'))[0]).toBe('Archive the quarterly VAT returns')
      expect(labels(await search(b, 'shared', 'TLS certificate'))).not.toContain(TLS)
    },
    300_000,
  )
})
