import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { LEASE_MS } from '../src/revisions/replicas'
import { startLagProxy } from './lag-proxy'
import { replicas, revisionLookups, type ServerProcess, startServer } from './process'

// Cached reads through the real server process (src/reads/cache.ts): while readers keep every
// answer warm, each write shows in the next read, on the replica that wrote it and (on
// PostgreSQL) on another replica of the same database.
const onPostgres = !!process.env.TEST_DATABASE_URL

async function seed(server: ServerProcess, projectId: string) {
  const res = await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: projectId, id: projectId } } })
  expect(res.status).toBe(200)
  const batch = await server.call('POST', '/api/v1/mutate', {
    body: {
      action: 'batch',
      projectId,
      mutations: [
        { action: 'addIteration', iteration: { name: 'S1' } },
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Grow revenue' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Churn is high' } } },
        { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Exit survey' } } },
        ...Array.from({ length: 20 }, (_, i) => ({
          action: 'add',
          node: { type: 'job', parentId: 'draft-a', data: { label: `Job ${i}`, iteration: 'S1' } },
        })),
      ],
    },
  })
  expect(batch.status).toBe(200)
}

/** The reads a write must show at once, each with how to find the label of job-1 in its answer. */
const reads = (p: string): [string, (body: any) => string | undefined][] => [
  [`/api/v1/nodes?projectId=${p}`, (b) => b.nodes?.find((n: any) => n.id === 'job-1')?.data.label],
  [`/api/v1/tree?projectId=${p}&nodeId=approach-1&direction=down`, (b) => b.nodes?.find((n: any) => n.id === 'job-1')?.data.label],
  [`/api/v1/tree?projectId=${p}&nodeId=job-1&direction=up`, (b) => b.nodes?.[0]?.data.label],
  [`/api/v1/outline?projectId=${p}`, (b) => /\[job-1\] (marker v\d+)/.exec(b.outline ?? '')?.[1]],
  [`/api/v1/search?projectId=${p}&q=marker&mode=keyword`, (b) => b.results?.find((r: any) => r.node.id === 'job-1')?.node.data.label],
]

/**
 * `rounds` writes on `writer`, each followed at once by every read on `reader`, while a
 * background loop keeps reading on `reader` (so a stale answer, if one were kept, would be
 * there to be served). Returns the reads that did not show the write they followed.
 */
async function writeThenRead(writer: ServerProcess, reader: ServerProcess, p: string, rounds: number) {
  let stop = false
  const warm = (async () => {
    let n = 0
    while (!stop) {
      const [path] = reads(p)[n++ % reads(p).length]!
      await reader.call('GET', path)
    }
  })()
  const stale: string[] = []
  try {
    for (let i = 0; i < rounds; i++) {
      const label = `marker v${i}`
      const write = await writer.call('POST', '/api/v1/mutate', {
        body: { action: 'update', projectId: p, nodeId: 'job-1', data: { label } },
      })
      expect(write.status).toBe(200)
      // every read at once, concurrently: the write's answer has come back, so all must show it
      const answers = await Promise.all(reads(p).map(([path]) => reader.call('GET', path)))
      answers.forEach((res, k) => {
        const seen = reads(p)[k]![1](res.body)
        if (res.status !== 200 || seen !== label) stale.push(`round ${i}: ${reads(p)[k]![0]} answered ${res.status} with ${seen}`)
      })
    }
  } finally {
    stop = true
    await warm
  }
  return stale
}

describe('cached reads on one server', () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServer()
    await seed(server, 'fresh')
  })
  afterAll(() => server.close())

  it('show each of 40 writes in the very next read of every cached endpoint, under concurrent reads', async () => {
    expect(await writeThenRead(server, server, 'fresh', 40)).toEqual([])
  })

  it('answer a repeated read with the same bytes', async () => {
    const first = await fetch(`${server.url}/api/v1/nodes?projectId=fresh`, { headers: { authorization: `Bearer ${server.ownerKey}` } })
    const second = await fetch(`${server.url}/api/v1/nodes?projectId=fresh`, { headers: { authorization: `Bearer ${server.ownerKey}` } })
    expect(await second.text()).toBe(await first.text())
    expect(second.headers.get('content-type')).toBe('application/json;charset=utf-8')
  })
})

