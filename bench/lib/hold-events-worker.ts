/**
 * A worker thread that holds `n` waiting GETs (`GET /events?wait=60`, a canvas poll) on raw
 * sockets (one connection each: fetch would pool them), off the thread that measures. Posts
 * `{held}` once every request is written, then `{answered, byStatus, withEvents}` once the
 * server has answered them all; `withEvents` counts the bodies that match `match` (default: a
 * non-empty `events` array).
 */
declare const self: Worker

export {}

self.onmessage = (e: MessageEvent<{ base: string; key: string; path: string; n: number; match?: string }>) => {
  const { base, key, path, n } = e.data
  const match = new RegExp(e.data.match ?? '"events":\\[\\{')
  const url = new URL(base)
  const request = `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`
  let written = 0
  let answered = 0
  let withEvents = 0
  const byStatus: Record<number, number> = {}
  for (let i = 0; i < n; i++) {
    let text = ''
    let done = false
    const finish = () => {
      if (done) return
      done = true
      answered++
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0)
      byStatus[status] = (byStatus[status] ?? 0) + 1
      if (match.test(text)) withEvents++
      if (answered === n) self.postMessage({ answered, byStatus, withEvents })
    }
    void Bun.connect({
      hostname: url.hostname,
      port: Number(url.port),
      socket: {
        open(s) {
          s.write(request)
          if (++written === n) self.postMessage({ held: n })
        },
        data(_s, chunk) {
          text += chunk.toString()
        },
        close: finish,
        error: finish,
        connectError: finish,
      },
    }).catch(finish)
  }
}
