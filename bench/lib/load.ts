import type { LoadJob, LoadResult } from './load-worker'

export type { LoadResult }

/** Send `requests` GETs to `url` from `concurrency` concurrent clients in a worker thread. */
export function load(job: LoadJob): Promise<LoadResult> {
  const worker = new Worker(new URL('./load-worker.ts', import.meta.url))
  return new Promise((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<LoadResult>) => {
      worker.terminate()
      resolve(event.data)
    }
    worker.onerror = (event) => {
      worker.terminate()
      reject(new Error(`load worker failed: ${event.message}`))
    }
    worker.postMessage(job)
  })
}

export const perSecond = (r: LoadResult) => (r.requests * 1000) / r.ms

export function percentile(r: LoadResult, p: number): number {
  if (r.latencies.length === 0) return NaN
  return r.latencies[Math.min(r.latencies.length - 1, Math.floor((p / 100) * r.latencies.length))]!
}

/** Throws unless every request got `status`: a benchmark of error responses measures nothing. */
export function expectAll(r: LoadResult, status: number, what: string) {
  const bad = Object.entries(r.statuses).filter(([s]) => Number(s) !== status)
  if (bad.length) throw new Error(`${what}: expected every response to be ${status}, got ${JSON.stringify(r.statuses)}`)
}

/** The median of `xs` (numbers), for repeated rounds. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}
