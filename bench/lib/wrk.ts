import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** What one wrk run measured: requests, wall seconds, req/s, latency percentiles in ms. */
export interface WrkResult {
  requests: number
  seconds: number
  rps: number
  p50: number
  p99: number
}

export type WrkOpts = { threads: number; connections: number; method?: string; body?: string; key?: string }

/** The smallest run worth a figure: a run with fewer requests is repeated twice as long (up to 8×). */
const MIN_SAMPLES = 200

/** wrk (its own process) against `url` for `seconds`, longer when that gave fewer than MIN_SAMPLES requests. */
export async function wrk(url: string, opts: WrkOpts, seconds: number, tmp: string): Promise<WrkResult> {
  for (let s = seconds; ; s *= 2) {
    const r = await wrkOnce(url, opts, s, tmp)
    if (r.requests >= MIN_SAMPLES) return r
    if (s >= seconds * 8) throw new Error(`wrk ${url}: only ${r.requests} requests in ${s} s (fewer than ${MIN_SAMPLES})`)
  }
}

/** One wrk run; its Lua script reports the figures as JSON, and any error, non-2xx answer or answer slower than 30 s fails the bench (wrk's default 2 s would count a slow answer under load as an error). */
async function wrkOnce(url: string, opts: WrkOpts, seconds: number, tmp: string): Promise<WrkResult> {
  const lua = join(tmp, `wrk-${Math.random().toString(36).slice(2)}.lua`)
  const headers = [
    opts.key ? `wrk.headers["authorization"] = "Bearer ${opts.key}"` : '',
    opts.body ? 'wrk.headers["content-type"] = "application/json"' : '',
  ]
  writeFileSync(
    lua,
    `wrk.method = "${opts.method ?? 'GET'}"
${opts.body ? `wrk.body = ${JSON.stringify(opts.body)}` : ''}
${headers.join('\n')}
done = function(summary, latency, requests)
  io.write(string.format('\\nRESULT {"requests":%d,"us":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,"p50":%d,"p99":%d}\\n',
    summary.requests, summary.duration, summary.errors.status, summary.errors.connect, summary.errors.read,
    summary.errors.write, summary.errors.timeout, latency:percentile(50), latency:percentile(99)))
end
`,
  )
  const proc = Bun.spawn(['wrk', `-t${opts.threads}`, `-c${opts.connections}`, `-d${seconds}s`, '--timeout', '30s', '-s', lua, url], {
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const out = await new Response(proc.stdout).text()
  await proc.exited
  rmSync(lua, { force: true })
  const m = /RESULT (\{.*\})/.exec(out)
  if (!m) throw new Error(`wrk gave no result:\n${out}\n${await new Response(proc.stderr).text()}`)
  const r = JSON.parse(m[1]!)
  const errors = r.status + r.connect + r.read + r.write + r.timeout
  if (errors) throw new Error(`wrk ${url}: ${errors} errors or non-2xx answers: ${m[1]}`)
  return { requests: r.requests, seconds: r.us / 1e6, rps: r.requests / (r.us / 1e6), p50: r.p50 / 1000, p99: r.p99 / 1000 }
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

export function shuffle<T>(xs: T[]): T[] {
  const a = [...xs]
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[a[i], a[j]] = [a[j]!, a[i]!]
  }
  return a
}
