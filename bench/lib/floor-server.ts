/**
 * The floor of a read: a bare Bun.serve, in its own process, that answers every request with
 * the bytes in the file `argv[2]` and the Content-Type `argv[3]` — what the real server answered
 * for that read, with nothing computed. Prints {"port": n} on stdout once listening.
 *
 *   bun bench/lib/floor-server.ts <body file> <content-type> [required <headers as JSON>]
 *
 * With `required`, it also does, for every request, the work issue 26 keeps on the request
 * path and nothing else: it reads the X-Request-Id header (a fresh UUID when there is none),
 * asks Bun for the client address, answers with the headers the real server sent with those
 * bytes (Content-Type, its own X-Request-Id, and the others given as JSON: X-Content-Type-Options,
 * and Cache-Control under /api/), and appends one JSON log line per request to stdout with
 * Arbor's own logger (src/log.ts: batched writes). Measured step by step in a bare server, that
 * log line costs next to nothing beside the client address (bench/README.md). It is the floor
 * of `GET /healthz` with its log line: how close a server that must read and log its request
 * can come to a bare hello.
 */
import { writeSync } from 'node:fs'
import { requestIdOf } from '../../src/http/request-head'
import { createLogger } from '../../src/log'

const [file, contentType, mode, extra] = process.argv.slice(2)
if (!file || !contentType) throw new Error('usage: bun bench/lib/floor-server.ts <body file> <content-type> [required <headers as JSON>]')
const others: Record<string, string> = extra ? JSON.parse(extra) : {}
// a Blob, as the real server keeps its answers: a Response shares a Blob's bytes, where it copies a Uint8Array's
const body = new Blob([await Bun.file(file).arrayBuffer()])

// the request id and the log line as the real server makes them (src/http/request-head.ts, src/log.ts)
const log = createLogger('info')

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch:
    mode === 'required'
      ? (req, srv) => {
          const started = performance.now()
          const id = requestIdOf(req.headers)
          const ip = srv.requestIP(req)?.address ?? ''
          const url = req.url
          const path = url.slice(url.indexOf('/', url.indexOf('://') + 3))
          const res = new Response(body, {
            headers: { 'content-type': contentType, 'x-request-id': id, ...others },
          })
          log.request(id, req.method, path, 200, Math.round((performance.now() - started) * 10) / 10, ip)
          return res
        }
      : () => new Response(body, { headers: { 'content-type': contentType } }),
})
// the first line of stdout: floorOf (./floor.ts) reads it from the file stdout goes to
writeSync(1, `${JSON.stringify({ port: server.port })}\n`)
