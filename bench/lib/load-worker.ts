/**
 * The load generator, in its own thread so that the client's JSON and socket work does not
 * run on the server's event loop. `concurrency` loops share one counter and each sends its
 * next request as soon as the previous one is answered (keep-alive connections).
 */
declare const self: Worker

export interface LoadJob {
  url: string
  headers: Record<string, string>
  concurrency: number
  requests: number
}

export interface LoadResult {
  requests: number
  ms: number
  /** status code → count */
  statuses: Record<number, number>
  /** latencies in ms, sorted */
  latencies: number[]
}

self.onmessage = async (event: MessageEvent<LoadJob>) => {
  const { url, headers, concurrency, requests } = event.data
  const statuses: Record<number, number> = {}
  const latencies: number[] = []
  let next = 0
  const loop = async () => {
    while (next < requests) {
      next++
      const t0 = performance.now()
      const res = await fetch(url, { headers })
      await res.arrayBuffer()
      latencies.push(performance.now() - t0)
      statuses[res.status] = (statuses[res.status] ?? 0) + 1
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, loop))
  const ms = performance.now() - started
  latencies.sort((a, b) => a - b)
  postMessage({ requests, ms, statuses, latencies } satisfies LoadResult)
}
