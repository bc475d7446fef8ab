// The SQL statements of one write, each with its time (issue 51, 3): the app in this process on a
// fresh database (bench/lib/app.ts), its Db wrapped so every statement the write sends is logged,
// and on PostgreSQL the time of each trigger function it ran (track_functions, pg_stat_user_functions:
// the triggers of migrations 0016/0018/0019/0020/0026 and what they call).
//
//   bun bench/write-sql.ts [goal|job|task|update|delete|batch|done] [--repeat 20] [--siblings 0] [--memos 0]   (done: a claimed job marked done with its claimToken)
//   ARBOR_BENCH_NO_HISTORY=1 bun bench/write-sql.ts batch   (the same without the change rows)
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/write-sql.ts job
//   EMBEDDINGS_URL=<the url bench/lib/embed-stub.ts prints> bun bench/write-sql.ts batch   (the search embeds through
//   the stub, as in npm run bench:writes; without it, through the built-in model-less embedder)
//
// Beside each statement's time, this process's CPU time over it (on PGlite the statement runs in
// this thread, so that is its own CPU, robust to a loaded machine), and over the whole request.
//
// Each write is made `repeat` times (after as many untimed ones); the table shows each statement
// in order with its median time, and the sum beside the median time of the whole request.
//
// Where the JavaScript time goes, in the timed writes only (start-up and set-up left out):
//   bun --cpu-prof --cpu-prof-dir=/tmp/p bench/write-sql.ts job --repeat 300 --profile-dir /tmp/p
//   bun bench/write-sql.ts --shares /tmp/p

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bootstrapOwner } from '../src/accounts/service'
import { createApp } from '../src/app'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/create-deps'
import { type Db, openDb } from '../src/db'
import { openPostgres } from '../src/db/postgres'
import { createLogger } from '../src/log'
import { fillMemos } from './lib/sql-cpu'
import { sampleShares } from './profile'

const args = process.argv.slice(2)
const what = (args.find((a) => !a.startsWith('--') && !/^\d+$/.test(a)) ?? 'goal') as
  | 'goal'
  | 'job'
  | 'task'
  | 'update'
  | 'delete'
  | 'batch'
  | 'done'
const REPEAT = args.includes('--repeat') ? Number(args[args.indexOf('--repeat') + 1]) : 20
// jobs the approach holds before the first write (a job's add and a batch add under it): the cost
// of one more job must not grow with them
const SIBLINGS = args.includes('--siblings') ? Number(args[args.indexOf('--siblings') + 1]) : 0
// open memos the project holds before the first write (tasks made memos, as the classify loop of
// npm run bench:writes makes every task it adds): what a task's add reads for its inbox_overflow advisory
const MEMOS = args.includes('--memos') ? Number(args[args.indexOf('--memos') + 1]) : 0
const PG_URL = process.env.BENCH_DATABASE_URL
const PROFILE_DIR = args.includes('--profile-dir') ? args[args.indexOf('--profile-dir') + 1] : undefined

if (args.includes('--shares')) {
  const dir = args[args.indexOf('--shares') + 1]!
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))!
  const window = JSON.parse(readFileSync(join(dir, 'window.json'), 'utf8')) as { fromEndUs: number; untilEndUs: number }
  const { samples, self, total } = sampleShares(JSON.parse(readFileSync(join(dir, file), 'utf8')), window.fromEndUs, window.untilEndUs)
  const rows = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 30)
      .map(([f, n]) => `| ${((100 * n) / samples).toFixed(1)}% | ${f} |`)
      .join('\n')
  console.log(
    `${samples} samples in the timed writes\n\n| self | function |\n|---|---|\n${rows(self)}\n\n| total | function |\n|---|---|\n${rows(total)}`,
  )
  process.exit(0)
}

interface Logged {
  sql: string
  ms: number
  /** this process's CPU time over the statement (on PGlite the statement's own, which runs in this thread) */
  cpu?: number
}

const cpuMs = (since: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(since)
  return (d.user + d.system) / 1000
}

