import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { replicas, type ServerProcess, startServer } from './process'

/**
 * Claims, held GET /events and the canvas's long poll through the real server process: atomic
 * claims under concurrency (and across two replicas on PostgreSQL), wake-ups as soon as a write
 * commits, the rate limit not counting waiting requests, and many held requests costing the
 * rest of the server nothing.
 */
const onPostgres = !!process.env.TEST_DATABASE_URL

/** Ten ready jobs under one approach in a new project; returns its id. */
async function tenJobs(server: ServerProcess, projectId: string): Promise<void> {
  await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: projectId, id: projectId } } })
  const res = await server.call('POST', '/api/v1/mutate', {
    body: {
      action: 'batch',
      projectId,
      mutations: [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
        { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
        ...Array.from({ length: 10 }, (_, i) => ({ action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: `J${i}` } } })),
      ],
    },
  })
  expect(res.status).toBe(200)
}

/**
 * The project's feed once it shows `count` events, for a held request's `after` (or a canvas
 * poll's revision): on PostgreSQL an event shows once every transaction older than its write has
 * ended, on the whole database server (GET /events never skips one), so under load a read right
 * after the write's answer may not show it yet (nextCursor null, or an older cursor). Polls with a
 * generous deadline; returns the page's nextCursor.
 */
async function feedShows(server: ServerProcess, projectId: string, count: number): Promise<string> {
  const page = await server.until(
    async () => {
      const res = await server.call('GET', `/api/v1/events?projectId=${projectId}&limit=500`)
      expect(res.status).toBe(200)
      return res.body.events.length >= count ? res.body : null
    },
    60_000,
    `${count} events of ${projectId} in GET /events`,
  )
  expect(page.events.length).toBe(count)
  return page.nextCursor
}

function expectTenOfFifty(answers: { status: number; body: any }[]) {
  expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200))
  const claimed = answers.flatMap((a) => a.body.claims.map((c: any) => c.nodeId))
  expect(claimed.length).toBe(10)
  expect(new Set(claimed).size).toBe(10)
  expect(answers.filter((a) => a.body.claims.length === 0).length).toBe(40)
}

/**
 * One HTTP/1.1 GET on a socket of its own (fetch caps concurrent requests per process): resolves
 * with the status and the time it took, once the server answers.
 */
