/**
 * Our request logger (src/log.ts: lines buffered, one write per burst) against pino, on the
 * request path's own line: { requestId, method, path, status, ms, ip }, message "request".
 * pino is not a dependency (issue 27 asked to adopt it only if it is not slower), so the bench
 * takes the path of an install of it:
 *
 *   npm install --prefix /tmp/pino-bench pino@10.4.0
 *   bun bench/logger.ts /tmp/pino-bench/node_modules/pino [LINES] [ROUNDS]
 *   bun bench/logger.ts /tmp/pino-bench/node_modules/pino --http [SECONDS] [ROUNDS]
 *
 * --http: the real app (createApp's handle in Bun.serve, as src/main.ts serves it, on a fresh
 * PGlite) with each logger as deps.log, its stdout to a file, loaded by wrk (GET /healthz, one
 * thread, 32 connections) for SECONDS, ROUNDS times in turn; "off" is LOG_LEVEL=silent, the
 * request path without its line.
 *
 * Every variant runs in its own process, ROUNDS times in turn, writing LINES lines to a real file
 * (as a log collector's pipe or file would take them) in bursts of BURST lines per macrotask, as
 * requests arrive; the time runs until the last byte is written. pino is configured to write the
 * same line as ours (level as a word, ISO time, no pid or hostname); "pino" is its default
 * destination (synchronous, one write per line), "pino async" its buffered one
 * (pino.destination({ sync: false, minLength: 4096 })).
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../src/app'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/create-deps'
import { openDb } from '../src/db'
import { createLogger, type Logger } from '../src/log'

const BURST = 20
type Variant = 'arbor' | 'pino' | 'pino async'
const VARIANTS: Variant[] = ['arbor', 'pino', 'pino async']

type Line = (requestId: string, status: number, ms: number) => void

async function child(variant: Variant, pinoPath: string, lines: number) {
  const ids = Array.from({ length: 1024 }, () => crypto.randomUUID())
  let write: Line
  let done: () => Promise<void>
  if (variant === 'arbor') {
    const log = createLogger('info')
    write = (id, status, ms) => log.request(id, 'GET', '/api/v1/nodes', status, ms, '127.0.0.1')
    done = async () => log.flush()
  } else {
    const { default: pino } = (await import(pinoPath)) as { default: any }
    const options = {
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label: string) => ({ level: label }) },
    }
    const dest = variant === 'pino' ? pino.destination(1) : pino.destination({ dest: 1, sync: false, minLength: 4096 })
    const log = pino(options, dest)
    write = (id, status, ms) => log.info({ requestId: id, method: 'GET', path: '/api/v1/nodes', status, ms, ip: '127.0.0.1' }, 'request')
    done = async () => dest.flushSync()
  }
  const started = performance.now()
  for (let i = 0; i < lines; i++) {
    write(ids[i & 1023]!, 200, (i % 50) / 10)
    if (i % BURST === BURST - 1) await new Promise((r) => setImmediate(r))
  }
  await done()
  process.stderr.write(`${JSON.stringify({ ms: performance.now() - started })}\n`)
}

async function main(pinoPath: string, lines: number, rounds: number) {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-logbench-'))
  const results = new Map<Variant, number[]>(VARIANTS.map((v) => [v, []]))
  const sizes = new Map<Variant, number>()
  try {
    for (let r = 0; r < rounds; r++)
      for (const variant of VARIANTS) {
        const file = join(dir, `${variant.replace(' ', '-')}.log`)
        rmSync(file, { force: true }) // a fresh file each run: the child's stdout does not truncate it
        const out = Bun.file(file)
        const proc = Bun.spawn([process.execPath, import.meta.path, '--child', variant, pinoPath, String(lines)], {
          stdout: out,
          stderr: 'pipe',
        })
        const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
        if (code !== 0) throw new Error(`${variant}: exit ${code}\n${err}`)
        results.get(variant)!.push(JSON.parse(err.trim().split('\n').at(-1)!).ms)
        const text = readFileSync(file, 'utf8')
        const count = text.split('\n').length - 1
        if (count !== lines) throw new Error(`${variant}: ${count} lines written, not ${lines}`)
        if (r === 0) console.log(`${variant}: ${text.slice(0, text.indexOf('\n'))}`)
        sizes.set(variant, statSync(file).size / lines)
      }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  console.log(`\n${lines} request lines, bursts of ${BURST}, median of ${rounds} runs each\n`)
  console.log('| logger | ms | ns per line | lines per second | bytes per line |')
  console.log('|---|---|---|---|---|')
  for (const variant of VARIANTS) {
    const ms = results.get(variant)!.sort((a, b) => a - b)[Math.floor(rounds / 2)]!
    console.log(
      `| ${variant} | ${ms.toFixed(0)} | ${((ms * 1e6) / lines).toFixed(0)} | ${Math.round((lines / ms) * 1000).toLocaleString('en')} | ${sizes.get(variant)!.toFixed(0)} |`,
    )
  }
}

/** A Logger (src/log.ts's interface) writing through pino, configured for the same lines as ours. */
async function pinoLogger(pinoPath: string, buffered: boolean): Promise<Logger> {
  const { default: pino } = (await import(pinoPath)) as { default: any }
  const dest = buffered ? pino.destination({ dest: 1, sync: false, minLength: 4096 }) : pino.destination(1)
  const p = pino(
    { base: null, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label: string) => ({ level: label }) } },
    dest,
  )
  const at =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (msg: string, fields: Record<string, unknown> = {}) =>
      p[level](fields, msg)
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    request: (requestId, method, path, status, ms, ip) => p.info({ requestId, method, path, status, ms, ip }, 'request'),
    requests: true,
    flush: () => dest.flushSync(),
  }
}

