/**
 * Where the server's thread spends a write (issue 51, 3): eight writers updating labels, or one
 * writer adding jobs under one approach (PROFILE_WRITE=job; PROFILE_SIBLINGS jobs added there first,
 * as `npm run bench:writes` leaves thousands there), goals (PROFILE_WRITE=goal) or tasks (PROFILE_WRITE=task),
 * or one writer sending batches of 100 jobs' adds under one approach (PROFILE_WRITE=batch), or one
 * writer deleting goals (PROFILE_WRITE=delete: PROFILE_VICTIMS leaf goals, 6,000 by default, added
 * first in batches; the writer stops early when none is left, as `npm run bench:writes` deletes a leaf goal).
 *
 *   bun bench/profile-writes.ts                          (PGlite)
 *   PROFILE_WRITE=job PROFILE_SIBLINGS=3000 PROFILE_WARMUP=8 bun bench/profile-writes.ts
 *   PROFILE_WRITE=delete bun bench/profile-writes.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/profile-writes.ts postgres
 *   BENCH_CHECKOUT=<a checkout of 26c0789> bun bench/profile-writes.ts   (another commit's server, the same load)
 *   PROFILE_EMBED=stub …          (the search embeds through bench/lib/embed-stub.ts, as `npm run bench:writes` has it)
 *   PROFILE_TARGET=floor …        (the floor, bench/lib/write-floor.ts, under the same writes: goal, task, job, update, batch, delete)
 *   PROFILE_WRITE=update PROFILE_WRITERS=1 …   (one writer updating a label; any write with N writers, each on its own goal)
 *   PROFILE_INTERVAL=200 …        (a sample every 200 µs instead of Bun's default)
 *   PROFILE_KEEP=<dir> …          (the .cpuprofile copied there, to read in a browser's tools, with its window)
 *   bun bench/profile-writes.ts --read <dir>/<file>.cpuprofile   (a kept profile's tables again)
 *   ARBOR_BENCH_NO_HISTORY=1 …    (the server without its change rows: history's share, history.md 7)
 *
 * Starts the real server (`bun --cpu-prof src/main.ts` of this checkout or BENCH_CHECKOUT) as
 * `npm run bench:writes` does (no request log, no model, rate limit off) on a database of its
 * own, makes eight goals and warms up; then eight writers update their own goal's label back to
 * back for PROFILE_SECONDS (10 by default), and the server is stopped with SIGINT. Prints the
 * writes a second, the server's main-thread CPU per write (Linux: /proc, 10 ms ticks, so read
 * it over thousands of writes), the share of the thread's samples inside PGlite (its
 * WebAssembly and its JavaScript: the SQL; on PostgreSQL the SQL runs in the server's own
 * processes and this is near 0) and the functions with the most samples, self and in their
 * stack, of the load window only; the share of them in postgres.js (the PostgreSQL protocol) and
 * in the app's own functions (src/), with those functions. On PostgreSQL, beside it, the CPU the
 * database's backends (every connection to the server's database) ran per write in the same window,
 * from /proc (the PostgreSQL server on this machine). The CPU per write is what a shared, loaded machine changes
 * least: compare it, and the shares, between commits, not the writes a second. Beside it, the
 * whole process's CPU per write (every thread: the search's embedding worker, the JIT and the
 * collector run beside the main thread and share the machine's cores with it). PROFILE_TOP sets
 * how many functions the two tables list (25 by default).
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import postgres from 'postgres'
import { ownDatabase, serverEnv, until } from './lib/harness'
import { freePort } from './lib/spawn'
import { startWritesServer } from './lib/writes-server'
import { sampleShares } from './profile'

const ROOT = join(import.meta.dir, '..')
const kind = (process.argv[2] ?? 'pglite') as 'pglite' | 'postgres'
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 10)
const WRITE = (process.env.PROFILE_WRITE ?? 'update') as 'update' | 'job' | 'task' | 'goal' | 'batch' | 'delete'
const WRITERS = Number(process.env.PROFILE_WRITERS ?? (WRITE === 'update' ? 8 : 1))
const SIBLINGS = Number(process.env.PROFILE_SIBLINGS ?? 0)
const TOP = Number(process.env.PROFILE_TOP ?? 25)
const FLOOR = process.env.PROFILE_TARGET === 'floor'

/**
 * CPU ms the process's main thread (its tid is the pid) has used, or with `all` every thread of
 * it (the HTTP and collector threads, the search's workers); NaN where /proc has no such file.
 */
