import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import type { Db } from '../db/port'
import { webhookDeliveryCounts } from './queries'

/**
 * The Prometheus metrics of one app (GET /metrics, docs/metrics.md), through prom-client. The
 * registry belongs to the app's deps, never to the module: two apps in one process (tests) keep
 * their counts apart. Requests are labelled by route pattern, never by raw path, so the number
 * of series stays bounded whatever clients ask for.
 */
export interface Metrics {
  readonly registry: Registry
  /** one answered request: the route is matched from the path here (`routes` gives the app's patterns) */
  request(method: string, path: string, status: number, ms: number): void
  /** one run of a scheduled loop */
  loopRun(loop: string, ms: number, ok: boolean): void
  /** the app's route patterns, once it is built (app.ts) */
  routes(list: () => { method: string; path: string }[]): void
  /** the exposition text; the process metrics (RSS, event-loop lag…) start at the first scrape */
  scrape(): Promise<string>
}

export interface MetricSources {
  db: Db
  /** nodes whose text waits for the embedder, in the indexes this process holds */
  searchPending: () => number
  /** the built-in index's reads of the events outbox since start (undefined with Meilisearch) */
  searchOutboxReads?: () => number | undefined
  /** the built-in index: how far the background re-embedding for the embedder in use is (undefined with Meilisearch) */
  searchBackfill?: () => Promise<{ embedder: string; projects: number; waiting: number; waitingNodes: number }> | undefined
  /** the read cache's counts since start (src/reads/cache.ts) */
  reads: () => { hits: number; misses: number; lookups: number }
  /** PostgreSQL: writes that waited for the other replicas (src/revisions/replicas.ts); null on PGlite */
  replicaWaits?: () => { acknowledged: number; waitedOut: number } | null
}

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
/** Distinct `method path` pairs whose route pattern is remembered (share tokens make paths unbounded). */
const MAX_MATCHED = 5_000

/** The requests of one method and route pattern, counted in plain numbers until a scrape. */
interface RequestSeries {
  method: string
  route: string
  /** status → requests not yet handed to the prom-client counter */
  unscraped: Map<number, number>
  /** requests per duration bucket (not cumulative), as DURATION_BUCKETS */
  buckets: number[]
  sum: number
  count: number
}

/**
 * arbor_http_request_duration_seconds, exposed from the plain counts of `series`: a prom-client
 * Histogram whose values are read from them at scrape time, in the shape its own export has
 * (cumulative `le` buckets, +Inf, _sum, _count per label set), instead of observed one by one.
 */
class RequestDurations extends Histogram<'method' | 'route'> {
  constructor(
    private readonly series: Map<string, RequestSeries>,
    registry: Registry,
  ) {
    super({
      name: 'arbor_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method and route pattern',
      labelNames: ['method', 'route'] as const,
      buckets: DURATION_BUCKETS,
      registers: [registry],
    })
  }

  /** What Registry.metrics() reads (prom-client's Histogram builds the same from its own map). */
  async getForPromString() {
    const name = 'arbor_http_request_duration_seconds'
    const values: { labels: Record<string, string | number>; sharedLabels: Record<string, string>; value: number; metricName: string }[] =
      []
    for (const s of this.series.values()) {
      const sharedLabels = { method: s.method, route: s.route }
      let acc = 0
      DURATION_BUCKETS.forEach((le, i) => {
        acc += s.buckets[i]!
        values.push({ labels: { le }, sharedLabels, value: acc, metricName: `${name}_bucket` })
      })
      values.push({ labels: { le: '+Inf' }, sharedLabels, value: s.count, metricName: `${name}_bucket` })
      values.push({ labels: {}, sharedLabels, value: s.sum, metricName: `${name}_sum` })
      values.push({ labels: {}, sharedLabels, value: s.count, metricName: `${name}_count` })
    }
    return { name, help: 'Time to answer an HTTP request, by method and route pattern', type: 'histogram', values, aggregator: 'sum' }
  }
}

