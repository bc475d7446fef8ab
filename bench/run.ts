/**
 * npm run bench — every read the agents make most beside its floor, measured in one run:
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench
 *   BENCH_FIGURES=healthz,projects,nodes,tree,search BENCH_ROUNDS=3 BENCH_SECONDS=5 npm run bench
 *
 * For each database (PGlite under a temporary DATA_DIR; then PostgreSQL when BENCH_DATABASE_URL
 * names a server on which we may CREATE DATABASE: a database of our own is created there and
 * dropped at the end, nothing else is touched) it starts the real server (`bun src/main.ts`,
 * default settings, request logs on, rate limit off, the checkout's sentence model when it is
 * there) and a webhook receiver, each in its own process, and measures with wrk (its own
 * process too; reads -t2 -c32):
 *   - healthz: GET /healthz ÷ a bare Bun.serve (bench/lib/floor-server.ts, its own process)
 *     answering the same bytes; and ÷ a bare Bun.serve that also does the work every request
 *     keeps (reads X-Request-Id, asks the client address, logs one JSON line: floor-server.ts);
 *   - projects: authenticated GET /api/v1/projects ÷ GET /healthz;
 *   - nodes: GET /api/v1/nodes of a 1,000-node project ÷ a bare Bun.serve answering exactly the
 *     bytes and Content-Type the real server just gave for it (the payload floor);
 *   - tree: GET /api/v1/tree?direction=down and direction=context from a goal with 25 nodes,
 *     each ÷ its payload floor the same way; down also ÷ the same bytes from a floor that does
 *     the required work as /healthz's second floor does;
 *   - search: one repeated GET /api/v1/search on the 1,000-node project ÷ GET /healthz, and the
 *     p50/p99 of 200 new queries (each one different, one at a time) on a 10,000-node project
 *     (hybrid once every node is embedded when the model is there, else keyword);
 *   - write0, write10: POST /mutate add, sequential (wrk -t1 -c1), into a project without
 *     webhooks (the floor) and into one with 10 webhooks delivering live to the receiver;
 *   - the RSS of the server with its model process: idle after start, after setup, after the reads;
 *   - polls: /healthz and write p50, one request at a time, with no canvas page open and with 300
 *     pages' long polls held (GET /view/commands?wait=15000 on another project), each round
 *     ending with a view command that all 300 must receive (the side without polls measured
 *     first in one round and last in the next);
 *   - eval: `bench/eval-search.ts` in its own process against this server: recall@5, MRR@10 and
 *     nDCG@10 of the search dev set (../shared/eval/search-dev.json, or SEARCH_DEV_FILE; skipped
 *     when absent) beside issue 57's goals;
 *   - import50k: `bench/import50k.ts` in its own process (BENCH_IMPORT_NODES for fewer nodes);
 *   - ready: `bench/ready.ts` in its own process: GET /ready and claim count:1 p50 in a project of
 *     50,000 nodes (5,000 ready, 500 blocked) and one of 1,000, and their ratios
 *     (BENCH_READY_SAMPLES samples each, default 100);
 *   - live: `bench/live.ts` in its own process (live.md, 7): 2,000 open streams and one write
 *     reaching them all, /healthz meanwhile, memory per stream; 500 present actors over two replicas.
 * BENCH_FIGURES picks some (names above; all by default). BENCH_ROUNDS rounds (default 3) of
 * BENCH_SECONDS seconds (default 5): in each round the figures come in a random order and each
 * read's real and floor runs back to back in a random order, so load noise hits both sides; a
 * ratio is the median of its rounds' ratios. Every response must be 2xx and every delivery
 * must arrive, or the bench fails. Writes one markdown table and a JSON file under
 * bench/results/ (gitignored) and prints both.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { type Floor, floorOf } from './lib/floor'
import { listening, ownDatabase, quiet, serverEnv, spawnJsonLines, until } from './lib/harness'
import { holdPolls } from './lib/polls'
import { rssMb } from './lib/rss'
import { benchGoal, OBJECTS, pick, QUALIFIERS, reseed, SUBJECTS, tree, VERBS } from './lib/synthetic-tree'
import { type EvalSearch, type Import50k, type Row, table } from './lib/table'
import { median, shuffle, type WrkOpts, type WrkResult, wrk } from './lib/wrk'

const ROOT = join(import.meta.dir, '..')
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const PG_URL = process.env.BENCH_DATABASE_URL
const ONLY = process.env.BENCH_FIGURES?.split(',')
const wanted = (name: string) => !ONLY || ONLY.includes(name)
/** the checkout's sentence model: ./data/models if an earlier model:fetch put it there, else models/ beside the code */
const MODEL_DIR = loadConfig({ DATA_DIR: join(ROOT, 'data') }).embeddingsModelDir
const HAS_MODEL = existsSync(MODEL_DIR)
const NEW_QUERIES = 200
/** the search dev set (../shared/eval, issue 4): the `eval` figure runs bench/eval-search.ts on it */
const DEV_SET = process.env.SEARCH_DEV_FILE ?? join(ROOT, '../shared/eval/search-dev.json')
/** canvas pages whose long polls the `polls` figure holds open (issue 26, item 4) */
const POLLS = 300
const tmp = mkdtempSync(join(tmpdir(), 'arbor-bench-'))

