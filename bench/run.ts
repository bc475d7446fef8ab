/**
 * npm run bench — the server's speed as a client sees it, every figure beside its floor from
 * the same run:
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:55432/postgres npm run bench
 *
 * For each database (PGlite under a temporary DATA_DIR; then PostgreSQL when
 * BENCH_DATABASE_URL names a server on which we may CREATE DATABASE: a database of our own is
 * created there and dropped at the end, nothing else is touched) it starts the real server
 * (`bun src/main.ts`, default settings, request logs on, rate limit off) and a webhook receiver,
 * each in its own process, and measures with wrk (its own process too):
 *   - GET /healthz: the floor of the reads (wrk -t2 -c32);
 *   - authenticated GET /api/v1/projects, and GET /api/v1/nodes of a 1,000-node project;
 *   - POST /mutate add, sequential (wrk -t1 -c1), into a project without webhooks (the floor)
 *     and into one with 10 webhooks that deliver live to the receiver;
 *   - the server's RSS once idle after start, after setup, and after everything;
 * then, on each database, `bench/import50k.ts` in its own process (its own server and database):
 * 50,000 nodes imported through HTTP, keyword search during and after the import, the time until
 * every node is embedded, and RSS at 50,000 nodes (BENCH_IMPORT_NODES for fewer).
 * ROUNDS rounds (default 5) of BENCH_SECONDS seconds (default 4) per figure, in a random order
 * within each round; a figure is the median of its rounds and every round has ≥ 200 requests
 * (a run with fewer is repeated twice as long). The server runs as shipped, its loops included:
 * the search loop indexes and embeds the nodes the writes add while the other figures run.
 * Every response must be 2xx and every delivery must arrive, or the bench fails.
 * Writes a markdown table and a JSON file under bench/results/ (gitignored) and prints both.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { loadConfig } from '../src/config'
import { rssMb } from './lib/rss'

const ROOT = join(import.meta.dir, '..')
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const PG_URL = process.env.BENCH_DATABASE_URL
const MIN_SAMPLES = 200
/** BENCH_FIGURES=write0,write10 runs only those (names: the keys of `figures` below, and import50k) */
const ONLY = process.env.BENCH_FIGURES?.split(',')
const wanted = (name: string) => !ONLY || ONLY.includes(name)
/** the checkout's sentence model: ./data/models if an earlier model:fetch put it there, else models/ beside the code */
const MODEL_DIR = loadConfig({ DATA_DIR: join(ROOT, 'data') }).embeddingsModelDir
const tmp = mkdtempSync(join(tmpdir(), 'arbor-bench-'))

if (Bun.which('wrk') === null) {
  console.error('npm run bench needs wrk (apt-get install -y wrk)')
  process.exit(2)
}

interface WrkResult {
  requests: number
  seconds: number
  rps: number
  p50: number
  p99: number
}

type WrkOpts = { threads: number; connections: number; method?: string; body?: string; key?: string }

/** One figure's run: wrk for SECONDS, longer (up to 8×) when that gave fewer than MIN_SAMPLES requests. */
async function wrk(url: string, opts: WrkOpts): Promise<WrkResult> {
  for (let seconds = SECONDS; ; seconds *= 2) {
    const r = await wrkOnce(url, opts, seconds)
    if (r.requests >= MIN_SAMPLES) return r
    if (seconds >= SECONDS * 8) throw new Error(`wrk ${url}: only ${r.requests} requests in ${seconds} s (fewer than ${MIN_SAMPLES})`)
  }
}

/** One wrk run in its own process; the Lua script reports the figures as JSON. */
async function wrkOnce(url: string, opts: WrkOpts, seconds: number): Promise<WrkResult> {
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
  const proc = Bun.spawn(['wrk', `-t${opts.threads}`, `-c${opts.connections}`, `-d${seconds}s`, '-s', lua, url], {
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
  return { requests: r.requests, seconds: r.us / 1e6, rps: r.requests / (r.us / 1e6), p50: r.p50 / 1000, p99: r.p99 / 1000 } as WrkResult
}

/** A process that prints JSON lines; `last` is the latest one. */
function spawnJsonLines(cmd: string[], env: Record<string, string>) {
  const proc = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'inherit' })
  const state = { last: {} as any, first: new Map<string, any>() }
  void (async () => {
    let rest = ''
    for await (const chunk of proc.stdout) {
      rest += new TextDecoder().decode(chunk)
      const lines = rest.split('\n')
      rest = lines.pop()!
      for (const line of lines) {
        try {
          const o = JSON.parse(line)
          state.last = o
          for (const k of Object.keys(o)) if (!state.first.has(k)) state.first.set(k, o)
        } catch {}
      }
    }
  })()
  return { proc, state }
}