/** `db` with every statement logged into `log` while `on.value` is true. */
function traced(db: Db, log: Logged[], on: { value: boolean }): Db {
  let wrapped: Db
  // when the last statement ended: the commit is what the transaction takes after it
  let lastEnd = 0
  const wrap = (inner: Db): Db =>
    new Proxy(inner, {
      get(target, key) {
        if (key === 'query')
          return async (text: string, params?: unknown[]) => {
            const s = performance.now()
            const c = process.cpuUsage()
            try {
              return await target.query(text, params)
            } finally {
              lastEnd = performance.now()
              if (on.value) log.push({ sql: text, ms: lastEnd - s, cpu: cpuMs(c) })
            }
          }
        if (key === 'exec')
          return async (text: string) => {
            const s = performance.now()
            const c = process.cpuUsage()
            try {
              return await target.exec(text)
            } finally {
              lastEnd = performance.now()
              if (on.value) log.push({ sql: text, ms: lastEnd - s, cpu: cpuMs(c) })
            }
          }
        // not a statement of its own: on PostgreSQL a transaction's notifications go out together
        // in one statement before its commit (src/db/postgres.ts), on PGlite they stay in the process
        if (key === 'notify')
          return async (channel: string, payload: string) => {
            await target.notify(channel, payload)
            if (on.value) log.push({ sql: `[notify ${channel}]`, ms: 0 })
          }
        if (key === 'tx')
          return async <T>(fn: (tx: Db) => Promise<T>) => {
            const at = log.length
            const s = performance.now()
            const c = process.cpuUsage()
            try {
              return await target.tx((tx) => fn(wrap(tx)))
            } finally {
              // the whole transaction, begin to commit, statements included (its own line, before them),
              // and the commit (the deferred triggers: revisions, work_pending) after the last statement
              const end = performance.now()
              if (on.value) {
                log.splice(at, 0, { sql: '[transaction, begin to commit, the statements below included]', ms: end - s, cpu: cpuMs(c) })
                log.push({ sql: '[commit: from the end of the last statement to the end of the transaction]', ms: end - lastEnd })
              }
            }
          }
        if (key === 'root') return target.root === target ? wrapped : wrap(target.root)
        const v = Reflect.get(target, key)
        return typeof v === 'function' ? v.bind(target) : v
      },
    })
  wrapped = wrap(db)
  return wrapped
}

/** A statement's name: its SQL file's first comment line, or its first 70 characters. */
const nameOf = (sql: string) => {
  const lines = sql.split('\n').map((l) => l.trim())
  const body = lines.filter((l) => l && !l.startsWith('--')).join(' ')
  return body.replace(/\s+/g, ' ').slice(0, 90)
}

