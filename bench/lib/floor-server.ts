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
 * and Cache-Control under /api/), and appends one JSON log line per
 * request to stdout, written in batches (at 64 KB or 50 ms after the first line, as src/log.ts
 * does). It is the floor of `GET /healthz` with its log line: how close a server that must
 * read and log its request can come to a bare hello.
 */
import { writeSync } from 'node:fs'

const [file, contentType, mode, extra] = process.argv.slice(2)
if (!file || !contentType) throw new Error('usage: bun bench/lib/floor-server.ts <body file> <content-type> [required <headers as JSON>]')
const others: Record<string, string> = extra ? JSON.parse(extra) : {}
// a Blob, as the real server keeps its answers: a Response shares a Blob's bytes, where it copies a Uint8Array's
const body = new Blob([await Bun.file(file).arrayBuffer()])

let buffer = ''
let scheduled = false
const flush = () => {
  scheduled = false
  if (buffer) writeSync(1, buffer)
  buffer = ''
}
const logLine = (line: string) => {
  buffer += line
  if (buffer.length >= 64 * 1024) flush()
  else if (!scheduled) {
    scheduled = true
    setTimeout(flush, 50)
  }
}
const REQUEST_ID = /^[\w.:@+=/-]{1,128}$/
let lastMs = 0
let lastIso = ''
/** the ISO time, formatted once per millisecond (as src/log.ts does) */
const isoNow = () => {
  const ms = Date.now()
  if (ms !== lastMs) lastIso = new Date((lastMs = ms)).toISOString()
  return lastIso
}

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch:
    mode === 'required'
      ? (req, srv) => {
          const started = performance.now()
          const sent = req.headers.get('x-request-id')
          const id = sent && REQUEST_ID.test(sent) ? sent : crypto.randomUUID()
          const ip = srv.requestIP(req)?.address ?? ''
          const url = req.url
          const path = url.slice(url.indexOf('/', url.indexOf('://') + 3))
          const res = new Response(body, {
            headers: { 'content-type': contentType, 'x-request-id': id, ...others },
          })
          logLine(
            `{"time":"${isoNow()}","level":"info","msg":"request","requestId":"${id}","method":"${req.method}","path":${JSON.stringify(path)},"status":200,"ms":${Math.round((performance.now() - started) * 10) / 10},"ip":"${ip}"}\n`,
          )
          return res
        }
      : () => new Response(body, { headers: { 'content-type': contentType } }),
})
// the first line of stdout: floorOf (./floor.ts) reads it from the file stdout goes to
writeSync(1, `${JSON.stringify({ port: server.port })}\n`)
