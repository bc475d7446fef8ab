import { afterAll, beforeAll } from 'bun:test'
import { cpSync, existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import type { Subprocess } from 'bun'
import { loadConfig } from '../src/config'
import { migrate } from '../src/db/migrate'
import { openPglite } from '../src/db/pglite'
import { ADMIN_TOKEN, createPostgres, jsonRequest, readRes } from './helpers'

/**
 * The real server as its own process (`bun src/main.ts`, loops on), for tests that must see what
 * a user sees: only HTTP and the process's output. The database is a fresh PGlite DATA_DIR, or a
 * fresh database on the PostgreSQL server of TEST_DATABASE_URL. Unit tests of `tick(deps, now)`
 * prove the logic; these prove it is wired.
 */
const ROOT = join(import.meta.dir, '..')
/** the checkout's sentence model (./data/models if an earlier model:fetch put it there, else models/ beside the code) */
const MODEL_DIR = loadConfig({ DATA_DIR: join(ROOT, 'data') }).embeddingsModelDir
const PG_URL = process.env.TEST_DATABASE_URL

export interface ServerProcess {
  /** http://127.0.0.1:<port> */
  url: string
  /** the owner's key, read from the first start's output */
  ownerKey: string
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  /** everything the process wrote so far (stdout and stderr) */
  output: () => string
  /** one JSON call; `key` defaults to the owner's, `null` sends none */
  call: (
    method: string,
    path: string,
    opts?: { body?: unknown; key?: string | null; headers?: Record<string, string> },
  ) => Promise<{
    status: number
    body: any
    headers: Headers
  }>
  /** poll `fn` until it returns a truthy value, or fail after `timeoutMs` with the last value */
  until: <T>(fn: () => Promise<T>, timeoutMs?: number, what?: string) => Promise<NonNullable<T>>
  /** SIGTERM and wait; the database is kept until `close` */
  stop: () => Promise<number>
  /** stop (if running) and drop the database */
  close: () => Promise<void>
  /** where the database lives, to start a second process (a replica, or a restart) on it */
  env: Record<string, string>
}

async function drain(stream: ReadableStream<Uint8Array>, sink: string[]) {
  const decoder = new TextDecoder()
  for await (const chunk of stream) sink.push(decoder.decode(chunk, { stream: true }))
}

/**
 * An initdb'd PGlite cluster, migrated (the schema, no user), in `<ARBOR_TEST_TEMPLATES>/pgdata`:
 * made once per run of scripts/test.ts (which makes that directory and removes it); null outside
 * it. Whoever makes it first renames it into place; a second one made at the same time is dropped.
 */
let initdbDir: Promise<string | null> | undefined
function initdbCluster(): Promise<string | null> {
  initdbDir ??= (async () => {
    const dir = process.env.ARBOR_TEST_TEMPLATES
    if (!dir) return null
    if (!existsSync(join(dir, 'pgdata', 'PG_VERSION'))) {
      const build = mkdtempSync(join(dir, 'build-'))
      const db = await openPglite(build)
      await migrate(db)
      await db.close()
      try {
        renameSync(join(build, 'pgdata'), join(dir, 'pgdata'))
      } catch (err) {
        if (!existsSync(join(dir, 'pgdata', 'PG_VERSION'))) throw err
      }
      rmSync(build, { recursive: true, force: true })
    }
    return join(dir, 'pgdata')
  })()
  return initdbDir
}

/**
 * A fresh database. On PGlite, a new DATA_DIR; under scripts/test.ts it holds a copy of the run's
 * initdb'd and migrated cluster: the server skips initdb (2-3 s of CPU at each start) and finds
 * nothing to migrate (about a second more), and makes its owner as on a first start. On
 * PostgreSQL, a new database: under scripts/test.ts a copy of the run's migrated template. `empty`:
 * a DATA_DIR with nothing in it, or an empty database, for the tests of the very first start
 * (the server runs initdb, on PGlite, and every migration itself). `embedded`: a PGlite DATA_DIR
 * whatever TEST_DATABASE_URL says, for a server started with an empty DATABASE_URL.
 */
export async function freshDatabase(
  opts: { empty?: boolean; embedded?: boolean } = {},
): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  if (!PG_URL || opts.embedded) {
    const dataDir = mkdtempSync(join(tmpdir(), 'arbor-proc-'))
    const cluster = opts.empty ? null : await initdbCluster()
    if (cluster) cpSync(cluster, join(dataDir, 'pgdata'), { recursive: true })
    return { env: { DATA_DIR: dataDir }, drop: async () => rmSync(dataDir, { recursive: true, force: true }) }
  }
  const { default: postgres } = await import('postgres')
  const name = `arbor_proc_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
  const { url } = await createPostgres(name, !opts.empty)
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-proc-'))
  return {
    env: { DATABASE_URL: url, DATA_DIR: dataDir },
    drop: async () => {
      const a = postgres(PG_URL, { max: 1, onnotice: () => {} })
      await a.unsafe(`drop database if exists ${name} with (force)`)
      await a.end()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * Start `bun src/main.ts` on a free port. `env` is added to a small default environment
 * (loops every 200 ms, no rate limit, an admin token). Pass `on` (the `env` of an earlier
 * process) to start on the same database: a restart, or a second replica on PostgreSQL.
 * `emptyDataDir`: on PGlite, a DATA_DIR with nothing in it (see freshDatabase).
 */
export async function startServer(
  env: Record<string, string> = {},
  on?: ServerProcess,
  opts: { emptyDataDir?: boolean } = {},
): Promise<ServerProcess> {
  // `DATABASE_URL: ''`: the embedded database, on the PostgreSQL pass too, as a DATA_DIR of the PGlite
  // pass gets it (a copy of the run's cluster, no initdb; no unused PostgreSQL database beside it)
  const embedded = env.DATABASE_URL === ''
  const db = on ? { env: on.env, drop: async () => {} } : await freshDatabase({ empty: opts.emptyDataDir, embedded })
  const fullEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    RATE_LIMIT_PER_MINUTE: '0',
    SCHEDULER_INTERVAL_MS: '200',
    ADMIN_TOKEN,
    EMBEDDINGS_MODEL_DIR: MODEL_DIR,
    ...db.env,
    ...env,
  }
  const proc = Bun.spawn([process.execPath, 'src/main.ts'], { cwd: ROOT, env: fullEnv, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  const chunks: string[] = []
  void drain(proc.stdout, chunks)
  void drain(proc.stderr, chunks)
  const output = () => chunks.join('')

  const deadline = Date.now() + 60_000
  let url = ''
  while (!url) {
    const m = /"msg":"listening".*?"url":"(http:\/\/[^"]+)"/.exec(output())
    if (m) url = m[1]!
    else if (proc.exitCode !== null || proc.signalCode !== null) {
      await Bun.sleep(50)
      await db.drop()
      throw new Error(`the server exited with ${proc.exitCode ?? proc.signalCode} before listening:\n${output()}`)
    } else if (Date.now() > deadline) {
      proc.kill('SIGKILL')
      await db.drop()
      throw new Error(`the server did not listen within 60 s:\n${output()}`)
    } else await Bun.sleep(20)
  }
  const ownerKey = on?.ownerKey ?? /Arbor API key for owner: (arb_[0-9A-Za-z]+)/.exec(output())?.[1] ?? ''

  const call: ServerProcess['call'] = async (method, path, opts = {}) =>
    readRes(await fetch(jsonRequest(url + path, method, opts, ownerKey)))

  const until: ServerProcess['until'] = async (fn, timeoutMs = 30_000, what = 'condition') => {
    const end = Date.now() + timeoutMs
    let last: unknown
    for (;;) {
      last = await fn()
      if (last) return last as never
      if (Date.now() > end) throw new Error(`${what} not reached within ${timeoutMs} ms; last value: ${JSON.stringify(last)}`)
      await Bun.sleep(50)
    }
  }

  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM')
    const code = await proc.exited
    keepLog(proc.pid, output())
    return code
  }

  return {
    url,
    ownerKey,
    proc,
    output,
    call,
    until,
    stop,
    env: db.env,
    async close() {
      await stop()
      await db.drop()
    },
  }
}

/**
 * The server's output, once it has stopped, in ARBOR_TEST_OUTPUT (set by scripts/test.ts, the
 * runner of npm test): test-output/logs/<test file>.server-<pid>.log, to read after a failure.
 */
function keepLog(pid: number, text: string) {
  const dir = process.env.ARBOR_TEST_OUTPUT
  if (dir) writeFileSync(join(dir, `${basename(Bun.main)}.server-${pid}.log`), text)
}

/**
 * Inside a describe: two server processes on one fresh database (on PostgreSQL, two replicas
 * behind a load balancer), started before its tests and stopped after them. Read `a` and `b`
 * in the tests (they are set once the suite has started).
 */
export function replicas(env: Record<string, string> = {}): { a: ServerProcess; b: ServerProcess } {
  const pair = {} as { a: ServerProcess; b: ServerProcess }
  // two starts, each given 60 s by startServer, and two stops with a drop: beyond the runner's
  // 30 s for a hook on a loaded machine (two test files at a time)
  beforeAll(async () => {
    pair.a = await startServer(env)
    pair.b = await startServer(env, pair.a)
  }, 150_000)
  afterAll(async () => {
    await pair.b?.stop()
    await pair.a?.close()
  }, 60_000)
  return pair
}

/**
 * A new project of the owner's on this server, with these batches written one after the other
 * (each must answer 200); its id is `prefix` and a random tail.
 */
export async function projectWithBatches(server: ServerProcess, prefix: string, ...batches: Record<string, unknown>[][]): Promise<string> {
  const projectId = `${prefix}-${Math.random().toString(36).slice(2, 10)}`
  const made = await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: projectId, id: projectId } } })
  if (made.status !== 200) throw new Error(`setup: ${made.status} ${JSON.stringify(made.body)}`)
  for (const mutations of batches) {
    const res = await server.call('POST', '/api/v1/mutate', { body: { action: 'batch', projectId, mutations } })
    if (res.status !== 200) throw new Error(`setup: ${res.status} ${JSON.stringify(res.body)}`)
  }
  return projectId
}

/**
 * `arbor_revision_lookups_total` of `server` (its /metrics, read with `token`, the server's
 * METRICS_TOKEN): the revisions it read from PostgreSQL before a cached answer. Unchanged across
 * repeated reads, the server answered them from memory (docs/caching.md, the replicas' lease).
 */
export async function revisionLookups(server: Pick<ServerProcess, 'url'>, token: string): Promise<number> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
  const m = /^arbor_revision_lookups_total (\d+)/m.exec(await res.text())
  if (!m) throw new Error('no arbor_revision_lookups_total in /metrics')
  return Number(m[1])
}