describe.skipIf(!onPostgres)('cached reads on two replicas of one PostgreSQL database', () => {
  const pair = replicas({ METRICS_TOKEN })
  beforeAll(async () => {
    await seed(pair.a, 'replicated')
  })

  it('never answer a read on one replica from before a write the other has acknowledged (40 rounds each way)', async () => {
    expect(await writeThenRead(pair.a, pair.b, 'replicated', 40)).toEqual([])
    expect(await writeThenRead(pair.b, pair.a, 'replicated', 40)).toEqual([])
  })

  it('answer repeated reads of an unchanged project from memory, without looking its revision up', async () => {
    // src/revisions/replicas.ts: once a replica holds its lease, 20 repeated reads cost no lookup
    const spent = await pair.b.until(
      async () => {
        const before = await lookups(pair.b)
        for (let i = 0; i < 20; i++) expect((await pair.b.call('GET', '/api/v1/nodes?projectId=replicated')).status).toBe(200)
        const used = (await lookups(pair.b)) - before
        return used === 0 ? 'none' : undefined
      },
      30_000,
      'repeated reads without a revision lookup',
    )
    expect(spent).toBe('none')
  })

  it('answer new search queries of an unchanged project without reading the outbox, and read it once a write is heard', async () => {
    // src/search/catch-up.ts: a replica holding its lease that heard no change of the project
    // since its index last read the outbox reads no table for a query it has not answered before
    let n = 0
    const find = (server: ServerProcess, word: string) =>
      server.call('GET', `/api/v1/search?${new URLSearchParams({ projectId: 'replicated', q: `${word} q${n++}`, mode: 'keyword' })}`)
    const spent = await pair.b.until(
      async () => {
        const before = await outboxReads(pair.b)
        for (let i = 0; i < 10; i++) expect((await find(pair.b, 'job')).status).toBe(200)
        return (await outboxReads(pair.b)) === before ? 'none' : undefined
      },
      30_000,
      'new queries without an outbox read',
    )
    expect(spent).toBe('none')
    const before = await outboxReads(pair.b)
    const write = await pair.a.call('POST', '/api/v1/mutate', {
      body: { action: 'update', projectId: 'replicated', nodeId: 'job-1', data: { label: 'zanzibar written on a' } },
    })
    expect(write.status).toBe(200)
    const found = await find(pair.b, 'zanzibar')
    expect(found.body.results.map((r: any) => r.node.id)).toEqual(['job-1'])
    expect(await outboxReads(pair.b)).toBeGreaterThan(before)
  })

  it('a frozen replica holds writes back at most its lease, and answers from the database when it runs again', async () => {
    // b keeps the answer warm, then stops dead (SIGSTOP): it can neither hear the write nor say so
    const read = async (server: ServerProcess) => reads('replicated')[0]![1]((await server.call('GET', reads('replicated')[0]![0])).body)
    for (let i = 0; i < 5; i++) await read(pair.b)
    const waitedOut = await replicaWaits(pair.a, 'waited_out')
    pair.b.proc.kill('SIGSTOP')
    try {
      const started = performance.now()
      const write = await pair.a.call('POST', '/api/v1/mutate', {
        body: { action: 'update', projectId: 'replicated', nodeId: 'job-1', data: { label: 'written while b was frozen' } },
      })
      expect(write.status).toBe(200)
      // a waited for b's lease to run out (it never heard from b), and no longer than the lease
      expect(performance.now() - started).toBeLessThan(LEASE_MS + 10_000)
      expect(await replicaWaits(pair.a, 'waited_out')).toBe(waitedOut + 1)
    } finally {
      pair.b.proc.kill('SIGCONT')
    }
    // b's first answer after it runs again already shows the write
    expect(await read(pair.b)).toBe('written while b was frozen')
    expect(await read(pair.a)).toBe('written while b was frozen')
  })
})

