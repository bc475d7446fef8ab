import { afterAll, describe, expect, it } from 'bun:test'
import parse from 'parse-prometheus-text-format'
import { ADMIN_TOKEN, startApp } from './helpers'
import { startServer } from './process'

// docs/metrics.md: GET /metrics in the Prometheus text format, through the real server process
const METRICS_TOKEN = 'metrics-token-for-tests-0123'
const server = await startServer({ METRICS_TOKEN })
afterAll(() => server.close())

const scrape = async (token: string | null = METRICS_TOKEN) => {
  const res = await fetch(`${server.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} })
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() }
}
/** the value of one sample of a family, by its labels */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const family = parse(text).find((f) => f.name === name)
  const found = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
  return found === undefined ? undefined : Number(found.value ?? found.count)
}

describe('GET /metrics', () => {
  it('refuses a scrape without METRICS_TOKEN, or with another token', async () => {
    for (const token of [null, 'wrong-token']) {
      const res = await scrape(token)
      expect([res.status, JSON.parse(res.text)]).toEqual([
        401,
        { error: 'unauthorized', message: 'Missing or invalid metrics token (METRICS_TOKEN)', _meta: { guide: expect.any(String) } },
      ])
    }
  })

  it('counts requests by route pattern and status, never by raw path, and parses as Prometheus text', async () => {
    const p = 'metrics-p'
    expect((await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'M', id: p } } })).status).toBe(
      200,
    )
    for (let i = 0; i < 3; i++) await server.call('GET', `/api/v1/nodes?projectId=${p}`)
    await server.call('PATCH', `/admin/v1/users/usr_nobody${Math.random()}`, { key: ADMIN_TOKEN, body: { tier: 'team' } })
    await server.call('GET', `/no/such/path/${Math.random()}`)
    const res = await scrape()
    expect([res.status, res.type]).toEqual([200, 'text/plain; version=0.0.4; charset=utf-8'])
    const families = parse(res.text)
    expect(families.map((f) => f.name)).toEqual(
      expect.arrayContaining([
        'arbor_http_requests_total',
        'arbor_http_request_duration_seconds',
        'arbor_loop_runs_total',
        'arbor_webhook_deliveries',
        'arbor_search_nodes_pending_embedding',
        'arbor_db_queries_in_flight',
        'arbor_read_cache_answers_total',
        'arbor_revision_lookups_total',
        'arbor_search_outbox_reads_total',
        'process_resident_memory_bytes',
        'nodejs_eventloop_lag_seconds',
      ]),
    )
    expect(sample(res.text, 'arbor_http_requests_total', { method: 'GET', route: '/api/v1/nodes', status: '200' })).toBe(3)
    expect(sample(res.text, 'arbor_http_requests_total', { method: 'PATCH', route: '/admin/v1/users/:id', status: '404' })).toBe(1)
    expect(sample(res.text, 'arbor_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(1)
    // (the parser keeps a histogram's buckets only: its count is read from the exposition line)
    expect(res.text).toContain('arbor_http_request_duration_seconds_count{method="GET",route="/api/v1/nodes"} 3\n')
    // no label carries a raw path
    const routes = families.find((f) => f.name === 'arbor_http_requests_total')!.metrics.map((m) => m.labels!.route)
    expect(routes.filter((r) => /usr_nobody|no\/such/.test(r!))).toEqual([])
    expect(sample(res.text, 'arbor_webhook_deliveries', { state: 'pending' })).toBe(0)
    // the three reads of one unchanged project: made once, then sent again from memory
    expect(sample(res.text, 'arbor_read_cache_answers_total', { outcome: 'miss' })).toBe(1)
    expect(sample(res.text, 'arbor_read_cache_answers_total', { outcome: 'hit' })).toBe(2)
    expect(sample(res.text, 'process_resident_memory_bytes')).toBeGreaterThan(10_000_000)
  })

  it('keeps counting across scrapes: each request once, its duration in cumulative buckets', async () => {
    const before = await scrape()
    const n = sample(before.text, 'arbor_http_requests_total', { method: 'GET', route: '/readyz', status: '200' }) ?? 0
    for (let i = 0; i < 4; i++) expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
    const after = (await scrape()).text
    expect(sample(after, 'arbor_http_requests_total', { method: 'GET', route: '/readyz', status: '200' })).toBe(n + 4)
    const lines = after.split('\n').filter((l) => l.startsWith('arbor_http_request_duration_seconds') && l.includes('route="/readyz"'))
    const buckets = lines.flatMap((l) => {
      const m = /_bucket\{le="([^"]+)",method="GET",route="\/readyz"\} (\d+)$/.exec(l)
      return m ? [{ le: m[1], count: Number(m[2]) }] : []
    })
    expect(buckets.map((b) => b.le)).toEqual(['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '30', '+Inf'])
    expect(buckets.map((b) => b.count)).toEqual([...buckets.map((b) => b.count)].sort((a, b) => a - b)) // cumulative
    expect(buckets.at(-1)!.count).toBe(n + 4)
    expect(lines).toContain(`arbor_http_request_duration_seconds_count{method="GET",route="/readyz"} ${n + 4}`)
    const sum = Number(/_sum\{method="GET",route="\/readyz"\} (\S+)$/.exec(lines.find((l) => l.includes('_sum'))!)![1])
    expect(sum).toBeGreaterThan(0)
  })

  it('counts the runs of the scheduled loops', async () => {
    const runs = await server.until(async () =>
      sample((await scrape()).text, 'arbor_loop_runs_total', { loop: 'classify-tasks', outcome: 'ok' }),
    )
    expect(runs).toBeGreaterThan(0)
  })
})

describe('GET /metrics without METRICS_TOKEN', () => {
  it('answers anyone, and counts pending webhook deliveries', async () => {
    const app = await startApp({}, { loops: true })
    try {
      app.deps.config.webhookAllowInsecure = true // a receiver on this machine that no one serves: attempts fail, the delivery waits for its retry
      const p = await app.project()
      expect((await app.call('POST', '/api/v1/webhooks', { body: { projectId: p, url: 'http://127.0.0.1:9/x' } })).status).toBeLessThan(300)
      expect(
        (await app.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'G' } } } }))
          .status,
      ).toBe(200)
      const pending = async () => {
        const res = await app.handle(new Request('http://arbor.test/metrics'))
        expect(res.status).toBe(200)
        return sample(await res.text(), 'arbor_webhook_deliveries', { state: 'pending' })
      }
      const deadline = Date.now() + 30_000
      let seen = await pending()
      while (!seen && Date.now() < deadline) {
        await Bun.sleep(100)
        seen = await pending()
      }
      expect(seen).toBeGreaterThan(0)
    } finally {
      await app.close()
    }
  })
})
