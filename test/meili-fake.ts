/**
 * A small real Meilisearch stand-in for tests: an HTTP server that speaks the part of the
 * Meilisearch v1 API the adapter uses (indexes, settings, embedders, index swaps, documents, asynchronous tasks, search
 * with filters, user-provided vectors and hybrid search, `_rankingScore`), with its error shapes
 * and its rules (filters only on filterable attributes, vectors of the embedder's size, ids of
 * letters, digits, - and _). It lets the adapter's sync, retry and rebuild logic, and outages,
 * run on every pass; `test/search.meili.test.ts` runs the same tests against the real server of
 * test/meili-real.ts too, when it is at hand.
 *
 * Ranking is deliberately simple (share of query words found; (1 + cosine) / 2 for vectors; a
 * hybrid hit keeps the better of its weighted scores): tests must not depend on Meilisearch's
 * exact scores, only on the contract.
 */

interface FakeIndex {
  uid: string
  primaryKey: string
  docs: Map<string, Record<string, any>>
  filterable: string[]
  searchable: string[] | null
  embedders: Record<string, { source: string; dimensions?: number }>
  createdAt: string
}

interface Task {
  uid: number
  indexUid: string | null
  status: 'enqueued' | 'processing' | 'succeeded' | 'failed'
  type: string
  details: Record<string, unknown>
  error: { message: string; code: string; type: string; link: string } | null
  enqueuedAt: string
  startedAt: string | null
  finishedAt: string | null
  duration: string | null
  canceledBy: null
}

class MeiliError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly type = 'invalid_request',
  ) {
    super(message)
  }
  body() {
    return { message: this.message, code: this.code, type: this.type, link: `https://docs.meilisearch.com/errors#${this.code}` }
  }
}

const ID_RE = /^[a-zA-Z0-9_-]{1,511}$/

export interface FakeMeili {
  url: string
  masterKey?: string
  /** every request as `METHOD /path` */
  requests: string[]
  /** answer the next `n` requests with 503, as a server that is restarting */
  failNext(n: number): void
  /** documents of an index, by id */
  documents(indexUid: string): Map<string, Record<string, any>>
  stop(): void
}