describe.skipIf(!onPostgres)('a replica whose database connection lags (through a proxy that holds what PostgreSQL sends it)', () => {
  let a: ServerProcess
  let b: ServerProcess
  let proxy: Awaited<ReturnType<typeof startLagProxy>>
  beforeAll(async () => {
    a = await startServer({ METRICS_TOKEN })
    const url = new URL(a.env.DATABASE_URL!)
    proxy = await startLagProxy({ host: url.hostname, port: Number(url.port || 5432) })
    url.host = `127.0.0.1:${proxy.port}`
    b = await startServer({ METRICS_TOKEN, DATABASE_URL: url.toString() }, a)
    await seed(a, 'lagging')
  })
  afterAll(async () => {
    proxy?.release()
    await b?.stop()
    await a?.close()
    await proxy?.close()
  })

  it('does not answer from memory once a write it has not heard of has answered', async () => {
    const [path, label] = reads('lagging')[0]!
    await b.until(
      async () => {
        const before = await lookups(b)
        for (let i = 0; i < 20; i++) await b.call('GET', path)
        return (await lookups(b)) === before
      },
      30_000,
      'b answering from memory',
    )
    // b hears nothing more: the write's notification, and the marker a waits on, stay in the proxy
    proxy.hold()
    let reading: Promise<string | undefined> | undefined
    try {
      const write = await a.call('POST', '/api/v1/mutate', {
        body: { action: 'update', projectId: 'lagging', nodeId: 'job-1', data: { label: 'written while b lagged' } },
      })
      expect(write.status).toBe(200)
      // the write has answered: b's next read must show it, though b has still not heard of it
      reading = b.call('GET', path).then((res) => label(res.body))
      // a fixed wait on purpose: b stays lagging this long while its read runs (the read must show the write all the same)
      await Bun.sleep(300)
    } finally {
      proxy.release()
    }
    expect(await reading).toBe('written while b lagged')
  })

  it('reads the outbox for a new search query once a write it has not heard of has answered', async () => {
    let n = 0
    const find = (word: string) =>
      b.call('GET', `/api/v1/search?${new URLSearchParams({ projectId: 'lagging', q: `${word} q${n++}`, mode: 'keyword' })}`)
    // b searches the project from memory: new queries read no table
    await b.until(
      async () => {
        const before = await outboxReads(b)
        for (let i = 0; i < 10; i++) await find('job')
        return (await outboxReads(b)) === before
      },
      30_000,
      'b searching without reading the outbox',
    )
    proxy.hold()
    let reading: Promise<string[]> | undefined
    try {
      const write = await a.call('POST', '/api/v1/mutate', {
        body: { action: 'update', projectId: 'lagging', nodeId: 'job-2', data: { label: 'quokka written while b lagged' } },
      })
      expect(write.status).toBe(200)
      // the write has answered: b's next search must find it, though b has still not heard of it
      reading = find('quokka').then((res) => res.body.results.map((r: any) => r.node.id))
      // a fixed wait on purpose: b stays lagging this long while its read runs (the read must show the write all the same)
      await Bun.sleep(300)
    } finally {
      proxy.release()
    }
    expect(await reading).toEqual(['job-2'])
  })

  it('does not let a key in from memory once its revocation has answered', async () => {
    const minted = await a.call('POST', '/api/v1/keys', { body: { label: 'revoked while b lags' } })
    expect(minted.status).toBe(201)
    const { apiKey, keyId } = minted.body
    const [path] = reads('lagging')[0]!
    // b knows the key, and answers its reads from memory
    await b.until(
      async () => {
        const before = await lookups(b)
        for (let i = 0; i < 20; i++) expect((await b.call('GET', path, { key: apiKey })).status).toBe(200)
        return (await lookups(b)) === before
      },
      30_000,
      'b answering the new key from memory',
    )
    proxy.hold()
    let reading: Promise<number> | undefined
    try {
      const revoke = await a.call('DELETE', `/api/v1/keys?keyId=${encodeURIComponent(keyId)}`)
      expect(revoke.status).toBe(200)
      // the revocation has answered: b has not heard of it, and must not let the key in
      reading = b.call('GET', path, { key: apiKey }).then((res) => res.status)
      // a fixed wait on purpose: b stays lagging this long while its read runs (the read must show the write all the same)
      await Bun.sleep(300)
    } finally {
      proxy.release()
    }
    expect(await reading).toBe(401)
  })
})

const METRICS_TOKEN = 'metrics-token-for-reads-0123'
/** arbor_replica_waits_total of `outcome` on `server` */
async function replicaWaits(server: ServerProcess, outcome: 'acknowledged' | 'waited_out'): Promise<number> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  const m = new RegExp(`^arbor_replica_waits_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(await res.text())
  return m ? Number(m[1]) : 0
}

const lookups = (server: ServerProcess) => revisionLookups(server, METRICS_TOKEN)

/** arbor_search_outbox_reads_total on `server` */
async function outboxReads(server: ServerProcess): Promise<number> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  const m = /^arbor_search_outbox_reads_total (\d+)/m.exec(await res.text())
  if (!m) throw new Error('no arbor_search_outbox_reads_total in /metrics')
  return Number(m[1])
}
