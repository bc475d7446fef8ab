import { timingSafeEqual } from 'node:crypto'
import { Elysia } from 'elysia'
import type { Config } from '../config'
import { RefusalError } from '../errors'
import type { Metrics } from './service'

const same = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** GET /metrics: Prometheus text; with METRICS_TOKEN set, only for `Authorization: Bearer <METRICS_TOKEN>`. */
export const metricsRoutes = (deps: { config: Pick<Config, 'metricsToken'>; metrics: Metrics }) =>
  new Elysia({ name: 'metrics' }).get(
    '/metrics',
    async ({ headers }) => {
      const token = deps.config.metricsToken
      if (token) {
        const m = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '')
        if (!m || !same(m[1]!, token))
          throw new RefusalError(401, 'unauthorized', { message: 'Missing or invalid metrics token (METRICS_TOKEN)' })
      }
      return new Response(await deps.metrics.scrape(), { headers: { 'content-type': deps.metrics.registry.contentType } })
    },
    {
      detail: {
        summary: 'Prometheus metrics (text exposition format); protected by METRICS_TOKEN when set',
        tags: ['meta'],
        security: [],
        responses: { 200: { description: 'Prometheus text format 0.0.4', content: { 'text/plain': {} } } },
      },
    },
  )
