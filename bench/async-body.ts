/**
 * Why GET /api/v1/nodes on PostgreSQL stays far from its floor (issue 26): a bare Bun.serve
 * answering the same bytes synchronously, and after one turn of the event loop (as a read that
 * waits for its revision lookup does), for bodies from 5 KB to the 1,000-node list's 169 KB.
 * Each row runs a server in its own process and wrk (`-t2 -c32`) against it, the two sides of a
 * size back to back, in `ROUNDS` (3) rounds of `SECONDS` (3) s; ratio = the median of the
 * rounds' ratios. One markdown table on stdout.
 *
 *   bun bench/async-body.ts            (needs wrk: apt-get install wrk)
 *   bun bench/async-body.ts serve <bytes> <sync|later>    (one server; prints {"port": n})
 *
 * Bun writes a response that completes outside the request handler's own turn without corking
 * the socket: the status line and every header's name, ": ", value and line end leave in their
 * own send() (27 of them for the four headers the API sends, against one sendmsg for a
 * synchronous answer: strace -f -c -p <pid>). Bun's pull request #41341 corks these writes.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median } from './lib/load'
import { wrk } from './lib/wrk'

const HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'x-request-id': '00000000-0000-4000-8000-000000000000',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
}

if (process.argv[2] === 'serve') {
  const body = new Uint8Array(Number(process.argv[3])).fill(0x61)
  const later = process.argv[4] === 'later'
  const answer = () => new Response(body, { headers: HEADERS })
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: later ? () => new Promise<Response>((resolve) => setImmediate(() => resolve(answer()))) : answer,
  })
  console.log(JSON.stringify({ port: server.port }))
} else {
  const ROUNDS = Number(process.env.ROUNDS ?? 3)
  const SECONDS = Number(process.env.SECONDS ?? 3)
  const tmp = mkdtempSync(join(tmpdir(), 'arbor-async-body-'))
  const measure = async (bytes: number, mode: 'sync' | 'later') => {
    const proc = Bun.spawn([process.execPath, import.meta.path, 'serve', String(bytes), mode], { stdout: 'pipe' })
    try {
      const reader = proc.stdout.getReader()
      const { value } = await reader.read()
      const { port } = JSON.parse(new TextDecoder().decode(value)) as { port: number }
      return (await wrk(`http://127.0.0.1:${port}/`, { threads: 2, connections: 32 }, SECONDS, tmp)).rps
    } finally {
      proc.kill()
      await proc.exited
    }
  }
  console.log('| body | synchronous req/s | after one event-loop turn req/s | ratio |')
  console.log('|---|---|---|---|')
  for (const bytes of [4_900, 32_000, 64_000, 172_938]) {
    const rounds: { sync: number; later: number }[] = []
    for (let r = 0; r < ROUNDS; r++) {
      const sides = Math.random() < 0.5 ? (['sync', 'later'] as const) : (['later', 'sync'] as const)
      const got = { sync: 0, later: 0 }
      for (const side of sides) got[side] = await measure(bytes, side)
      rounds.push(got)
    }
    const k = (n: number) => `${(n / 1000).toFixed(1)}k`
    console.log(
      `| ${(bytes / 1000).toFixed(1)} KB | ${k(median(rounds.map((r) => r.sync)))} | ${k(median(rounds.map((r) => r.later)))} | ${median(rounds.map((r) => r.later / r.sync)).toFixed(2)}× |`,
    )
  }
  rmSync(tmp, { recursive: true, force: true })
}