async function until<T>(fn: () => T | undefined, what: string, ms = 60_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = fn()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`${what}: not within ${ms / 1000} s`)
    await Bun.sleep(20)
  }
}

/** CPU seconds (user + system) the process has used so far. */
const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** Wait until the process uses under 5% of a core over a second (setup's background work done: search indexing). */
async function quiet(pid: number, what: string) {
  const started = Date.now()
  for (;;) {
    const before = cpuSeconds(pid)
    await Bun.sleep(1000)
    if (cpuSeconds(pid) - before < 0.05) return (Date.now() - started) / 1000
    if (Date.now() - started > 900_000) throw new Error(`${what}: still busy after 15 minutes`)
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

function shuffle<T>(xs: T[]): T[] {
  const a = [...xs]
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[a[i], a[j]] = [a[j]!, a[i]!]
  }
  return a
}

/** A database of our own: a fresh DATA_DIR, or a database created on BENCH_DATABASE_URL's server. */
async function ownDatabase(kind: 'pglite' | 'postgres') {
  const dataDir = mkdtempSync(join(tmp, 'data-'))
  if (kind === 'pglite') return { env: { DATA_DIR: dataDir }, drop: async () => rmSync(dataDir, { recursive: true, force: true }) }
  const name = `arbor_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const admin = postgres(PG_URL!, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  const url = new URL(PG_URL!)
  url.pathname = `/${name}`
  return {
    env: { DATABASE_URL: url.toString(), DATA_DIR: dataDir },
    drop: async () => {
      await admin.unsafe(`drop database if exists ${name} with (force)`)
      await admin.end()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

async function benchDatabase(kind: 'pglite' | 'postgres') {
  const db = await ownDatabase(kind)
  const receiver = spawnJsonLines([process.execPath, 'bench/lib/receiver.ts'], {})
  const adminToken = `bench-${crypto.randomUUID()}`
  const logFile = join(tmp, `server-${kind}.log`)
  const server = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      HOST: '127.0.0.1',
      PORT: '0',
      RATE_LIMIT_PER_MINUTE: '0',
      WEBHOOK_ALLOW_INSECURE: 'true',
      ADMIN_TOKEN: adminToken,
      // the checkout's sentence model, as `npm start` from the checkout finds it
      ...(existsSync(MODEL_DIR) ? { EMBEDDINGS_MODEL_DIR: MODEL_DIR } : {}),
      ...db.env,
    },
    stdout: Bun.file(logFile),
    stderr: 'inherit',
  })
  try {
    const log = () => {
      try {
        return readFileSync(logFile, 'utf8').slice(0, 200_000)
      } catch {
        return ''
      }
    }
    const base = await until(() => /"msg":"listening".*?"url":"(http:\/\/[^"]+)"/.exec(log())?.[1], 'server listening')
    const key = /Arbor API key for owner: (arb_[0-9A-Za-z]+)/.exec(log())![1]!
    await quiet(server.pid, 'after start')
    const rssStart = rssMb(server.pid) // idle: started, nothing asked yet
    const port = await until(() => receiver.state.first.get('port')?.port as number | undefined, 'receiver listening')
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(base + path, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const json: any = await res.json()
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`)
      return json
    }
    const project = (id: string) => call('POST', '/api/v1/mutate', { action: 'addProject', project: { name: id, id } })
    for (const id of ['bench', 'no-hooks', 'ten-hooks', 'spare-1', 'spare-2']) await project(id)
    await call('POST', '/api/v1/mutate', {
      action: 'batch',
      projectId: 'bench',
      mutations: Array.from({ length: 1000 }, (_, i) => ({
        action: 'add',
        node: { type: 'task', data: { label: `Bench task ${i}: export the monthly invoices as a report` } },
      })),
    })
    for (let i = 0; i < 10; i++)
      await call('POST', '/api/v1/webhooks', { projectId: 'ten-hooks', url: `http://127.0.0.1:${port}/hook-${i}`, events: ['node.added'] })
    // warm-up writes: the first ones load what writes need (search and classification models)
    for (let i = 0; i < 20; i++)
      for (const projectId of ['no-hooks', 'ten-hooks'])
        await call('POST', '/api/v1/mutate', { action: 'add', projectId, node: { type: 'task', data: { label: `warm-up ${i}` } } })
    const settleSeconds = await quiet(server.pid, 'after setup')
    process.stderr.write(`(setup settled in ${settleSeconds} s) `)
    const rssSetup = rssMb(server.pid)

    let hookedWrites = 20
    const add = (projectId: string) => JSON.stringify({ action: 'add', projectId, node: { type: 'task', data: { label: 'bench write' } } })
    const figures: Record<string, () => Promise<WrkResult>> = {
      healthz: () => wrk(`${base}/healthz`, { threads: 2, connections: 32 }),
      projects: () => wrk(`${base}/api/v1/projects`, { threads: 2, connections: 32, key }),
      nodes: () => wrk(`${base}/api/v1/nodes?projectId=bench`, { threads: 2, connections: 32, key }),
      write0: () => wrk(`${base}/api/v1/mutate`, { threads: 1, connections: 1, method: 'POST', body: add('no-hooks'), key }),
      write10: async () => {
        const r = await wrk(`${base}/api/v1/mutate`, { threads: 1, connections: 1, method: 'POST', body: add('ten-hooks'), key })
        hookedWrites += r.requests
        // every delivery in before the next figure: a backlog would slow that one down
        const expected = hookedWrites * 10
        await until(() => ((receiver.state.last.received ?? 0) >= expected ? true : undefined), `${expected} deliveries`, 120_000)
        return r
      },
    }
    await figures.healthz!() // warm-up: JIT, prepared statements
    await figures.projects!()
    for (const name of Object.keys(figures)) if (!wanted(name)) delete figures[name]
    const runs = new Map<string, WrkResult[]>(Object.keys(figures).map((k) => [k, []]))
    for (let round = 0; round < ROUNDS; round++)
      for (const name of shuffle(Object.keys(figures))) {
        runs.get(name)!.push(await figures[name]!())
        process.stderr.write('.')
      }
    process.stderr.write('\n')
    const rssAfter = rssMb(server.pid)
    const fig = (name: string) => {
      const rs = runs.get(name)!
      return {
        rps: median(rs.map((r) => r.rps)),
        p50: median(rs.map((r) => r.p50)),
        p99: median(rs.map((r) => r.p99)),
        requests: rs.reduce((n, r) => n + r.requests, 0),
        rounds: rs.map((r) => ({ rps: Math.round(r.rps), p50: r.p50, p99: r.p99, requests: r.requests })),
      }
    }
    return {
      database: kind,
      figures: Object.fromEntries([...runs.keys()].map((k) => [k, fig(k)])),
      rssMb: { start: rssStart, afterSetup: rssSetup, afterLoad: rssAfter },
      deliveries: receiver.state.last.received ?? 0,
      settleSeconds,
    }
  } finally {
    server.kill('SIGTERM')
    await server.exited
    receiver.proc.kill()
    await receiver.proc.exited
    await db.drop()
  }
}

