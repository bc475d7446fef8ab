/**
 * A worker thread that holds `n` open `GET /api/v1/stream` (live.md, 2) on raw sockets, one
 * connection each, round-robin over `keys` (a key may hold 20), off the thread that measures.
 * Posts `{opened, statuses}` once every stream answered its headers. Told `{expect: marker}`, it
 * posts `{marker, arrivals}` once every stream has received a message containing `marker` (or
 * after `timeoutMs`): each arrival as a wall-clock time (performance.timeOrigin + now(), in ms).
 */
declare const self: Worker

export {}

interface Start {
  base: string
  keys: string[]
  path: string
  n: number
}

const streams: { tail: string; status: number }[] = []
let waiting: { marker: string; arrivals: (number | null)[]; left: number; timer: ReturnType<typeof setTimeout> } | null = null
const clock = () => performance.timeOrigin + performance.now()

function finish() {
  if (!waiting) return
  clearTimeout(waiting.timer)
  self.postMessage({ marker: waiting.marker, arrivals: waiting.arrivals })
  waiting = null
}

self.onmessage = (e: MessageEvent<Start | { expect: string; timeoutMs: number }>) => {
  if ('expect' in e.data) {
    const { expect, timeoutMs } = e.data
    waiting = { marker: expect, arrivals: streams.map(() => null), left: streams.length, timer: setTimeout(finish, timeoutMs) }
    return
  }
  const { base, keys, path, n } = e.data
  const url = new URL(base)
  let answered = 0
  const statuses: Record<number, number> = {}
  for (let i = 0; i < n; i++) {
    const s = { tail: '', status: 0 }
    streams.push(s)
    const request = `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${keys[i % keys.length]}\r\nAccept: text/event-stream\r\n\r\n`
    const answer = (status: number) => {
      if (s.status) return
      s.status = status
      statuses[status] = (statuses[status] ?? 0) + 1
      if (++answered === n) self.postMessage({ opened: n, statuses })
    }
    void Bun.connect({
      hostname: url.hostname,
      port: Number(url.port),
      socket: {
        open(sock) {
          sock.write(request)
        },
        data(_sock, chunk) {
          const text = chunk.toString()
          if (!s.status) answer(Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0))
          const w = waiting
          if (!w || w.arrivals[i] !== null) return
          // a marker may straddle two chunks: keep the end of the last one
          const seen = s.tail + text
          s.tail = text.slice(-200)
          if (seen.includes(w.marker)) {
            w.arrivals[i] = clock()
            if (--w.left === 0) finish()
          }
        },
        close: () => answer(-1),
        error: () => answer(-1),
        connectError: () => answer(-1),
      },
    }).catch(() => answer(-1))
  }
}
