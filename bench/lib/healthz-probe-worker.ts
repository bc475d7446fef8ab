/**
 * A worker thread that asks `/healthz` on `connections` connections, each one request after
 * another, until told `stop`; then posts the latency of every request, in ms.
 */
declare const self: Worker

export {}

let stopping = false
self.onmessage = async (e: MessageEvent<{ base: string; connections: number } | 'stop'>) => {
  if (e.data === 'stop') {
    stopping = true
    return
  }
  const { base, connections } = e.data
  const times: number[] = []
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (!stopping) {
        const t = performance.now()
        await (await fetch(`${base}/healthz`)).text()
        times.push(performance.now() - t)
      }
    }),
  )
  self.postMessage({ times })
}