function rawGet(base: string, path: string, key: string): Promise<{ status: number; ms: number; body: string }> {
  const url = new URL(base)
  const started = performance.now()
  return new Promise((resolve, reject) => {
    let text = ''
    Bun.connect({
      hostname: url.hostname,
      port: Number(url.port),
      socket: {
        open(s) {
          s.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`)
        },
        data(_s, chunk) {
          text += chunk.toString()
        },
        close() {
          const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)
          resolve({ status, ms: performance.now() - started, body: text.slice(text.indexOf('\r\n\r\n') + 4) })
        },
        error(_s, err) {
          reject(err)
        },
      },
    }).catch(reject)
  })
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!
}

async function timings(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await fn()
    out.push(performance.now() - t)
  }
  return out
}

/** Wait until the server has worked off a burst: /healthz answers within 20 ms five times in a row. */
async function settle(server: ServerProcess) {
  let fast = 0
  const end = Date.now() + 60_000
  while (fast < 5 && Date.now() < end) {
    const t = performance.now()
    await fetch(`${server.url}/healthz`).then((r) => r.text())
    fast = performance.now() - t < 20 ? fast + 1 : 0
    await Bun.sleep(50)
  }
}

const rssMb = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024)
}

describe('claims and held requests on the real server', () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it('gives 50 concurrent claims of one item each over 10 ready items 10 distinct items and 40 empty answers', async () => {
    await tenJobs(server, 'swarm')
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        server.call('POST', '/api/v1/mutate', { body: { action: 'claim', projectId: 'swarm', agent: `agent-${i}`, count: 1 } }),
      ),
    )
    expectTenOfFifty(answers)
  })

  it('answers a held GET /events as soon as a write commits, with that write', async () => {
    await tenJobs(server, 'waiting')
    const cursor = await feedShows(server, 'waiting', 13) // the batch's 13 node.added
    const held = rawGet(server.url, `/api/v1/events?projectId=waiting&after=${cursor}&wait=60`, server.ownerKey)
    // no outside signal says a request is held; one not held yet answers the write at once all the same
    await Bun.sleep(300) // the request is waiting now
    const wrote = performance.now()
    await server.call('POST', '/api/v1/mutate', {
      body: { action: 'update', projectId: 'waiting', nodeId: 'job-1', data: { status: 'done' } },
    })
    const res = await held
    const latency = performance.now() - wrote
    expect(res.status).toBe(200)
    expect(JSON.parse(res.body).events.map((e: any) => [e.event, e.node.id])).toEqual([['node.updated', 'job-1']])
    // woken by the commit, not by its 60 s timer (on PostgreSQL the event shows once every older
    // transaction on the database server has ended: under load that can take seconds)
    expect(latency).toBeLessThan(30_000)
    console.log(`held GET /events answered ${Math.round(latency)} ms after the write was sent`)
  })

  it('answers an empty page once wait passes', async () => {
    const head = await server.call('GET', '/api/v1/events?projectId=waiting&limit=500')
    const res = await rawGet(server.url, `/api/v1/events?projectId=waiting&after=${head.body.nextCursor}&wait=1`, server.ownerKey)
    expect(res.status).toBe(200)
    expect(JSON.parse(res.body)).toMatchObject({ events: [], hasMore: false })
    expect(res.ms).toBeGreaterThan(900)
  })

  it('holds 1,000 requests at once while /healthz and writes answer promptly', async () => {
    const project = 'thousand'
    await tenJobs(server, project)
    const cursor = await feedShows(server, project, 13)
    const base = {
      healthz: percentile(await timings(50, () => fetch(`${server.url}/healthz`).then((r) => r.text())), 50),
      write: percentile(
        await timings(10, () =>
          server.call('POST', '/api/v1/mutate', {
            body: { action: 'update', projectId: 'swarm', nodeId: 'job-1', data: { description: 'x' } },
          }),
        ),
        50,
      ),
    }
    const rssBefore = rssMb(server.proc.pid)
    const held = Array.from({ length: 1000 }, () =>
      rawGet(server.url, `/api/v1/events?projectId=${project}&after=${cursor}&wait=60`, server.ownerKey),
    )
    await settle(server) // every request has been read and reached the waiter list
    const healthz = await timings(100, () => fetch(`${server.url}/healthz`).then((r) => r.text()))
    const writes = await timings(10, () =>
      server.call('POST', '/api/v1/mutate', {
        body: { action: 'update', projectId: 'swarm', nodeId: 'job-1', data: { description: 'y' } },
      }),
    )
    const rssHeld = rssMb(server.proc.pid)
    // one write to the held project answers all of them
    const woke = performance.now()
    await server.call('POST', '/api/v1/mutate', {
      body: { action: 'update', projectId: project, nodeId: 'job-2', data: { status: 'done' } },
    })
    const answers = await Promise.all(held)
    const allAnswered = performance.now() - woke
    const figures = {
      unloaded: { healthzP50: +base.healthz.toFixed(1), writeP50: +base.write.toFixed(1) },
      held1000: {
        healthzP50: +percentile(healthz, 50).toFixed(1),
        healthzP99: +percentile(healthz, 99).toFixed(1),
        writeP50: +percentile(writes, 50).toFixed(1),
      },
      rssMb: { before: rssBefore, held: rssHeld },
      allAnsweredMsAfterWrite: Math.round(allAnswered),
    }
    console.log(`1,000 held GET /events: ${JSON.stringify(figures)}`)
    expect(answers.map((a) => a.status)).toEqual(Array(1000).fill(200))
    expect(answers.every((a) => JSON.parse(a.body).events.length === 1)).toBe(true)
    // generous bounds relative to the same server unloaded: held requests cost nothing per request
    expect(percentile(healthz, 50)).toBeLessThan(Math.max(20, base.healthz * 5))
    expect(percentile(writes, 50)).toBeLessThan(Math.max(200, base.write * 5))
  }, 120_000)

  it('300 held canvas long polls do not slow /healthz or writes', async () => {
    const project = 'canvas-load'
    await tenJobs(server, project)
    // the revision the page shows once the batch is readable: a poll holding an older one answers
    // as soon as the batch shows, with the new revision and no command
    const cursor = await feedShows(server, project, 13)
    const first = await server.until(
      async () => {
        const res = await server.call('GET', `/api/v1/view/commands?projectId=${project}&wait=0`)
        expect(res.status).toBe(200)
        return res.body.revision === cursor ? res : null
      },
      60_000,
      `the canvas revision ${cursor}`,
    )
    const measure = async () => ({
      healthz: percentile(await timings(50, () => fetch(`${server.url}/healthz`).then((r) => r.text())), 50),
      write: percentile(
        await timings(10, () =>
          server.call('POST', '/api/v1/mutate', {
            body: { action: 'update', projectId: 'swarm', nodeId: 'job-2', data: { description: 'z' } },
          }),
        ),
        50,
      ),
    })
    const unloaded = await measure()
    const polls = Array.from({ length: 300 }, () =>
      rawGet(server.url, `/api/v1/view/commands?projectId=${project}&wait=15000&revision=${first.body.revision}`, server.ownerKey),
    )
    await settle(server)
    const loaded = await measure()
    console.log(`300 held canvas polls: unloaded ${JSON.stringify(unloaded)}, loaded ${JSON.stringify(loaded)} (p50 ms)`)
    // a view command reaches every waiting poll at once
    const sent = await server.call('POST', '/api/v1/view-command', {
      body: { projectId: project, command: { type: 'setViewMode', mode: 'matrix' } },
    })
    expect(sent.body.success).toBe(true)
    const answers = await Promise.all(polls)
    expect(answers.map((a) => a.status)).toEqual(Array(300).fill(200))
    // how many commands each poll got: all 300 exactly the one sent
    const got: Record<number, number> = {}
    for (const a of answers) {
      const n = JSON.parse(a.body).commands.length
      got[n] = (got[n] ?? 0) + 1
    }
    expect(got).toEqual({ 1: 300 })
    expect(loaded.healthz).toBeLessThan(Math.max(20, unloaded.healthz * 5))
    expect(loaded.write).toBeLessThan(Math.max(200, unloaded.write * 5))
  }, 60_000)
})

describe('the rate limit does not count requests that wait', () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT_PER_MINUTE: '8' })
  })
  afterAll(() => server.close())

  it('lets many held GET /events through while ordinary reads are still limited', async () => {
    await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Limited', id: 'limited' } } })
    const head = await server.call('GET', '/api/v1/events?projectId=limited&limit=500')
    const after = head.body.nextCursor ?? '' // no events yet: from the start
    // 20 requests that wait: none counted
    const held = await Promise.all(
      Array.from({ length: 20 }, () => rawGet(server.url, `/api/v1/events?projectId=limited&after=${after}&wait=1`, server.ownerKey)),
    )
    expect(held.map((h) => h.status)).toEqual(Array(20).fill(200))
    // a wait that is not a wait is counted like any read (2 used so far)
    const statuses: number[] = []
    for (let i = 0; i < 7; i++) statuses.push((await server.call('GET', '/api/v1/events?projectId=limited&wait=0')).status)
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429])
    expect((await server.call('GET', '/api/v1/nodes?projectId=limited&wait=5')).status).toBe(429)
    // past the limit a waiting read is refused too: waiting is not counted, but it is no way around the limit
    expect((await rawGet(server.url, `/api/v1/events?projectId=limited&after=${after}&wait=1`, server.ownerKey)).status).toBe(429)
  })
})

describe('a waiting feed read that answers at once is counted', () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT_PER_MINUTE: '8' })
  })
  afterAll(() => server.close())

  it('limits wait=1 reads of a feed that has events to answer', async () => {
    await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Busy', id: 'busy' } } })
    await server.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId: 'busy', node: { type: 'task', data: { label: 'An event' } } },
    })
    // on PostgreSQL the event shows once every transaction older than its write has ended, on the
    // whole database server: until then a wait=1 read sleeps (not counted) and may still find the
    // event at its deadline, which would look like a read that found it at once. Wait for the
    // event to show, asking the database with GET /events' own horizon (sql/events/list-page.sql),
    // not the server: every read through it counts against the limit of 8
    if (onPostgres) {
      const { default: postgres } = await import('postgres')
      const sql = postgres(server.env.DATABASE_URL!, { max: 1, onnotice: () => {} })
      try {
        await server.until(
          async () =>
            (
              await sql`select exists (select 1 from events where project_id = 'busy' and txid < pg_snapshot_xmin(pg_current_snapshot())) as shown`
            )[0]!.shown,
          60_000,
          'the event readable by GET /events',
        )
      } finally {
        await sql.end()
      }
    }
    // 2 counted so far; a read that finds the event at once never waits and is counted, so the
    // 7th read is refused
    const seen: string[] = []
    for (let i = 0; i < 20 && seen.at(-1) !== '429'; i++) {
      const res = await rawGet(server.url, '/api/v1/events?projectId=busy&wait=1', server.ownerKey)
      seen.push(res.status === 429 ? '429' : JSON.parse(res.body).events.length ? 'at once' : 'waited')
    }
    expect(seen).toEqual(['at once', 'at once', 'at once', 'at once', 'at once', 'at once', '429'])
  })
})

describe.skipIf(!onPostgres)('two replicas on one PostgreSQL database', () => {
  const pair = replicas()

  it('gives 50 concurrent claims split over both replicas 10 distinct items and 40 empty answers', async () => {
    await tenJobs(pair.a, 'replicated')
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        (i % 2 ? pair.a : pair.b).call('POST', '/api/v1/mutate', {
          body: { action: 'claim', projectId: 'replicated', agent: `agent-${i}`, count: 1 },
        }),
      ),
    )
    expectTenOfFifty(answers)
  })

  it('passes over an item another transaction is claiming, instead of waiting for its commit', async () => {
    await tenJobs(pair.a, 'in-flight')
    const first = (await pair.a.call('GET', '/api/v1/ready?projectId=in-flight&limit=2')).body.items.map((i: any) => i.node.id)
    // a claim of the first ready job under way on a connection of our own: its advisory hold
    // and its claim row taken, its transaction not yet ended
    const { default: postgres } = await import('postgres')
    const sql = postgres(pair.a.env.DATABASE_URL!, { max: 1, onnotice: () => {} })
    let end!: () => void
    const held = new Promise<void>((resolve) => (end = resolve))
    let took!: () => void
    const taken = new Promise<void>((resolve) => (took = resolve))
    const inFlight = sql
      .begin(async (tx) => {
        await tx.unsafe(`select pg_advisory_xact_lock(hashtextextended('arbor.claim:' || $1::text || ':' || $2::text, 0))`, [
          'in-flight',
          first[0],
        ])
        await tx.unsafe(
          `insert into claims (project_id, node_id, agent, token_hash, expires_at, claimed_at, lease_seconds)
           values ($1, $2, 'slow-agent', 'in-flight-test', now() + interval '1 minute', now(), 60)`,
          ['in-flight', first[0]],
        )
        took()
        await held
        throw new Error('rolled back')
      })
      .catch(() => undefined)
    await taken
    try {
      // each replica, while that transaction is still open: the next ready job, at once
      for (const server of [pair.a, pair.b]) {
        const res = await server.call('POST', '/api/v1/mutate', {
          body: { action: 'claim', projectId: 'in-flight', agent: 'quick-agent', count: 1 },
        })
        expect(res.status).toBe(200)
        expect(res.body.claims.map((c: any) => c.nodeId)).not.toContain(first[0])
        expect(res.body.claims).toHaveLength(1)
      }
    } finally {
      end()
      await inFlight
      await sql.end()
    }
    // rolled back: the first job is ready again
    const again = await pair.b.call('POST', '/api/v1/mutate', {
      body: { action: 'claim', projectId: 'in-flight', agent: 'late', count: 1 },
    })
    expect(again.body.claims.map((c: any) => c.nodeId)).toEqual([first[0]])
  })

  it('answers a GET /events held on one replica as soon as a write commits on the other', async () => {
    // the batch's 13 node.added and the first test's 10 node.claimed, read on replica b
    const cursor = await feedShows(pair.b, 'replicated', 23)
    const held = rawGet(pair.b.url, `/api/v1/events?projectId=replicated&after=${cursor}&wait=60`, pair.b.ownerKey)
    // no outside signal says a request is held; one not held yet answers the write at once all the same
    await Bun.sleep(300)
    const wrote = performance.now()
    await pair.a.call('POST', '/api/v1/mutate', {
      body: { action: 'update', projectId: 'replicated', nodeId: 'job-3', data: { description: 'x' } },
    })
    const res = await held
    const latency = performance.now() - wrote
    expect(res.status).toBe(200)
    expect(JSON.parse(res.body).events.map((e: any) => [e.event, e.node.id])).toEqual([['node.updated', 'job-3']])
    expect(latency).toBeLessThan(30_000) // woken by the commit, not by its 60 s timer
    console.log(`GET /events held on replica b answered ${Math.round(latency)} ms after a write on replica a`)
  })
})