export function startFakeMeili(opts: { masterKey?: string } = {}): FakeMeili {
  const indexes = new Map<string, FakeIndex>()
  const tasks: Task[] = []
  const queue: { task: Task; run: () => void }[] = []
  const requests: string[] = []
  let failing = 0
  let processing = false

  function enqueue(indexUid: string | null, type: string, details: Record<string, unknown>, run: () => void): Response {
    const task: Task = {
      uid: tasks.length,
      indexUid,
      status: 'enqueued',
      type,
      details,
      error: null,
      enqueuedAt: new Date().toISOString(),
      startedAt: null,
      finishedAt: null,
      duration: null,
      canceledBy: null,
    }
    tasks.push(task)
    queue.push({ task, run })
    if (!processing) setTimeout(processQueue, 1) // tasks run after the answer, one at a time, in order
    return Response.json({ taskUid: task.uid, indexUid, status: 'enqueued', type, enqueuedAt: task.enqueuedAt }, { status: 202 })
  }

  function processQueue() {
    processing = true
    for (let job = queue.shift(); job; job = queue.shift()) {
      const { task } = job
      task.status = 'processing'
      task.startedAt = new Date().toISOString()
      try {
        job.run()
        task.status = 'succeeded'
      } catch (e) {
        task.status = 'failed'
        task.error = e instanceof MeiliError ? e.body() : { message: String(e), code: 'internal', type: 'internal', link: '' }
      }
      task.finishedAt = new Date().toISOString()
      task.duration = 'PT0.001S'
    }
    processing = false
  }

  function getIndex(uid: string): FakeIndex {
    const index = indexes.get(uid)
    if (!index) throw new MeiliError(404, 'index_not_found', `Index \`${uid}\` not found.`)
    return index
  }

  function ensureIndex(uid: string, primaryKey?: string): FakeIndex {
    let index = indexes.get(uid)
    if (!index) {
      index = {
        uid,
        primaryKey: primaryKey ?? 'id',
        docs: new Map(),
        filterable: [],
        searchable: null,
        embedders: {},
        createdAt: new Date().toISOString(),
      }
      indexes.set(uid, index)
    }
    return index
  }

  function addDocuments(index: FakeIndex, docs: Record<string, any>[]) {
    // validate the whole batch first: a failed task changes nothing
    for (const doc of docs) {
      const id = doc[index.primaryKey]
      if (id === undefined)
        throw new MeiliError(
          400,
          'missing_document_id',
          `Document doesn't have a \`${index.primaryKey}\` attribute: \`${JSON.stringify(doc).slice(0, 200)}\`.`,
        )
      if (!ID_RE.test(String(id)))
        throw new MeiliError(400, 'invalid_document_id', `Document identifier \`${JSON.stringify(id)}\` is invalid.`)
      for (const [name, vectors] of Object.entries(doc._vectors ?? {})) {
        const embedder = index.embedders[name]
        if (!embedder)
          throw new MeiliError(400, 'invalid_vectors_type', `Invalid \`_vectors\` field: no embedder \`${name}\` in the settings.`)
        const list = Array.isArray((vectors as any)[0]) ? (vectors as number[][]) : [vectors as number[]]
        for (const v of list)
          if (v.length !== embedder.dimensions)
            throw new MeiliError(
              400,
              'invalid_vector_dimensions',
              `Invalid vector dimensions: expected \`${embedder.dimensions}\`, found \`${v.length}\`.`,
            )
      }
    }
    for (const doc of docs) index.docs.set(String(doc[index.primaryKey]), structuredClone(doc))
  }

  /** Add, change or (null) remove embedders; a removed embedder's vectors leave every document, as in Meilisearch. */
  function setEmbedders(index: FakeIndex, embedders: Record<string, { source: string; dimensions?: number } | null>) {
    for (const [name, e] of Object.entries(embedders)) {
      if (e) index.embedders[name] = e
      else {
        delete index.embedders[name]
        for (const doc of index.docs.values()) if (doc._vectors) delete doc._vectors[name]
      }
    }
  }

  /** `attr = "value"` terms joined by AND, as a string or an array of strings. */
  function parseFilter(index: FakeIndex, filter: unknown): (doc: Record<string, any>) => boolean {
    if (filter === undefined || filter === null) return () => true
    const parts = (Array.isArray(filter) ? filter : [filter]).flatMap((f) => String(f).split(/\s+AND\s+/))
    const tests = parts.map((part) => {
      const m = /^\s*([\w.]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+))\s*$/.exec(part)
      if (!m) throw new MeiliError(400, 'invalid_search_filter', `Was expecting an operation \`=\`, \`!=\`, ... at \`${part}\`.`)
      const attr = m[1]!
      if (!index.filterable.includes(attr))
        throw new MeiliError(
          400,
          'invalid_search_filter',
          `Attribute \`${attr}\` is not filterable. Available filterable attributes are: \`${index.filterable.join(', ')}\`.`,
        )
      const value = m[2]?.replace(/\\(.)/g, '$1') ?? m[3] ?? m[4]!
      return (doc: Record<string, any>) => String(doc[attr]) === value
    })
    return (doc) => tests.every((t) => t(doc))
  }

  function search(index: FakeIndex, body: Record<string, any>) {
    const limit = body.limit ?? 20
    const accept = parseFilter(index, body.filter)
    const q = typeof body.q === 'string' ? body.q : ''
    const hybrid = body.hybrid as { embedder?: string; semanticRatio?: number } | undefined
    const vector = body.vector as number[] | undefined
    let ratio = 0
    if (hybrid) {
      if (!hybrid.embedder || !index.embedders[hybrid.embedder])
        throw new MeiliError(400, 'invalid_search_embedder', `Cannot find embedder with name \`${hybrid.embedder}\`.`)
      ratio = hybrid.semanticRatio ?? 0.5
      if (ratio < 0 || ratio > 1)
        throw new MeiliError(
          400,
          'invalid_search_semantic_ratio',
          'The value of `semanticRatio` is invalid, expected a float between `0.0` and `1.0`.',
        )
      const dims = index.embedders[hybrid.embedder]!.dimensions
      if (vector && vector.length !== dims)
        throw new MeiliError(400, 'invalid_search_vector', `Invalid vector dimensions: expected \`${dims}\`, found \`${vector.length}\`.`)
    } else if (vector) {
      throw new MeiliError(400, 'invalid_search_hybrid_query', 'Passing `vector` as a parameter requires the `hybrid` parameter.')
    }
    const fields = index.searchable ?? ['*']
    const words = q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
    const hits: { doc: Record<string, any>; score: number; weighted: number }[] = []
    for (const doc of index.docs.values()) {
      if (!accept(doc)) continue
      let keyword = 0
      if (words.length) {
        const text = (fields[0] === '*' ? Object.values(doc) : fields.map((f) => doc[f]))
          .filter((v) => typeof v === 'string')
          .join(' ')
          .toLowerCase()
        const docWords = new Set(text.match(/[\p{L}\p{N}]+/gu) ?? [])
        const found = words.filter((w, i) => docWords.has(w) || (i === words.length - 1 && [...docWords].some((d) => d.startsWith(w))))
        keyword = found.length / words.length
      } else if (!vector) keyword = 1 // placeholder search: every document
      let semantic = 0
      if (vector && hybrid) {
        const raw = doc._vectors?.[hybrid.embedder!]
        const list: number[][] = raw ? (Array.isArray(raw[0]) ? raw : [raw]) : []
        for (const v of list) semantic = Math.max(semantic, (1 + cosine(vector, v)) / 2)
      }
      const wk = (1 - ratio) * keyword
      const ws = ratio * semantic
      if (wk <= 0 && ws <= 0) continue
      const score = ws > wk ? semantic : keyword
      if (body.rankingScoreThreshold !== undefined && score < body.rankingScoreThreshold) continue
      hits.push({ doc, score, weighted: Math.max(wk, ws) })
    }
    hits.sort((a, b) => b.weighted - a.weighted)
    const page = hits.slice(body.offset ?? 0, (body.offset ?? 0) + limit)
    return {
      hits: page.map(({ doc, score }) => {
        const { _vectors, ...rest } = doc
        return body.showRankingScore ? { ...rest, _rankingScore: score } : rest
      }),
      query: q,
      processingTimeMs: 0,
      limit,
      offset: body.offset ?? 0,
      estimatedTotalHits: hits.length,
      ...(hybrid ? { semanticHitCount: page.filter((h) => h.weighted > 0 && vector).length } : {}),
    }
  }

  async function route(req: Request): Promise<Response> {
    const url = new URL(req.url)
    const path = url.pathname.replace(/\/+$/, '')
    const method = req.method
    requests.push(`${method} ${path}`)
    if (failing > 0) {
      failing--
      return new Response('restarting', { status: 503 })
    }
    if (path === '/health') return Response.json({ status: 'available' })
    if (opts.masterKey && req.headers.get('authorization') !== `Bearer ${opts.masterKey}`) {
      const missing = !req.headers.get('authorization')
      const e = missing
        ? new MeiliError(
            401,
            'missing_authorization_header',
            'The Authorization header is missing. It must use the bearer authorization method.',
            'auth',
          )
        : new MeiliError(403, 'invalid_api_key', 'The provided API key is invalid.', 'auth')
      return Response.json(e.body(), { status: e.status })
    }
    const body: any =
      method === 'GET' || method === 'DELETE'
        ? undefined
        : await req.json().catch(() => {
            throw new MeiliError(400, 'bad_request', 'The request body is not valid JSON.')
          })
    let m: RegExpExecArray | null
    if ((m = /^\/tasks\/(\d+)$/.exec(path)) && method === 'GET') {
      const task = tasks[Number(m[1])]
      if (!task) throw new MeiliError(404, 'task_not_found', `Task \`${m[1]}\` not found.`)
      return Response.json(task)
    }
    if (path === '/swap-indexes' && method === 'POST') {
      const swaps = body as { indexes: [string, string]; rename?: boolean }[]
      return enqueue(null, 'indexSwap', { swaps }, () => {
        for (const { indexes: pair, rename } of swaps) {
          const [a, b] = [indexes.get(pair[0]), getIndex(pair[1])]
          if (!a && !rename) throw new MeiliError(404, 'index_not_found', `Index \`${pair[0]}\` not found.`)
          if (a && rename) throw new MeiliError(409, 'index_already_exists', `Index \`${pair[0]}\` already exists.`)
          indexes.delete(pair[1])
          indexes.set(pair[0], { ...b, uid: pair[0] })
          if (a) indexes.set(pair[1], { ...a, uid: pair[1] })
        }
      })
    }
    if (path === '/indexes' && method === 'POST') {
      const { uid, primaryKey } = body ?? {}
      if (typeof uid !== 'string' || !ID_RE.test(uid))
        throw new MeiliError(400, 'invalid_index_uid', `\`${uid}\` is not a valid index uid.`)
      return enqueue(uid, 'indexCreation', { primaryKey }, () => {
        if (indexes.has(uid)) throw new MeiliError(409, 'index_already_exists', `Index \`${uid}\` already exists.`)
        ensureIndex(uid, primaryKey)
      })
    }
    if (!(m = /^\/indexes\/([^/]+)(\/.*)?$/.exec(path))) throw new MeiliError(404, 'not_found', 'Not found', 'invalid_request')
    const uid = decodeURIComponent(m[1]!)
    const rest = m[2] ?? ''
    if (rest === '/settings' && method === 'PATCH') {
      for (const [name, e] of Object.entries((body?.embedders ?? {}) as Record<string, any>))
        if (e && e.source === 'userProvided' && !(Number.isInteger(e.dimensions) && e.dimensions > 0))
          throw new MeiliError(400, 'invalid_settings_embedders', `\`.embedders.${name}\`: Missing field \`dimensions\`.`)
      return enqueue(uid, 'settingsUpdate', body, () => {
        const index = ensureIndex(uid)
        if (body.filterableAttributes) index.filterable = body.filterableAttributes
        if (body.searchableAttributes) index.searchable = body.searchableAttributes
        if (body.embedders) setEmbedders(index, body.embedders)
      })
    }
    if (rest === '/settings/embedders' && method === 'GET') return Response.json(getIndex(uid).embedders)
    if (rest === '/settings/embedders' && method === 'DELETE')
      return enqueue(uid, 'settingsUpdate', { embedders: null }, () => {
        const index = getIndex(uid)
        setEmbedders(index, Object.fromEntries(Object.keys(index.embedders).map((name) => [name, null])))
      })
    if (rest === '' && method === 'DELETE')
      return enqueue(uid, 'indexDeletion', {}, () => {
        getIndex(uid)
        indexes.delete(uid)
      })
    if (rest === '/documents' && method === 'POST') {
      if (!Array.isArray(body)) throw new MeiliError(400, 'malformed_payload', 'The `json` payload must be an array of documents.')
      return enqueue(uid, 'documentAdditionOrUpdate', { receivedDocuments: body.length }, () =>
        addDocuments(ensureIndex(uid, url.searchParams.get('primaryKey') ?? 'id'), body),
      )
    }
    if (rest === '/documents' && method === 'DELETE') return enqueue(uid, 'documentDeletion', {}, () => getIndex(uid).docs.clear())
    if (rest === '/documents/delete-batch' && method === 'POST') {
      if (!Array.isArray(body)) throw new MeiliError(400, 'bad_request', 'Json deserialize error: expected an array of document ids.')
      return enqueue(uid, 'documentDeletion', { providedIds: body.length }, () => {
        const index = getIndex(uid)
        for (const id of body) index.docs.delete(String(id))
      })
    }
    if (rest === '/search' && method === 'POST') return Response.json(search(getIndex(uid), body ?? {}))
    if (rest === '' && method === 'GET') {
      const index = getIndex(uid)
      return Response.json({ uid, primaryKey: index.primaryKey, createdAt: index.createdAt, updatedAt: index.createdAt })
    }
    throw new MeiliError(404, 'not_found', `No route for ${method} ${path}.`)
  }

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      try {
        return await route(req)
      } catch (e) {
        const err = e instanceof MeiliError ? e : new MeiliError(500, 'internal', String(e), 'internal')
        return Response.json(err.body(), { status: err.status })
      }
    },
  })

  return {
    url: `http://127.0.0.1:${server.port}`,
    masterKey: opts.masterKey,
    requests,
    failNext(n) {
      failing = n
    },
    documents: (indexUid) => indexes.get(indexUid)?.docs ?? new Map(),
    stop: () => server.stop(true),
  }
}

function cosine(a: number[], b: number[]): number {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0
}