/** The 50,000-node import (bench/import50k.ts) in its own process, on its own server and database. */
async function importBench(kind: 'pglite' | 'postgres'): Promise<Import50k> {
  const nodes = process.env.BENCH_IMPORT_NODES
  const { BENCH_DATABASE_URL: _, ...env } = process.env // import50k.ts runs on PostgreSQL when it is set
  if (kind === 'postgres') env.BENCH_DATABASE_URL = PG_URL
  const proc = Bun.spawn([process.execPath, 'bench/import50k.ts', ...(nodes ? ['--nodes', nodes] : [])], {
    cwd: ROOT,
    env,
    stdout: 'ignore',
    stderr: 'inherit',
  })
  if ((await proc.exited) !== 0) throw new Error(`bench/import50k.ts on ${kind} exited ${proc.exitCode}`)
  return JSON.parse(readFileSync(join(ROOT, `bench/results/import50k-${kind}.json`), 'utf8'))
}

/** The part of bench/import50k.ts's JSON the table shows. */
interface Import50k {
  importS: number
  keyword: Record<'during' | 'after' | 'embedding', { p50: number; p99: number }>
  fullS: number
  rssMb: { embedded: number; searched: number; rested: number }
  serverOnlyRssMb: { embedded: number; searched: number; rested: number }
}