/**
 * A counter whose totals are kept elsewhere and read at each scrape: one total, or one per
 * outcome (labelled `outcome`; none read, no series). A prom-client counter cannot be set, so it
 * is reset and counted up to the totals.
 */
function keptCounter(registry: Registry, name: string, help: string, totals: () => number | Record<string, number> | null | undefined) {
  return new Counter({
    name,
    help,
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      const read = totals()
      this.reset()
      if (typeof read === 'number') this.inc(read)
      else for (const [outcome, n] of Object.entries(read ?? {})) this.inc({ outcome }, n)
    },
  })
}

export function createMetrics(sources: MetricSources): Metrics {
  const registry = new Registry()
  // requests are counted in plain numbers (one map lookup per request) and handed to
  // prom-client only when /metrics is scraped: its labelled inc/observe hashed the labels on
  // every request, a tenth of what GET /healthz cost
  const series = new Map<string, RequestSeries>()
  // the two re-embedding gauges of one scrape share one read of the database
  let backfillRead: { at: number; read: ReturnType<NonNullable<MetricSources['searchBackfill']>> } | undefined
  const backfill = () => {
    if (!backfillRead || Date.now() - backfillRead.at > 1000) backfillRead = { at: Date.now(), read: sources.searchBackfill?.() }
    return backfillRead.read
  }
  new Counter({
    name: 'arbor_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
    collect() {
      for (const s of series.values())
        for (const [status, n] of s.unscraped) {
          this.inc({ method: s.method, route: s.route, status: String(status) }, n)
          s.unscraped.set(status, 0)
        }
    },
  })
  new RequestDurations(series, registry)
  const loopRuns = new Counter({
    name: 'arbor_loop_runs_total',
    help: 'Runs of the scheduled loops, by loop and outcome (ok, failed)',
    labelNames: ['loop', 'outcome'] as const,
    registers: [registry],
  })
  const loopDuration = new Histogram({
    name: 'arbor_loop_run_duration_seconds',
    help: 'Time one run of a scheduled loop took',
    labelNames: ['loop'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  })
  const loopLastRun = new Gauge({
    name: 'arbor_loop_last_run_timestamp_seconds',
    help: 'When each scheduled loop last finished a run (Unix time): its lag is time() minus this',
    labelNames: ['loop'] as const,
    registers: [registry],
  })
  new Gauge({
    name: 'arbor_webhook_deliveries',
    help: 'Webhook deliveries by state: pending (waiting for an attempt) and failed (given up)',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const counts = await webhookDeliveryCounts(sources.db)
      this.set({ state: 'pending' }, counts.pending)
      this.set({ state: 'failed' }, counts.failed)
    },
  })
  new Gauge({
    name: 'arbor_search_nodes_pending_embedding',
    help: 'Nodes whose text waits for the sentence embedder (they match by keyword until then)',
    registers: [registry],
    collect() {
      this.set(sources.searchPending())
    },
  })
  new Gauge({
    name: 'arbor_search_reembed_projects',
    help: 'Built-in search: projects with nodes by state of their vectors from the embedder in use: done, or waiting for the background (re-)embedding after a first start or a change of model',
    labelNames: ['state', 'embedder'] as const,
    registers: [registry],
    async collect() {
      const p = await backfill()
      if (!p) return
      this.reset()
      this.set({ state: 'done', embedder: p.embedder }, p.projects - p.waiting)
      this.set({ state: 'waiting', embedder: p.embedder }, p.waiting)
    },
  })
  new Gauge({
    name: 'arbor_search_reembed_nodes_waiting',
    help: 'Built-in search: nodes of the projects still waiting for the background (re-)embedding (they match by keyword until their project is done)',
    registers: [registry],
    async collect() {
      const p = await backfill()
      if (p) this.set(p.waitingNodes)
    },
  })
  keptCounter(
    registry,
    'arbor_search_outbox_reads_total',
    'Built-in search: reads of the events outbox to catch an index up with writes (a search of a project with no change heard reads none)',
    () => sources.searchOutboxReads?.() ?? 0,
  )
  keptCounter(
    registry,
    'arbor_read_cache_answers_total',
    'Cached project reads answered, by outcome: hit (kept bytes sent again) or miss (made again)',
    () => {
      const { hits, misses } = sources.reads()
      return { hit: hits, miss: misses }
    },
  )
  keptCounter(
    registry,
    'arbor_revision_lookups_total',
    "PostgreSQL: reads of a project's revision before a cached answer (a replica holding its lease knows it without one)",
    () => sources.reads().lookups,
  )
  keptCounter(
    registry,
    'arbor_replica_waits_total',
    'PostgreSQL: writes that waited to be heard by the other replicas, by outcome: acknowledged, or waited_out (a replica never answered)',
    () => {
      const waits = sources.replicaWaits?.()
      return waits && { acknowledged: waits.acknowledged, waited_out: waits.waitedOut }
    },
  )
  new Gauge({
    name: 'arbor_db_queries_in_flight',
    help: 'Database statements sent and not yet answered: PGlite queue, or PostgreSQL pool work',
    registers: [registry],
    collect() {
      this.set(sources.db.inFlight?.() ?? 0)
    },
  })

  let routeList: () => { method: string; path: string }[] = () => []
  let matchers: { method: string; route: string; re: RegExp }[] | null = null
  /**
   * method → path → its route's series: the matchers run once per distinct path (bounded: emptied
   * when full), and a request after that costs two map reads, no string built.
   */
  const seriesByPath = new Map<string, Map<string, RequestSeries>>()
  let pathsKnown = 0
  const seriesOf = (method: string, path: string): RequestSeries => {
    let paths = seriesByPath.get(method)
    if (!paths) seriesByPath.set(method, (paths = new Map()))
    let s = paths.get(path)
    if (s === undefined) {
      if (pathsKnown >= MAX_MATCHED) {
        for (const known of seriesByPath.values()) known.clear()
        pathsKnown = 0
      }
      const route = matchRoute(method, path)
      const key = `${method} ${route}`
      s = series.get(key)
      if (!s) series.set(key, (s = { method, route, unscraped: new Map(), buckets: DURATION_BUCKETS.map(() => 0), sum: 0, count: 0 }))
      paths.set(path, s)
      pathsKnown++
    }
    return s
  }
  const matchRoute = (method: string, path: string): string => {
    matchers ??= routeList().map((r) => ({
      method: r.method,
      route: r.path,
      // `:param` matches one segment, `*` the rest
      re: new RegExp(
        `^${r.path
          .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
          .replace(/:[^/]+/g, '[^/]+')
          .replace(/\*/g, '.*')}/?$`,
      ),
    }))
    const found = matchers.find((m) => (m.method === method || m.method === 'ALL') && m.re.test(path))
    return found?.route ?? 'unmatched'
  }
  let defaults = false

  return {
    registry,
    request(method, path, status, ms) {
      const s = seriesOf(method, path)
      s.unscraped.set(status, (s.unscraped.get(status) ?? 0) + 1)
      const seconds = ms / 1000
      s.sum += seconds
      s.count++
      for (let i = 0; i < DURATION_BUCKETS.length; i++)
        if (seconds <= DURATION_BUCKETS[i]!) {
          s.buckets[i]!++
          break
        }
    },
    loopRun(loop, ms, ok) {
      loopRuns.inc({ loop, outcome: ok ? 'ok' : 'failed' })
      loopDuration.observe({ loop }, ms / 1000)
      loopLastRun.set({ loop }, Date.now() / 1000)
    },
    routes(list) {
      routeList = list
      matchers = null
      seriesByPath.clear()
      pathsKnown = 0
    },
    async scrape() {
      if (!defaults) {
        defaults = true
        collectDefaultMetrics({ register: registry })
      }
      return registry.metrics()
    },
  }
}