const log: Logged[] = []
const on = { value: false }
// On PostgreSQL, the writes to its sockets during the timed requests: postgres.js gathers the
// statements made in one turn of the event loop into one write, and a transaction waits for
// the answer of each before it makes the next, so each write is a round trip (the lease's
// renewal, one a second on the LISTEN connection, is counted too when it falls in a request).
let socketWrites = 0
if (PG_URL) {
  const write = Socket.prototype.write
  Socket.prototype.write = function (this: Socket, ...a: Parameters<typeof write>) {
    if (on.value) socketWrites++
    return write.apply(this, a)
  } as typeof write
}
const dataDir = mkdtempSync(join(tmpdir(), 'arbor-write-sql-'))
const dbName = `arbor_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
const admin = PG_URL ? await openPostgres(PG_URL) : null
let databaseUrl: string | undefined
if (admin && PG_URL) {
  await admin.exec(`create database ${dbName}`)
  // every connection of the pool times the functions it runs (pg_stat_user_functions)
  await admin.exec(`alter database ${dbName} set track_functions = 'all'`)
  const url = new URL(PG_URL)
  url.pathname = `/${dbName}`
  databaseUrl = url.toString()
}
const config = loadConfig({
  DATA_DIR: dataDir,
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  HOST: '127.0.0.1',
  PORT: '0',
  RATE_LIMIT_PER_MINUTE: '0',
  LOG_LEVEL: 'silent',
  // EMBEDDINGS_URL=<bench/lib/embed-stub.ts's url>: the search embeds through it, as in npm run bench:writes
  ...(process.env.EMBEDDINGS_URL ? { EMBEDDINGS_URL: process.env.EMBEDDINGS_URL, EMBEDDINGS_MODEL: 'stub' } : {}),
  // ARBOR_BENCH_NO_HISTORY=1: the write without its change rows (history's share, history.md 7)
  ...(process.env.ARBOR_BENCH_NO_HISTORY ? { ARBOR_BENCH_NO_HISTORY: '1' } : {}),
})
const rawDb = await openDb(config)
const db = traced(rawDb, log, on)
const deps = createDeps({ config, db, log: createLogger(config.logLevel) })
// on PostgreSQL, as the server does once it listens (src/main.ts): the replica's lease, so the
// caller's access and the project's row come from memory as they do in a running server
await deps.replicas?.start()
const ownerKey = (await bootstrapOwner(rawDb))!
const { handle } = createApp(deps)
const http = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (req, srv) => handle(req, srv.requestIP(req)?.address) })
const server = { url: `http://127.0.0.1:${http.port}`, ownerKey }
try {
  const call = async (body: unknown) => {
    const res = await fetch(`${server.url}/api/v1/mutate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.ownerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    const json = (await res.json()) as Record<string, any>
    if (!json.success) throw new Error(JSON.stringify(json).slice(0, 300))
    return json
  }
  await call({ action: 'addProject', project: { id: 'ww', name: 'ww' } })
  const g = await call({ action: 'add', projectId: 'ww', node: { type: 'goal', data: { label: 'G' } } })
  const n = await call({ action: 'add', projectId: 'ww', node: { type: 'need', parentId: g.nodeId ?? g.node?.id, data: { label: 'N' } } })
  const a = await call({
    action: 'add',
    projectId: 'ww',
    node: { type: 'approach', parentId: n.nodeId ?? n.node?.id, data: { label: 'A' } },
  })
  const approach = a.nodeId ?? a.node?.id
  for (let made = 0; made < SIBLINGS; made += 500) {
    const n = Math.min(500, SIBLINGS - made)
    await call({
      action: 'batch',
      projectId: 'ww',
      mutations: Array.from({ length: n }, (_, i) => ({
        action: 'add',
        node: { type: 'job', parentId: approach, data: { label: `S${made + i}` } },
      })),
    })
  }
  await fillMemos(call, MEMOS)
  let k = 0
  const body = async () => {
    k++
    if (what === 'goal') return { action: 'add', projectId: 'ww', node: { type: 'goal', data: { label: `G${k}` } } }
    if (what === 'job') return { action: 'add', projectId: 'ww', node: { type: 'job', parentId: approach, data: { label: `J${k}` } } }
    if (what === 'task') return { action: 'add', projectId: 'ww', node: { type: 'task', data: { label: `T${k}` } } }
    if (what === 'batch')
      return {
        action: 'batch',
        projectId: 'ww',
        mutations: Array.from({ length: 100 }, (_, i) => ({
          action: 'add',
          node: { type: 'job', parentId: approach, data: { label: `B${k} ${i}` } },
        })),
      }
    if (what === 'update') return { action: 'update', projectId: 'ww', nodeId: approach, data: { label: `A${k}` } }
    if (what === 'done') {
      // an agent marking its claimed job done with its claim token (made and claimed untimed)
      const job = (await call({ action: 'add', projectId: 'ww', node: { type: 'job', parentId: approach, data: { label: `D${k}` } } })).node
        .id
      const [claim] = (await call({ action: 'claim', projectId: 'ww', agent: 'bench', nodeIds: [job] })).claims
      return { action: 'update', projectId: 'ww', nodeId: job, claimToken: claim.claimToken, data: { status: 'done' } }
    }
    const made = await call({ action: 'add', projectId: 'ww', node: { type: 'goal', data: { label: `D${k}` } } })
    return { action: 'delete', projectId: 'ww', nodeId: made.nodeId ?? made.node?.id }
  }
  for (let i = 0; i < REPEAT; i++) await call(await body())
  const runs: Logged[][] = []
  const totals: number[] = []
  const cpus: number[] = []
  const windowStart = performance.now()
  for (let i = 0; i < REPEAT; i++) {
    const b = await body()
    log.length = 0
    on.value = true
    const s = performance.now()
    const c = process.cpuUsage()
    await call(b)
    totals.push(performance.now() - s)
    cpus.push(cpuMs(c))
    on.value = false
    runs.push([...log])
  }
  const windowEnd = performance.now()
  if (PROFILE_DIR)
    process.on('exit', () => {
      const exit = performance.now()
      writeFileSync(
        join(PROFILE_DIR, 'window.json'),
        JSON.stringify({ fromEndUs: (exit - windowStart) * 1000, untilEndUs: (exit - windowEnd) * 1000 }),
      )
    })
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!
  const first = runs[0]!
  const rows = first.map((st, i) => ({
    sql: nameOf(st.sql),
    ms: median(runs.map((r) => r[i]?.ms ?? 0)),
    cpu: st.cpu === undefined ? undefined : median(runs.map((r) => r[i]?.cpu ?? 0)),
  }))
  const statements = rows.filter((r) => !r.sql.startsWith('['))
  console.log(
    `\n${what} on ${PG_URL ? 'postgres' : 'pglite'}, ${SIBLINGS} jobs in the approach before, ${MEMOS} open memos: ${statements.length} statements${PG_URL ? ` in ${(socketWrites / REPEAT).toFixed(2)} round trips (writes to PostgreSQL's sockets a request)` : ''}, request p50 ${median(totals).toFixed(2)} ms, this process's CPU over the request p50 ${median(cpus).toFixed(2)} ms (server and client)`,
  )
  console.log('| # | ms p50 | CPU ms p50 | statement |\n|---|---|---|---|')
  for (const [i, r] of rows.entries())
    console.log(`| ${i + 1} | ${r.ms.toFixed(3)} | ${r.cpu?.toFixed(3) ?? ''} | \`${r.sql.replace(/\|/g, '\\|')}\` |`)
  console.log(
    `sum of statements p50: ${statements.reduce((s, r) => s + r.ms, 0).toFixed(2)} ms, CPU ${statements.reduce((s, r) => s + (r.cpu ?? 0), 0).toFixed(2)} ms (on PostgreSQL the statements' CPU is the server's, not counted here)`,
  )
  if (PG_URL) {
    const fns = await rawDb.query<{ funcname: string; calls: number; total: number; self: number }>(
      `select funcname, calls::integer, total_time as total, self_time as self from pg_stat_user_functions order by total_time desc limit 15`,
    )
    console.log('\ntrigger and SQL functions (all writes of this run, incl. setup; ms total / self / calls):')
    for (const f of fns) console.log(`  ${f.funcname}: ${f.total.toFixed(1)} / ${f.self.toFixed(1)} / ${f.calls}`)
  }
} finally {
  http.stop(true)
  await deps.replicas?.stop()
  await rawDb.close()
  if (admin) {
    await admin.exec(`drop database if exists ${dbName} with (force)`)
    await admin.close()
  }
  rmSync(dataDir, { recursive: true, force: true })
}