if (Bun.which('wrk') === null) {
  console.error('npm run bench needs wrk (apt-get install -y wrk)')
  process.exit(2)
}

const READ: WrkOpts = { threads: 2, connections: 32 }
const run = (url: string, opts: WrkOpts = READ) => wrk(url, opts, SECONDS, tmp)

/** One figure measured in rounds: `real` alone, or `real` against its `floor` back to back. */
interface Figure {
  real: () => Promise<WrkResult>
  floor?: () => Promise<WrkResult>
}

async function benchDatabase(kind: 'pglite' | 'postgres') {
  const db = await ownDatabase(kind, tmp, PG_URL)
  const receiver = spawnJsonLines([process.execPath, 'bench/lib/receiver.ts'], {})
  const logFile = join(tmp, `server-${kind}.log`)
  const server = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: serverEnv({
      WEBHOOK_ALLOW_INSECURE: 'true',
      ADMIN_TOKEN: `bench-${crypto.randomUUID()}`,
      ...(HAS_MODEL ? { EMBEDDINGS_MODEL_DIR: MODEL_DIR } : {}),
      ...db.env,
    }),
    stdout: Bun.file(logFile),
    stderr: 'inherit',
  })
  const floors: Floor[] = []
  try {
    const { base, key } = await listening(logFile)
    const auth = { authorization: `Bearer ${key}` }
    await quiet(server.pid, 'after start')
    const rssStart = rssMb(server.pid) // idle: started, nothing asked yet
    const port = await until(() => receiver.state.first.get('port')?.port as number | undefined, 'receiver listening')
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(base + path, {
        method,
        headers: { ...auth, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const json: any = await res.json()
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`)
      return json
    }
    const batch = (projectId: string, nodes: ReturnType<typeof tree>) =>
      call('POST', '/api/v1/mutate', { action: 'batch', projectId, mutations: nodes.map((node) => ({ action: 'add', node })) })
    for (const id of ['bench', 'no-hooks', 'ten-hooks', 'tree', 'big', 'canvas'])
      await call('POST', '/api/v1/mutate', { action: 'addProject', project: { name: id, id } })
    await call('POST', '/api/v1/mutate', {
      action: 'batch',
      projectId: 'bench',
      mutations: Array.from({ length: 1000 }, (_, i) => ({
        action: 'add',
        node: { type: 'task', data: { label: `Bench task ${i}: export the monthly invoices as a report` } },
      })),
    })
    const goal = (await batch('tree', benchGoal())).idMap['draft-g']
    if (wanted('search')) {
      reseed(11)
      for (let b = 0; b < 10; b++)
        await batch(
          'big',
          tree(1000).map((n) => ({
            ...n,
            id: n.id.replace('draft-', `draft-b${b}-`),
            ...(n.parentId ? { parentId: n.parentId.replace('draft-', `draft-b${b}-`) } : {}),
          })),
        )
    }
    if (wanted('write10'))
      for (let i = 0; i < 10; i++)
        await call('POST', '/api/v1/webhooks', {
          projectId: 'ten-hooks',
          url: `http://127.0.0.1:${port}/hook-${i}`,
          events: ['node.added'],
        })
    // warm-up writes: the first ones load what writes need (search and classification models)
    for (let i = 0; i < 20; i++)
      for (const projectId of ['no-hooks', 'ten-hooks'])
        await call('POST', '/api/v1/mutate', { action: 'add', projectId, node: { type: 'task', data: { label: `warm-up ${i}` } } })
    // every node searchable by meaning before anything is measured (the model runs in a child process)
    const searchMode = HAS_MODEL ? 'hybrid' : 'keyword'
    if (wanted('search') && HAS_MODEL)
      await until(
        async () =>
          (await call('GET', '/api/v1/search?projectId=big&q=invoices&mode=keyword'))._meta.search.pendingNodes === 0 ? true : undefined,
        'every node embedded',
        900_000,
      )
    const settleSeconds = await quiet(server.pid, 'after setup')
    process.stderr.write(`(setup settled in ${settleSeconds} s) `)
    const rssSetup = rssMb(server.pid)

    const healthz = () => run(`${base}/healthz`)
    const floor = async (path: string, required = false) => {
      const f = await floorOf(base + path, auth, tmp, required)
      floors.push(f)
      return f
    }
    const searchPath = `/api/v1/search?projectId=bench&q=${encodeURIComponent('export the monthly invoices')}`
    const downPath = `/api/v1/tree?projectId=tree&nodeId=${goal}&direction=down`
    const contextPath = `/api/v1/tree?projectId=tree&nodeId=${goal}&direction=context`
    const authed = { ...READ, key }
    let hookedWrites = 20
    const add = (projectId: string) => JSON.stringify({ action: 'add', projectId, node: { type: 'task', data: { label: 'bench write' } } })
    const write = (projectId: string) =>
      run(`${base}/api/v1/mutate`, { threads: 1, connections: 1, method: 'POST', body: add(projectId), key })
    const figures: Record<string, Figure> = {}
    const bytes: Record<string, number> = {}
    if (wanted('healthz')) {
      const f = await floor('/healthz')
      figures.healthz = { real: healthz, floor: () => run(f.url) }
      const r = await floor('/healthz', true)
      figures.healthzRequired = { real: healthz, floor: () => run(r.url) }
    }
    if (wanted('projects')) figures.projects = { real: () => run(`${base}/api/v1/projects`, authed), floor: healthz }
    const payload = async (name: string, path: string) => {
      const f = await floor(path)
      bytes[name] = f.bytes
      figures[name] = { real: () => run(base + path, authed), floor: () => run(f.url) }
    }
    if (wanted('nodes')) await payload('nodes', '/api/v1/nodes?projectId=bench')
    if (wanted('tree')) {
      await payload('treeDown', downPath)
      await payload('treeContext', contextPath)
      // the same bytes from a floor that also does the required work (a row of its own, no goal)
      const r = await floor(downPath, true)
      bytes.treeDownRequired = r.bytes
      figures.treeDownRequired = { real: () => run(base + downPath, authed), floor: () => run(r.url) }
    }
    if (wanted('search')) figures.search = { real: () => run(base + searchPath, authed), floor: healthz }
    if (wanted('write0')) figures.write0 = { real: () => write('no-hooks') }
    if (wanted('write10'))
      figures.write10 = {
        real: async () => {
          const r = await write('ten-hooks')
          hookedWrites += r.requests
          // every delivery in before the next figure: a backlog would slow that one down
          const expected = hookedWrites * 10
          await until(() => ((receiver.state.last.received ?? 0) >= expected ? true : undefined), `${expected} deliveries`, 120_000)
          return r
        },
      }
    // warm-up: JIT, prepared statements, the first answer of each read
    for (const f of Object.values(figures)) if (f.floor) await f.real()
    const runs = new Map<string, { real: WrkResult; floor?: WrkResult }[]>(Object.keys(figures).map((k) => [k, []]))
    for (let round = 0; round < ROUNDS; round++)
      for (const name of shuffle(Object.keys(figures))) {
        const f = figures[name]!
        const sides = shuffle(f.floor ? (['real', 'floor'] as const) : (['real'] as const))
        const r: { real?: WrkResult; floor?: WrkResult } = {}
        for (const side of sides) r[side] = await f[side]!()
        runs.get(name)!.push(r as { real: WrkResult; floor?: WrkResult })
        process.stderr.write('.')
      }
    process.stderr.write('\n')

    let newQuery: { mode: string; nodes: number; p50: number; p99: number } | undefined
    if (wanted('search')) {
      reseed(5)
      const ms: number[] = []
      for (let i = 0; i < NEW_QUERIES; i++) {
        const q = `${pick(SUBJECTS)} want to ${pick(VERBS)} ${pick(OBJECTS)} ${pick(QUALIFIERS)} ${i}`
        const params = new URLSearchParams({ projectId: 'big', q, limit: '10', ...(HAS_MODEL ? {} : { mode: 'keyword' }) })
        const s = performance.now()
        const body = await call('GET', `/api/v1/search?${params}`)
        ms.push(performance.now() - s)
        if (HAS_MODEL && body._meta?.search?.semantic !== 'full') throw new Error(`hybrid search not full: ${JSON.stringify(body._meta)}`)
      }
      ms.sort((a, b) => a - b)
      newQuery = { mode: searchMode, nodes: 10_000, p50: ms[Math.floor(ms.length / 2)]!, p99: ms[Math.floor(ms.length * 0.99)]! }
    }
    const rssAfter = rssMb(server.pid)
    // search quality on the dev set, through this server (bench/eval-search.ts in its own process)
    let evalSearch: EvalSearch | undefined
    if (wanted('eval') && existsSync(DEV_SET)) {
      const out = join(tmp, `eval-${kind}.json`)
      const proc = Bun.spawn([process.execPath, 'bench/eval-search.ts', '--url', base, '--key', key, '--file', DEV_SET, '--json', out], {
        cwd: ROOT,
        stdout: 'ignore',
        stderr: 'inherit',
      })
      if ((await proc.exited) !== 0) throw new Error(`bench/eval-search.ts on ${kind} exited ${proc.exitCode}`)
      evalSearch = JSON.parse(readFileSync(out, 'utf8'))
    }

    // held long polls: what /healthz and a write cost with POLLS canvas pages open, against none
    let polls: Row['polls']
    if (wanted('polls')) {
      const p50Of = async (n: number, fn: () => Promise<unknown>) => {
        const ms: number[] = []
        for (let i = 0; i < n; i++) {
          const s = performance.now()
          await fn()
          ms.push(performance.now() - s)
        }
        return median(ms)
      }
      const measure = async () => ({
        healthz: await p50Of(300, () => fetch(`${base}/healthz`).then((r) => r.text())),
        write: await p50Of(50, () => call('POST', '/api/v1/mutate', JSON.parse(add('no-hooks')))),
      })
      const idle: { healthz: number; write: number }[] = []
      const held: { healthz: number; write: number }[] = []
      let after = 0
      // a round whose polls were not all held while it measured (the server busy for 15 s) runs again
      for (let round = 0, tries = 0; round < ROUNDS; tries++) {
        if (tries >= ROUNDS + 3) throw new Error(`held polls: only ${round} of ${tries} rounds held all ${POLLS} polls throughout`)
        await quiet(server.pid, 'before the polls')
        // every other round measures without polls after them, not before: a server that drifts
        // within a round (the model embedding the last writes) weighs on both sides alike
        const idleFirst = tries % 2 === 0
        const before = idleFirst ? await measure() : undefined
        const { revision } = await call('GET', `/api/v1/view/commands?projectId=canvas&after=${after}&wait=0`)
        const open = holdPolls(base, key, 'canvas', POLLS, after, revision)
        await until(() => (open.open === POLLS ? true : undefined), `${POLLS} polls sent`)
        await quiet(server.pid, 'polls held')
        const loaded = await measure()
        const heldThroughout = open.open === POLLS && Object.keys(open.answers.byStatus).length === 0
        const stopped = open.stop()
        const sent = await call('POST', '/api/v1/view-command', {
          projectId: 'canvas',
          command: { type: 'setViewMode', mode: tries % 2 ? 'tree' : 'matrix' },
        })
        await stopped
        after = sent.commandId
        // every poll answered with 200, and the last ones each with the command
        const statuses = Object.keys(open.answers.byStatus)
        if (statuses.length !== 1 || statuses[0] !== '200' || open.answers.withCommands !== POLLS)
          throw new Error(`held polls: ${JSON.stringify(open.answers)}`)
        if (!heldThroughout) continue
        let unloaded = before
        if (!unloaded) {
          await quiet(server.pid, 'after the polls')
          unloaded = await measure()
        }
        idle.push(unloaded)
        held.push(loaded)
        round++
        process.stderr.write('.')
      }
      polls = {
        count: POLLS,
        idle: { healthz: median(idle.map((m) => m.healthz)), write: median(idle.map((m) => m.write)) },
        held: { healthz: median(held.map((m) => m.healthz)), write: median(held.map((m) => m.write)) },
      }
    }
    const fig = (name: string) => {
      const rs = runs.get(name)!
      const floorRuns = rs.flatMap((r) => (r.floor ? [r.floor] : []))
      return {
        rps: median(rs.map((r) => r.real.rps)),
        p50: median(rs.map((r) => r.real.p50)),
        p99: median(rs.map((r) => r.real.p99)),
        ...(floorRuns.length
          ? { floorRps: median(floorRuns.map((r) => r.rps)), ratio: median(rs.map((r) => r.real.rps / r.floor!.rps)) }
          : {}),
        ...(bytes[name] !== undefined ? { bytes: bytes[name] } : {}),
        rounds: rs.map((r) => ({
          rps: Math.round(r.real.rps),
          p50: r.real.p50,
          p99: r.real.p99,
          requests: r.real.requests,
          ...(r.floor ? { floorRps: Math.round(r.floor.rps), floorRequests: r.floor.requests } : {}),
        })),
      }
    }
    return {
      database: kind,
      figures: Object.fromEntries([...runs.keys()].map((k) => [k, fig(k)])) as Record<string, ReturnType<typeof fig>>,
      newQuery,
      polls,
      evalSearch,
      rssMb: { start: rssStart, afterSetup: rssSetup, afterReads: rssAfter },
      deliveries: receiver.state.last.received ?? 0,
      settleSeconds,
    }
  } finally {
    for (const f of floors) await f.stop()
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

/** The stream and presence costs (bench/live.ts), in its own process, on the same databases: its table. */
async function liveBench(): Promise<string> {
  const proc = Bun.spawn([process.execPath, 'bench/live.ts'], { cwd: ROOT, env: process.env, stdout: 'ignore', stderr: 'inherit' })
  if ((await proc.exited) !== 0) throw new Error(`bench/live.ts exited ${proc.exitCode}`)
  return `\n\n${readFileSync(join(ROOT, 'bench/results/live.md'), 'utf8').trim()}`
}

/** What bench/ready.ts writes per database. */
interface ReadyFigures {
  db: string
  readyP50: { n1000: number; n50000: number }
  claimP50: { n1000: number; n50000: number }
  ratio: { ready: number; claim: number }
}

/** GET /ready and claim at 50,000 nodes beside 1,000 (bench/ready.ts), in its own process. */
async function readyBench(kind: 'pglite' | 'postgres'): Promise<ReadyFigures> {
  const { BENCH_DATABASE_URL: _, ...env } = process.env
  if (kind === 'postgres') env.BENCH_DATABASE_URL = PG_URL
  const samples = process.env.BENCH_READY_SAMPLES ?? '100'
  const proc = Bun.spawn([process.execPath, 'bench/ready.ts', '--only', kind, '--samples', samples], {
    cwd: ROOT,
    env,
    stdout: 'ignore',
    stderr: 'inherit',
  })
  if ((await proc.exited) !== 0) throw new Error(`bench/ready.ts on ${kind} exited ${proc.exitCode}`)
  return JSON.parse(readFileSync(join(ROOT, 'bench/results/ready.json'), 'utf8'))[0]
}

const results: Row[] = []
const readies: ReadyFigures[] = []
const kinds = (PG_URL ? ['pglite', 'postgres'] : ['pglite']).filter(
  (k) => !process.env.BENCH_DATABASES || process.env.BENCH_DATABASES.split(',').includes(k),
) as ('pglite' | 'postgres')[]
for (const kind of kinds) {
  process.stderr.write(`${kind}: `)
  const result = await benchDatabase(kind)
  results.push(wanted('import50k') ? { ...result, import50k: await importBench(kind) } : result)
  if (wanted('ready')) readies.push(await readyBench(kind))
}
rmSync(tmp, { recursive: true, force: true })
const liveMd = wanted('live') ? await liveBench() : ''

const commit = Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], { cwd: ROOT }).stdout.toString().trim()
const dirty = Bun.spawnSync(['git', 'status', '--porcelain', '--untracked-files=no', 'src'], { cwd: ROOT }).stdout.toString().trim()
const md = table(results, {
  commit: dirty ? `${commit} + uncommitted changes in src/` : commit,
  rounds: ROUNDS,
  seconds: SECONDS,
  importNodes: Number(process.env.BENCH_IMPORT_NODES ?? 50_000),
})
const readyMd = readies.length
  ? [
      '',
      '| work queues | /ready p50 1k | /ready p50 50k | ratio | claim count:1 p50 1k | 50k | ratio |',
      '|---|---|---|---|---|---|---|',
      ...readies.map(
        (r) =>
          `| ${r.db} | ${r.readyP50.n1000} ms | ${r.readyP50.n50000} ms | ${r.ratio.ready}× | ${r.claimP50.n1000} ms | ${r.claimP50.n50000} ms | ${r.ratio.claim}× |`,
      ),
    ].join('\n')
  : ''
console.log(`\n${md}${readyMd}${liveMd}`)
const dir = join(ROOT, 'bench', 'results')
mkdirSync(dir, { recursive: true })
const stamp = new Date().toISOString().replace(/[:.]/g, '-')
writeFileSync(join(dir, `bench-${stamp}.md`), `${md}${readyMd}${liveMd}\n`)
writeFileSync(
  join(dir, `bench-${stamp}.json`),
  `${JSON.stringify({ commit, rounds: ROUNDS, seconds: SECONDS, results, ready: readies }, null, 2)}\n`,
)
console.log(`\nwritten: bench/results/bench-${stamp}.md and .json`)
