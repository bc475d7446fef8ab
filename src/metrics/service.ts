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
}

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

export function createMetrics(sources: MetricSources): Metrics {
  const registry = new Registry()
  const requests = new Counter({
    name: 'arbor_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  })
  const latency = new Histogram({
    name: 'arbor_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  })
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
    name: 'arbor_db_queries_in_flight',
    help: 'Database statements sent and not yet answered: PGlite queue, or PostgreSQL pool work',
    registers: [registry],
    collect() {
      this.set(sources.db.inFlight?.() ?? 0)
    },
  })

  let routeList: () => { method: string; path: string }[] = () => []
  let matchers: { method: string; route: string; re: RegExp }[] | null = null
  const routeOf = (method: string, path: string): string => {
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
      const route = routeOf(method, path)
      requests.inc({ method, route, status: String(status) })
      latency.observe({ method, route }, ms / 1000)
    },
    loopRun(loop, ms, ok) {
      loopRuns.inc({ loop, outcome: ok ? 'ok' : 'failed' })
      loopDuration.observe({ loop }, ms / 1000)
      loopLastRun.set({ loop }, Date.now() / 1000)
    },
    routes(list) {
      routeList = list
      matchers = null
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