type HttpVariant = Variant | 'off'

async function serve(variant: HttpVariant, pinoPath: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-logbench-data-'))
  const config = loadConfig({
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: variant === 'off' ? 'silent' : 'info',
  })
  const db = await openDb(config)
  const log = variant.startsWith('pino') ? await pinoLogger(pinoPath, variant === 'pino async') : createLogger(config.logLevel)
  const { handle } = createApp(createDeps({ config, db, log }))
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (req, srv) => handle(req, srv.requestIP(req)?.address) })
  process.stderr.write(`listening http://127.0.0.1:${server.port}\n`)
  process.once('SIGTERM', async () => {
    await server.stop(true)
    log.flush()
    await db.close()
    rmSync(dataDir, { recursive: true, force: true })
    process.exit(0)
  })
}

async function http(pinoPath: string, seconds: number, rounds: number) {
  const variants: HttpVariant[] = ['off', 'arbor', 'pino', 'pino async']
  const dir = mkdtempSync(join(tmpdir(), 'arbor-logbench-'))
  const rps = new Map<HttpVariant, number[]>(variants.map((v) => [v, []]))
  const p99 = new Map<HttpVariant, number[]>(variants.map((v) => [v, []]))
  const lines = new Map<HttpVariant, number>()
  try {
    for (let r = 0; r < rounds; r++)
      for (const variant of variants) {
        const file = join(dir, `${variant.replace(' ', '-')}.log`)
        rmSync(file, { force: true })
        const proc = Bun.spawn([process.execPath, import.meta.path, '--serve', variant, pinoPath], {
          stdout: Bun.file(file),
          stderr: 'pipe',
        })
        const reader = proc.stderr.getReader()
        let err = ''
        while (!/listening (\S+)\n/.test(err)) {
          const { value, done } = await reader.read()
          if (done) throw new Error(`${variant}: the server ended: ${err}`)
          err += new TextDecoder().decode(value)
        }
        const url = /listening (\S+)\n/.exec(err)![1]!
        const wrk = Bun.spawnSync(['wrk', '-t1', '-c32', `-d${seconds}s`, '--latency', `${url}/healthz`])
        const out = wrk.stdout.toString()
        proc.kill('SIGTERM')
        await proc.exited
        const perSecond = /Requests\/sec:\s+([\d.]+)/.exec(out)
        const tail = /99%\s+([\d.]+)(us|ms|s)/.exec(out)
        if (!perSecond || !tail) throw new Error(`${variant}: wrk said\n${out}${wrk.stderr.toString()}`)
        rps.get(variant)!.push(Number(perSecond[1]))
        p99.get(variant)!.push(Number(tail[1]) * { us: 0.001, ms: 1, s: 1000 }[tail[2] as 'us' | 'ms' | 's'])
        const total = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0)
        const written = variant === 'off' ? 0 : readFileSync(file, 'utf8').split('\n').length - 1
        if (variant !== 'off' && written < total) throw new Error(`${variant}: ${written} lines for ${total} requests`)
        lines.set(variant, written)
      }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  console.log(`\nGET /healthz, wrk -t1 -c32 -d${seconds}s, median of ${rounds} rounds each\n`)
  console.log('| request log | requests per second | p99 ms |')
  console.log('|---|---|---|')
  for (const v of variants)
    console.log(`| ${v} | ${Math.round(median(rps.get(v)!)).toLocaleString('en')} | ${median(p99.get(v)!).toFixed(2)} |`)
}

const argv = process.argv.slice(2)
if (argv[0] === '--child') await child(argv[1] as Variant, argv[2]!, Number(argv[3]))
else if (argv[0] === '--serve') await serve(argv[1] as HttpVariant, argv[2]!)
else if (argv[1] === '--http') await http(argv[0]!, Number(argv[2] ?? 10), Number(argv[3] ?? 3))
else {
  const [pinoPath, lines = '200000', rounds = '5'] = argv
  if (!pinoPath) throw new Error('usage: bun bench/logger.ts <path of an installed pino> [LINES] [ROUNDS]')
  await main(pinoPath, Number(lines), Number(rounds))
}