const results: (Awaited<ReturnType<typeof benchDatabase>> & { import50k?: Import50k })[] = []
const kinds = (PG_URL ? ['pglite', 'postgres'] : ['pglite']).filter(
  (k) => !process.env.BENCH_DATABASES || process.env.BENCH_DATABASES.split(',').includes(k),
) as ('pglite' | 'postgres')[]
for (const kind of kinds) {
  process.stderr.write(`${kind}: `)
  const result = await benchDatabase(kind)
  results.push(wanted('import50k') ? { ...result, import50k: await importBench(kind) } : result)
}
rmSync(tmp, { recursive: true, force: true })

const f1 = (x: number) => x.toFixed(1)
const k = (x: number) => `${(x / 1000).toFixed(1)}k`
const col = (r: (typeof results)[number]) => {
  const f = r.figures
  const h = f.healthz?.rps ?? Number.NaN
  const ran = (...names: string[]) => names.every((n) => f[n])
  return [
    ran('healthz') ? `${k(h)} req/s (floor)` : '—',
    ran('healthz', 'projects') ? `${k(f.projects!.rps)} (${(f.projects!.rps / h).toFixed(2)}×)` : '—',
    ran('healthz', 'nodes') ? `${Math.round(f.nodes!.rps)} req/s (${(f.nodes!.rps / h).toFixed(3)}×), p99 ${f1(f.nodes!.p99)} ms` : '—',
    ran('write0', 'write10')
      ? `${f.write0!.p50.toFixed(2)} ms (floor) → ${f.write10!.p50.toFixed(2)} ms (${(f.write10!.p50 / f.write0!.p50).toFixed(2)}×)`
      : '—',
    `${Math.round(r.rssMb.start)} / ${Math.round(r.rssMb.afterSetup)} / ${Math.round(r.rssMb.afterLoad)} MB`,
    ...importCells(r.import50k),
  ]
}
const importCells = (i: Import50k | undefined) => {
  if (!i) return ['—', '—', '—', '—']
  const kw = (x: { p50: number; p99: number }) => `p50 ${f1(x.p50)} ms, p99 ${f1(x.p99)} ms`
  return [
    `${i.importS.toFixed(1)} s; keyword search ${kw(i.keyword.during)}`,
    `${kw(i.keyword.after)} right after; ${kw(i.keyword.embedding)} while embedding`,
    `${i.fullS.toFixed(0)} s after the first batch`,
    `${Math.round(i.rssMb.embedded)} / ${Math.round(i.rssMb.searched)} / ${Math.round(i.rssMb.rested)} MB (server alone ${Math.round(i.serverOnlyRssMb.embedded)} / ${Math.round(i.serverOnlyRssMb.searched)} / ${Math.round(i.serverOnlyRssMb.rested)})`,
  ]
}
const rows = [
  'GET /healthz',
  'authenticated GET /api/v1/projects',
  'GET /api/v1/nodes, 1,000 nodes',
  'write p50, no webhook → 10 webhooks delivering',
  'server RSS with its model process: idle after start / after setup / after load',
  `${(Number(process.env.BENCH_IMPORT_NODES ?? 50_000)).toLocaleString('en')}-node import in batches of 1,000`,
  'keyword search after the import',
  'every node embedded for meaning',
  'RSS at that size with the model process: embedded / after searches / after an idle minute',
]
const cols = results.map(col)
const commit = Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], { cwd: ROOT }).stdout.toString().trim()
const md = [
  `wrk in its own process; reads -t2 -c32, writes -t1 -c1; ${ROUNDS} rounds × ${SECONDS} s per figure in random order, medians; commit ${commit}`,
  '',
  `| | ${results.map((r) => (r.database === 'pglite' ? 'PGlite' : 'PostgreSQL')).join(' | ')} |`,
  `|---|${results.map(() => '---').join('|')}|`,
  ...rows.map((name, i) => `| ${name} | ${cols.map((c) => c[i]).join(' | ')} |`),
].join('\n')
console.log(`\n${md}`)
const dir = join(ROOT, 'bench', 'results')
mkdirSync(dir, { recursive: true })
const stamp = new Date().toISOString().replace(/[:.]/g, '-')
writeFileSync(join(dir, `bench-${stamp}.md`), `${md}\n`)
writeFileSync(join(dir, `bench-${stamp}.json`), `${JSON.stringify({ commit, rounds: ROUNDS, seconds: SECONDS, results }, null, 2)}\n`)
console.log(`\nwritten: bench/results/bench-${stamp}.md and .json`)