function mainThreadCpuMs(pid: number, all = false): number {
  const file = all ? `/proc/${pid}/stat` : `/proc/${pid}/task/${pid}/stat`
  if (!existsSync(file)) return Number.NaN
  const fields = readFileSync(file, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/**
 * CPU ns each PostgreSQL backend connected to the database of `url` has run so far, by pid, with
 * its connection's application_name (the server's pools: `arbor` the requests', `arbor-background`
 * the loops', `arbor-listen` its LISTEN connection; /proc/<pid>/schedstat: the server must run on
 * this machine, readable by this user).
 */
async function backendsNs(url: string): Promise<Map<number, { name: string; ns: number }>> {
  const admin = postgres(url, { max: 1, onnotice: () => {} })
  try {
    const db = new URL(url).pathname.slice(1)
    const rows = await admin<{ pid: number; name: string }[]>`
      select pid, application_name as name from pg_stat_activity where datname = ${db} and pid <> pg_backend_pid()`
    const out = new Map<number, { name: string; ns: number }>()
    for (const { pid, name } of rows) {
      const file = `/proc/${pid}/schedstat`
      if (existsSync(file)) out.set(pid, { name: name || '(no name)', ns: Number(readFileSync(file, 'utf8').split(' ')[0]) })
    }
    return out
  } finally {
    await admin.end()
  }
}

async function main() {
  // --read <a .cpuprofile kept with PROFILE_KEEP>: its tables again, over the window kept beside it
  if (process.argv[2] === '--read') {
    const file = process.argv[3]!
    const window = JSON.parse(readFileSync(`${file}.window.json`, 'utf8')) as { fromEndUs: number; untilEndUs: number }
    console.log(sampleReport(JSON.parse(readFileSync(file, 'utf8')), window.fromEndUs, window.untilEndUs))
    return
  }
  if (kind !== 'pglite' && kind !== 'postgres') {
    console.error('usage: bun bench/profile-writes.ts [pglite|postgres]')
    process.exit(2)
  }
  if (kind === 'postgres' && !process.env.BENCH_DATABASE_URL) {
    console.error('postgres needs BENCH_DATABASE_URL (a server on which we may CREATE DATABASE)')
    process.exit(2)
  }
  const checkout = process.env.BENCH_CHECKOUT ?? ROOT
  const tmp = mkdtempSync(join(tmpdir(), 'arbor-profile-writes-'))
  const db = await ownDatabase(kind, tmp, process.env.BENCH_DATABASE_URL)
  // a delete's profile always embeds through the stub: its thousands of victims' labels would keep
  // the built-in embedder busy all through the window
  const stub = process.env.PROFILE_EMBED === 'stub' || WRITE === 'delete' ? await startStub() : null
  const embedder = stub ? { EMBEDDINGS_URL: stub.url, EMBEDDINGS_MODEL: 'stub' } : {}
  const profiling = [
    '--cpu-prof',
    `--cpu-prof-dir=${tmp}`,
    ...(process.env.PROFILE_INTERVAL ? [`--cpu-prof-interval=${process.env.PROFILE_INTERVAL}`] : []),
  ]
  const { server, call: appCall } = FLOOR
    ? await startFloor(db.env, profiling)
    : await startWritesServer(
        checkout,
        // ARBOR_BENCH_NO_HISTORY=1 in this process's environment: the server records no change rows
        { ...db.env, ...embedder, ...(process.env.ARBOR_BENCH_NO_HISTORY ? { ARBOR_BENCH_NO_HISTORY: '1' } : {}) },
        tmp,
        profiling,
      )
  // the floor takes the app's mutate bodies translated to its own (op, type, parentId, nodeId, label)
  const call = FLOOR ? (body: Record<string, any>) => appCall(floorBody(body)) : appCall
  try {
    await call({ action: 'addProject', project: { id: 'bench', name: 'bench' } })
    const goals: string[] = []
    for (let i = 0; i < WRITERS; i++)
      goals.push((await call({ action: 'add', projectId: 'bench', node: { type: 'goal', data: { label: `g${i}` } } })).node.id)
    const need = async () => {
      const n = (await call({ action: 'add', projectId: 'bench', node: { type: 'need', parentId: goals[0], data: { label: 'n' } } })).node
        .id
      return (await call({ action: 'add', projectId: 'bench', node: { type: 'approach', parentId: n, data: { label: 'a' } } })).node
        .id as string
    }
    const underApproach = WRITE === 'job' || WRITE === 'batch'
    const approach = underApproach ? await need() : ''
    for (let made = 0; underApproach && made < SIBLINGS; made += 500)
      await call({
        action: 'batch',
        projectId: 'bench',
        mutations: Array.from({ length: Math.min(500, SIBLINGS - made) }, (_, i) => ({
          action: 'add',
          node: { type: 'job', parentId: approach, data: { label: `s${made + i}` } },
        })),
      })
    const victims: string[] = []
    for (let left = WRITE === 'delete' ? Number(process.env.PROFILE_VICTIMS ?? 6000) : 0; left > 0; left -= 500) {
      const made = await call({
        action: 'batch',
        projectId: 'bench',
        mutations: Array.from({ length: Math.min(500, left) }, (_, i) => ({
          action: 'add',
          node: { type: 'goal', data: { label: `v${left} ${i}` } },
        })),
      })
      victims.push(...(made.results as { node: { id: string } }[]).map((r) => r.node.id))
    }
    let k = 0
    const write = (nodeId: string) =>
      WRITE === 'update'
        ? call({ action: 'update', projectId: 'bench', nodeId, data: { label: `u${++k}` } })
        : WRITE === 'batch'
          ? call({
              action: 'batch',
              projectId: 'bench',
              mutations: Array.from({ length: 100 }, (_, i) => ({
                action: 'add',
                node: { type: 'job', parentId: approach, data: { label: `b${++k} ${i}` } },
              })),
            })
          : call({
              action: 'add',
              projectId: 'bench',
              node: { type: WRITE, ...(WRITE === 'job' ? { parentId: approach } : {}), data: { label: `x${++k}` } },
            })
    const remove = () => call({ action: 'delete', projectId: 'bench', nodeId: victims.pop() })
    const writers = async (seconds: number) => {
      const end = performance.now() + seconds * 1000
      let writes = 0
      await Promise.all(
        goals.map(async (nodeId) => {
          while (performance.now() < end && (WRITE !== 'delete' || victims.length > 0)) {
            await (WRITE === 'delete' ? remove() : write(nodeId))
            writes++
          }
        }),
      )
      return writes
    }
    await writers(Number(process.env.PROFILE_WARMUP ?? 2)) // warm-up: the code compiled, the search index and the embedder loaded
    const pgUrl = db.env.DATABASE_URL
    const backendsBefore = pgUrl ? await backendsNs(pgUrl) : null
    const cpuBefore = mainThreadCpuMs(server.pid)
    const allBefore = mainThreadCpuMs(server.pid, true)
    const started = performance.now()
    const writes = await writers(SECONDS)
    const ended = performance.now()
    const cpu = mainThreadCpuMs(server.pid) - cpuBefore
    const cpuAll = mainThreadCpuMs(server.pid, true) - allBefore
    // the backends' CPU over the window: those there before by their difference, new ones whole
    const backendsAfter = pgUrl ? await backendsNs(pgUrl) : null
    const byName = new Map<string, number>()
    for (const [pid, { name, ns }] of backendsAfter ?? [])
      byName.set(name, (byName.get(name) ?? 0) + (ns - (backendsBefore?.get(pid)?.ns ?? 0)) / 1e6)
    const backendsMs = backendsAfter ? [...byName.values()].reduce((a, b) => a + b, 0) : Number.NaN
    server.kill(FLOOR ? 'SIGTERM' : 'SIGINT')
    await server.exited
    const exited = performance.now()
    const file = readdirSync(tmp).find((f) => f.endsWith('.cpuprofile'))
    if (!file) throw new Error('the server wrote no .cpuprofile')
    if (process.env.PROFILE_KEEP) {
      // made when missing: a run that ends without its profile loses the whole run
      mkdirSync(process.env.PROFILE_KEEP, { recursive: true })
      copyFileSync(join(tmp, file), join(process.env.PROFILE_KEEP, file))
    }
    const profile = JSON.parse(readFileSync(join(tmp, file), 'utf8'))
    const window = { fromEndUs: (exited - started) * 1000, untilEndUs: (exited - ended) * 1000 }
    if (process.env.PROFILE_KEEP) writeFileSync(join(process.env.PROFILE_KEEP, `${file}.window.json`), JSON.stringify(window))
    const { samples } = sampleShares(profile, window.fromEndUs, window.untilEndUs)
    const load = existsSync('/proc/loadavg') ? readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ') : '?'
    console.log(
      `## ${WRITE === 'update' ? `${WRITERS === 1 ? 'one writer' : `${WRITERS} writers`} updating labels` : WRITE === 'delete' ? 'one writer deleting leaf goals' : `one writer adding ${WRITE === 'batch' ? 'batches of 100 jobs' : `${WRITE}s`}${underApproach ? ` beside ${SIBLINGS} jobs` : ''}`}, ${kind === 'pglite' ? 'PGlite' : 'PostgreSQL'}, ${checkout === ROOT ? 'this checkout' : checkout}: ` +
        `${FLOOR ? 'the floor (bench/lib/write-floor.ts), ' : ''}${Math.round(writes / ((ended - started) / 1000))} writes/s, main thread ${(cpu / writes).toFixed(2)} ms CPU a write ` +
        `(all threads ${(cpuAll / writes).toFixed(2)} ms)${pgUrl ? `, PostgreSQL's backends ${(backendsMs / writes).toFixed(2)} ms CPU a write` : ''}, ` +
        `${samples} samples in ${SECONDS} s (load average ${load})\n`,
    )
    if (backendsAfter)
      console.log(
        `PostgreSQL's backends by connection, CPU ms a write: ${[...byName]
          .sort((a, b) => b[1] - a[1])
          .map(([name, ms]) => `${name} ${(ms / writes).toFixed(3)}`)
          .join(', ')}\n`,
      )
    console.log(sampleReport(profile, window.fromEndUs, window.untilEndUs))
  } finally {
    if (server.exitCode === null) {
      server.kill('SIGKILL')
      await server.exited
    }
    stub?.proc.kill()
    await db.drop()
    rmSync(tmp, { recursive: true, force: true })
  }
}

/**
 * The tables of a profile's samples from `fromEndUs` to `untilEndUs` before its end: the shares in
 * the database, the app and the runtime, the app's functions, the top functions self and total.
 */
function sampleReport(profile: any, fromEndUs: number, untilEndUs: number): string {
  const { samples, self, total } = sampleShares(profile, fromEndUs, untilEndUs)
  // a sample is the SQL's when PGlite's code or WebAssembly is on its stack ('(unknown)': WebAssembly without a caller)
  const inPglite = [...self].reduce((n, [f, c]) => n + (/pglite|wasm|^`\(unknown\)`/.test(f) ? c : 0), 0)
  const places = placeShares(profile, fromEndUs, untilEndUs)
  const share = (prefix: string) => [...places].reduce((n, [p, c]) => n + (p.startsWith(prefix) ? c : 0), 0)
  const [inDatabase, underApp] = [share('database'), share('app')]
  // the app's own functions (src/ but src/db/), by their own samples, and summed by folder
  const appOwn = [...self].filter(([f]) => / src\//.test(f) && !/ src\/db\//.test(f))
  const inApp = appOwn.reduce((n, [, c]) => n + c, 0)
  const byFolder = new Map<string, number>()
  for (const [f, c] of appOwn) {
    const folder = / (src\/[^/:]+)/.exec(f)![1]!.replace(/\.ts$/, '')
    byFolder.set(folder, (byFolder.get(folder) ?? 0) + c)
  }
  const sqlStack = total.get([...total.keys()].find((f) => f.startsWith('`execProtocolRawSync`')) ?? '') ?? 0
  const rows = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP)
      .map(([f, n]) => `| ${((100 * n) / samples).toFixed(1)}% | ${f} |`)
      .join('\n')
  return [
    `Samples inside PGlite (self): ${((100 * inPglite) / samples).toFixed(1)}%; under PGlite's execProtocolRawSync (our prepared statements): ${((100 * sqlStack) / samples).toFixed(1)}%; ` +
      `in the database or its protocol (PGlite, postgres.js, src/db/ innermost): ${((100 * inDatabase) / samples).toFixed(1)}%; ` +
      `in the app's code (src/ innermost, Bun's built-ins it calls included): ${((100 * underApp) / samples).toFixed(1)}%; Bun's HTTP and runtime: ${((100 * (samples - inDatabase - underApp)) / samples).toFixed(1)}%; ` +
      `in the app's own functions (src/ but src/db/, self): ${((100 * inApp) / samples).toFixed(1)}%\n`,
    `| samples | where (a database sample by the folder of src/ that sent its statement, when that is on the stack) |\n|---|---|\n${rows(places)}\n`,
    `| self | the app's own functions by folder |\n|---|---|\n${rows(byFolder)}\n`,
    `| self | the app's own function |\n|---|---|\n${rows(new Map(appOwn))}\n`,
    `| self | function |\n|---|---|\n${rows(self)}\n`,
    `| total | function |\n|---|---|\n${rows(total)}`,
  ].join('\n')
}

/** a frame of the database or its protocol: PGlite (its JavaScript and WebAssembly), postgres.js, src/db/ */
const DATABASE = /pglite|wasm|node_modules\/postgres\/| src\/db\//
/** a frame of the app's own code: src/ (src/db/ is the database's, above) */
const APP = / src\/([^/:]+)/

/**
 * The window's samples (as sampleShares takes it), each put where its innermost frame of the
 * database or the app is: `database <folder>` (the folder of src/ that sent the statement: the
 * innermost app frame further out), `app <folder>` (the app's JavaScript, with Bun's built-ins it
 * calls), or `runtime` (neither on the stack: Bun's HTTP, timers, the collector).
 */
function placeShares(profile: any, fromEndUs: number, untilEndUs: number): Map<string, number> {
  const byId = new Map<number, any>(profile.nodes.map((n: any) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const frame = (id: number) => {
    const { functionName, url } = byId.get(id).callFrame
    return `${functionName} ${String(url).replace(`file://${ROOT}/`, ' ')}`
  }
  const placeOf = (id: number) => {
    let inDatabase = false
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const f = frame(n)
      if (DATABASE.test(f)) inDatabase = true
      else {
        const app = APP.exec(f)
        if (app) return `${inDatabase ? 'database' : 'app'} src/${app[1]!.replace(/\.ts$/, '')}`
      }
    }
    return inDatabase ? 'database (no caller of src/ on the stack)' : 'runtime'
  }
  const place = new Map<number, string>()
  let t = profile.startTime
  const times = (profile.timeDeltas as number[]).map((d) => (t += d))
  const end = times.at(-1) ?? t
  const counts = new Map<string, number>()
  profile.samples.forEach((id: number, i: number) => {
    const at = times[i]!
    if (at < end - fromEndUs || at > end - untilEndUs) return
    if (!place.has(id)) place.set(id, placeOf(id))
    const p = place.get(id)!
    counts.set(p, (counts.get(p) ?? 0) + 1)
  })
  return counts
}

type Started = { server: Subprocess<'ignore', 'pipe', 'inherit'>; call: (body: Record<string, any>) => Promise<Record<string, any>> }

/** A process started with `args` that prints "listening <url>" on stdout once it serves. */
async function startListening(args: string[], env: Record<string, string | undefined>) {
  const proc: Subprocess<'ignore', 'pipe', 'inherit'> = Bun.spawn([process.execPath, ...args], {
    cwd: ROOT,
    env: serverEnv(env),
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'inherit',
  })
  let out = ''
  void (async () => {
    for await (const chunk of proc.stdout) out += new TextDecoder().decode(chunk)
  })()
  const url = await until(() => /listening (http:\/\/\S+)/.exec(out)?.[1], args.at(-1)!, 120_000)
  return { proc, url }
}

const startStub = () => startListening(['bench/lib/embed-stub.ts'], { PORT: '0' })

/** The floor (bench/lib/write-floor.ts) on the database `env` names, with `call` posting its bodies. */
async function startFloor(env: Record<string, string | undefined>, bunArgs: string[]): Promise<Started> {
  const { proc, url } = await startListening([...bunArgs, 'bench/lib/write-floor.ts'], {
    ...(env.DATABASE_URL ? { DATABASE_URL: env.DATABASE_URL } : { DATA_DIR: env.DATA_DIR }),
    PORT: String(freePort()),
  })
  const call = async (body: Record<string, any>) => {
    const res = await fetch(`${url}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    if (res.status !== 200) throw new Error(`floor: ${res.status} ${(await res.text()).slice(0, 300)}`)
    const json = (await res.json()) as Record<string, any>
    // answered as the app answers the writes this script reads back: the new node's id
    return json.ids ? { ...json, node: { id: json.ids[0] }, results: json.ids.map((id: string) => ({ node: { id } })) } : json
  }
  return { server: proc, call }
}

/** The floor's body for one of the app's mutate bodies this script sends. */
function floorBody(b: Record<string, any>): Record<string, unknown> {
  if (b.action === 'addProject') return { op: 'project', projectId: b.project.id }
  if (b.action === 'update') return { op: 'update', projectId: b.projectId, nodeId: b.nodeId, label: b.data.label }
  if (b.action === 'add')
    return { op: 'add', projectId: b.projectId, type: b.node.type, parentId: b.node.parentId, label: b.node.data.label }
  if (b.action === 'delete') return { op: 'delete', projectId: b.projectId, nodeId: b.nodeId }
  // this script's batches: adds of one type under one parent (the floor numbers their labels itself)
  if (b.action === 'batch') {
    const first = b.mutations[0].node
    return {
      op: 'batch',
      projectId: b.projectId,
      type: first.type,
      parentId: first.parentId,
      label: first.data.label,
      count: b.mutations.length,
    }
  }
  throw new Error(`the floor has no ${b.action}`)
}

if (import.meta.main) await main()
