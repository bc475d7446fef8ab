import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { connect, type Socket } from 'node:net'
import { type ServerProcess, startServer } from './process'

// Issue 50, 5, through the real server process and raw sockets: a request body that does not
// arrive within BODY_TIMEOUT_SECONDS of its headers (stalled, or trickling in) gets 408 and the
// connection closed; a client that goes away before its body arrived is logged once, at info
// level, never as an error-level 500 with an empty message.
const TIMEOUT_S = 2
let server: ServerProcess
beforeAll(async () => {
  server = await startServer({ BODY_TIMEOUT_SECONDS: String(TIMEOUT_S) })
})
afterAll(() => server.close())

interface Upload {
  socket: Socket
  /** resolves when the server closed the connection, with everything it sent */
  closed: Promise<string>
}

/** A POST /mutate whose headers announce `length` bytes (or chunked), of which only `first` is sent. */
function upload(requestId: string, first: string, length: number | 'chunked'): Upload {
  const { port, hostname } = new URL(server.url)
  const head = [
    'POST /api/v1/mutate HTTP/1.1',
    'Host: 127.0.0.1',
    `Authorization: Bearer ${server.ownerKey}`,
    'Content-Type: application/json',
    `X-Request-Id: ${requestId}`,
    length === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`,
  ]
  const body = length === 'chunked' ? `${first.length.toString(16)}\r\n${first}\r\n` : first
  const socket = connect(Number(port), hostname, () => socket.write(`${head.join('\r\n')}\r\n\r\n${body}`))
  const chunks: Buffer[] = []
  socket.on('data', (c: Buffer) => chunks.push(c))
  socket.on('error', () => {})
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8'))))
  return { socket, closed }
}

/** The status and JSON body of a raw HTTP/1.1 answer. */
const answer = (raw: string) => {
  const split = raw.indexOf('\r\n\r\n')
  return { status: Number(raw.slice(0, raw.indexOf('\r\n')).split(' ')[1]), body: JSON.parse(raw.slice(split + 4)) }
}

/** Waits for `p`, failing after `ms` (the server must have closed the connection by then). */
const within = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([p, Bun.sleep(ms).then(() => Promise.reject(new Error(`${what}: still open after ${ms} ms`)))])

const logLines = (requestId: string) =>
  server
    .output()
    .split('\n')
    .filter((l) => l.includes(requestId))
    .map((l) => JSON.parse(l))
    .filter((l) => l.requestId === requestId)

describe('a request body that does not arrive in time', () => {
  it(`gets 408 and the connection closed: stalled, trickling, chunked, 40 at once, while the server answers others`, async () => {
    const body = JSON.stringify({ action: 'add', projectId: 'nowhere', node: { type: 'task', data: { label: 'x'.repeat(200) } } })
    const uploads: Upload[] = []
    const trickles: ReturnType<typeof setInterval>[] = []
    for (let i = 0; i < 40; i++) {
      const kind = i % 3
      const u = upload(`slow-${i}`, body.slice(0, 10), kind === 2 ? 'chunked' : body.length)
      // one in three sends a byte every 200 ms: never silent, never done in time
      if (kind === 1) {
        let at = 10
        trickles.push(setInterval(() => u.socket.writable && at < body.length - 1 && u.socket.write(body[at++]!), 200))
      }
      uploads.push(u)
    }
    try {
      // the others are served meanwhile
      expect((await server.call('GET', '/api/v1/projects')).status).toBe(200)
      // a generous bound: the deadline is 2 s, the machine is loaded
      const answers = await within(Promise.all(uploads.map((u) => u.closed)), 60_000, 'an upload past its deadline')
      for (const [i, raw] of answers.entries()) {
        expect({ i, ...answer(raw) }).toEqual({
          i,
          status: 408,
          body: {
            error: 'request_timeout',
            message: `The request body did not arrive within ${TIMEOUT_S} seconds`,
            _meta: { _tip: expect.any(String) },
          },
        })
        expect(raw.toLowerCase()).toContain('\r\nconnection: close\r\n')
      }
      // each is logged as the 408 it got, none as an error
      for (const id of ['slow-0', 'slow-1', 'slow-2']) {
        // (the log is written out within 50 ms)
        const lines = await server.until(async () => (logLines(id).length ? logLines(id) : undefined), 30_000, `the log line of ${id}`)
        expect(lines.map((l) => [l.level, l.msg, l.status])).toEqual([['info', 'request', 408]])
      }
      expect(server.output()).not.toContain('"level":"error"')
    } finally {
      for (const t of trickles) clearInterval(t)
    }
  }, 90_000)

  it('a body that arrives whole is served as before', async () => {
    const res = await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Timely', id: 'timely' } } })
    expect(res.status).toBe(200)
  })
})

describe('a client that goes away before its body arrived', () => {
  it('is logged once, at info level, as gone: no 500, no error line', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `gone-${i}-${Math.random().toString(36).slice(2)}`)
    for (const id of ids) {
      const u = upload(id, '{"action":"add",', 500)
      await new Promise<void>((resolve) => u.socket.once('connect', () => resolve()))
      // a round trip on another connection: the server has read these headers (the request started) before the client leaves
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
      u.socket.destroy()
      await u.closed
    }
    for (const id of ids) {
      const lines = await server.until(async () => {
        const found = logLines(id)
        return found.length > 0 ? found : undefined
      }, 30_000)
      expect(lines.map((l) => [l.level, l.msg])).toEqual([['info', 'client went away before its request body arrived']])
      expect(lines[0]).toMatchObject({ method: 'POST', path: '/api/v1/mutate', requestId: id })
    }
    expect(server.output()).not.toContain('"level":"error"')
    expect(server.output()).not.toContain('"status":500')
  }, 90_000)
})
