import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bootstrapOwner } from '../src/accounts/service'
import { createApp } from '../src/app'
import { type Config, loadConfig } from '../src/config'
import { createDeps } from '../src/create-deps'
import { type Db, openDb } from '../src/db'
import { migrate } from '../src/db/migrate'
import { openPglite } from '../src/db/pglite'
import { openPostgres } from '../src/db/postgres'
import type { Deps } from '../src/deps'
import type { SocketIp } from '../src/http/client-ip'
import { createLogger } from '../src/log'
import { startScheduler } from '../src/scheduler'

/**
 * Every test file starts its own app on a fresh database: PGlite by default (cloned from a
 * migrated template, made once per run: each start skips initdb and the migrations), or a new
 * database on the PostgreSQL server of TEST_DATABASE_URL (under scripts/test.ts a copy of the
 * run's migrated template database, which also skips the migrations).
 */
const PG_URL = process.env.TEST_DATABASE_URL

/**
 * A PGlite dump (a template for `openPglite`) made once per run of scripts/test.ts and kept in
 * its ARBOR_TEST_TEMPLATES directory under `name`, else made once in this process; `make` builds
 * it. Two files that make it at the same time each write it whole, and the rename keeps one.
 * Returns what gives one database its bytes, which that database takes over (openPglite): a
 * private mapping of the run's file (copy-on-write: the pages PostgreSQL never touches are never
 * read nor copied: startApp takes about 0.24 s of CPU less than through PGlite's own load of the
 * 42 MB of the migrated dump), else a copy of the dump made here.
 */
export function sharedDump(name: string, make: () => Promise<Blob>): () => Promise<Uint8Array> {
  /** the run's file of the dump, or (outside the runner) the dump made here */
  let made: Promise<string | Blob> | undefined
  const once = async () => {
    const dir = process.env.ARBOR_TEST_TEMPLATES
    const file = dir ? join(dir, `${name}.dump`) : null
    if (file && existsSync(file)) return file
    const blob = await make()
    if (!file) return blob
    writeFileSync(`${file}.${process.pid}`, new Uint8Array(await blob.arrayBuffer()))
    renameSync(`${file}.${process.pid}`, file)
    return file
  }
  return async () => {
    const dump = await (made ??= once())
    return typeof dump === 'string' ? Bun.mmap(dump, { shared: false }) : new Uint8Array(await dump.arrayBuffer())
  }
}

const migratedDump = sharedDump('migrated', async () => {
  const db = await openPglite(null)
  await migrate(db)
  const blob = await db.dump()
  await db.close()
  return blob
})

async function freshPglite(dataDir: string | null = null): Promise<Db> {
  return openPglite(dataDir, await migratedDump())
}

async function dropPostgres(url: string) {
  const admin = await openPostgres(PG_URL!)
  await admin.exec(`drop database if exists ${new URL(url).pathname.slice(1)} with (force)`)
  await admin.close()
}

/**
 * A new database `name` on the PostgreSQL server of TEST_DATABASE_URL, and its URL. `migrated`:
 * under scripts/test.ts, a copy of the run's migrated template (ARBOR_TEST_PG_TEMPLATE), made in
 * milliseconds; else (or outside the runner) an empty one, to migrate. Returns whether it is migrated.
 */
export async function createPostgres(name: string, migrated: boolean): Promise<{ url: string; migrated: boolean }> {
  const template = migrated ? process.env.ARBOR_TEST_PG_TEMPLATE : undefined
  const admin = await openPostgres(PG_URL!)
  try {
    await admin.exec(`create database ${name}${template ? ` template ${template}` : ''}`)
  } finally {
    await admin.close()
  }
  const url = new URL(PG_URL!)
  url.pathname = `/${name}`
  return { url: url.toString(), migrated: !!template }
}

async function freshPostgres(): Promise<{ db: Db; url: string; drop: () => Promise<void> }> {
  const made = await createPostgres(`arbor_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`, true)
  const db = await openPostgres(made.url)
  if (!made.migrated) await migrate(db)
  return {
    db,
    url: made.url,
    drop: async () => {
      await db.close()
      await dropPostgres(made.url)
    },
  }
}

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef'

export interface Res {
  status: number
  body: any
  headers: Headers
}

export interface TestApp {
  deps: Deps
  db: Db
  config: Config
  ownerKey: string
  handle: (req: Request, ip?: SocketIp) => Response | Promise<Response>
  /** one HTTP call; `key` defaults to the owner's, `null` sends none */
  call: (
    method: string,
    path: string,
    opts?: { body?: unknown; key?: string | null; headers?: Record<string, string>; ip?: string },
  ) => Promise<Res>
  /** a user made through the admin API */
  user: (opts?: {
    name?: string
    tier?: string
    status?: string
    contributor?: boolean
    lapsed?: boolean
  }) => Promise<{ id: string; key: string }>
  /** a project owned by the given key (owner's by default) */
  project: (id?: string, key?: string) => Promise<string>
  /** where the database lives, for `reopen` */
  store: { pgUrl?: string; dataDir?: string }
  close: () => Promise<void>
}

export interface StartOptions {
  /** start the scheduled loops and their wake-up listeners (webhook deliveries…); close() stops them first */
  loops?: boolean
  /** keep the database when this app closes, so `reopen` can open it again (PGlite then lives in a temp DATA_DIR) */
  persist?: boolean
  /** open the database of an earlier app: a restart once it closed, or (PostgreSQL) a second replica beside it */
  reopen?: TestApp
}

let counter = 0

export async function startApp(env: Record<string, string> = {}, opts: StartOptions = {}): Promise<TestApp> {
  const config = loadConfig({
    DATABASE_URL: 'memory://',
    RATE_LIMIT_PER_MINUTE: '0',
    ADMIN_TOKEN,
    PUBLIC_BASE_URL: 'http://arbor.test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...env,
  })
  let db: Db
  let drop = async () => {}
  const store: TestApp['store'] = opts.reopen?.store ?? {}
  if (opts.reopen) {
    // the same database again, migrated again (a second run must be a no-op)
    if (store.pgUrl) {
      db = await openPostgres(store.pgUrl)
      await migrate(db)
    } else db = await openDb({ dataDir: store.dataDir! })
    drop = async () => {
      await db.close()
      if (opts.persist) return
      if (store.pgUrl) await dropPostgres(store.pgUrl)
      else rmSync(store.dataDir!, { recursive: true, force: true })
    }
  } else if (PG_URL) {
    let url: string
    ;({ db, url, drop } = await freshPostgres())
    if (opts.persist) {
      store.pgUrl = url
      drop = () => db.close()
    }
  } else if (opts.persist) {
    store.dataDir = mkdtempSync(join(tmpdir(), 'arbor-test-'))
    db = await freshPglite(store.dataDir)
    drop = () => db.close()
  } else {
    db = await freshPglite()
    drop = () => db.close()
  }
  const deps: Deps = createDeps({ config, db, log: createLogger(config.logLevel) })
  const ownerKey = opts.reopen?.ownerKey ?? (await bootstrapOwner(db))!
  const { handle } = createApp(deps)
  const scheduler = opts.loops ? startScheduler(deps) : null

  const call: TestApp['call'] = async (method, path, opts = {}) =>
    readRes(await handle(jsonRequest(`http://arbor.test${path}`, method, opts, ownerKey), opts.ip ?? '127.0.0.1'))

  const app: TestApp = {
    deps,
    db,
    config,
    ownerKey,
    handle,
    call,
    async user(opts = {}) {
      const { lapsed, ...rest } = opts
      const res = await call('POST', '/admin/v1/users', { key: ADMIN_TOKEN, body: { name: opts.name ?? `user${++counter}`, ...rest } })
      if (res.status !== 201) throw new Error(`user: ${res.status} ${JSON.stringify(res.body)}`)
      if (lapsed) await call('PATCH', `/admin/v1/users/${res.body.user.id}`, { key: ADMIN_TOKEN, body: { lapsed } })
      return { id: res.body.user.id, key: res.body.apiKey }
    },
    async project(id = `p${++counter}-${Math.random().toString(36).slice(2, 8)}`, key) {
      const res = await call('POST', '/api/v1/mutate', { key, body: { action: 'addProject', project: { name: id, id } } })
      if (res.status !== 200) throw new Error(`project: ${res.status} ${JSON.stringify(res.body)}`)
      return id
    },
    store,
    async close() {
      // as the server does on SIGTERM: the scheduler's stop also gives up the Meilisearch sync lease
      if (scheduler) await scheduler.stop()
      else await deps.search.stop?.()
      await drop()
    },
  }
  return app
}

/**
 * A project with iterations S1 and S2 and the chain goal-1 > need-1 > approach-1, plus `items`
 * (batch add entries; jobs may use parentId 'draft-a'). Returns the project id.
 */
export async function seedPlan(app: TestApp, items: unknown[]): Promise<string> {
  const p = await app.project()
  const res = await app.call('POST', '/api/v1/mutate', {
    body: {
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'addIteration', iteration: { name: 'S1' } },
        { action: 'addIteration', iteration: { name: 'S2' } },
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
        { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
        ...items.map((node) => ({ action: 'add', node })),
      ],
    },
  })
  if (res.status !== 200) throw new Error(JSON.stringify(res.body))
  return p
}

/**
 * In project `projectId`, the chain goal G > need N > approach A, each a single add, then `count`
 * jobs J0, J1, … under the approach in one batch. Returns the ids, the jobs in their order.
 */
export async function approachWithJobs(app: TestApp, projectId: string, count: number) {
  const add = async (node: Record<string, unknown>) => {
    const res = await app.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId, node } })
    if (res.status !== 200) throw new Error(JSON.stringify(res.body))
    return res.body.node.id as string
  }
  const goal = await add({ type: 'goal', data: { label: 'G' } })
  const need = await add({ type: 'need', parentId: goal, data: { label: 'N' } })
  const approach = await add({ type: 'approach', parentId: need, data: { label: 'A' } })
  const batch = await app.call('POST', '/api/v1/mutate', {
    body: {
      action: 'batch',
      projectId,
      mutations: Array.from({ length: count }, (_, i) => ({
        action: 'add',
        node: { type: 'job', parentId: approach, data: { label: `J${i}` } },
      })),
    },
  })
  if (batch.status !== 200) throw new Error(JSON.stringify(batch.body))
  const jobs = (batch.body.results as { node: { id: string } }[]).map((r) => r.node.id)
  return { goal, need, approach, jobs }
}

/** A value as an SQL literal, for `explain execute` of a prepared statement (bench/id-list-plans.ts writes its parameters with it too). */
export { sqlLiteral } from '../bench/lib/sql-literal'

/** One JSON request: `key` defaults to `defaultKey`, `null` sends none; a string body is sent as is. */
export function jsonRequest(
  url: string,
  method: string,
  opts: { body?: unknown; key?: string | null; headers?: Record<string, string> },
  defaultKey: string,
): Request {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) }
  const key = opts.key === undefined ? defaultKey : opts.key
  if (key) headers.authorization = `Bearer ${key}`
  let body: string | undefined
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body)
    headers['content-type'] ??= 'application/json'
  }
  return new Request(url, { method, headers, body })
}

/** A response as the tests read it: status, the body parsed as JSON when it is JSON, the headers. */
export async function readRes(res: Response): Promise<Res> {
  const text = await res.text()
  let parsed: any = text
  try {
    parsed = JSON.parse(text)
  } catch {}
  return { status: res.status, body: parsed, headers: res.headers }
}

/**
 * The project's work items as stored, and as `work_refresh` recomputes them from its nodes (in a
 * transaction rolled back, index scans preferred): after any write the two must be equal.
 * `columns` are the work items' columns read, ordered by node id.
 */
export async function workItemsStoredAndRecomputed<Row = Record<string, unknown>>(db: Db, projectId: string, columns: string) {
  const read = (on: Db) => on.query<Row>(`select ${columns} from work_items where project_id = $1 order by node_id`, [projectId])
  const stored = await read(db)
  const rollback = new Error('rolled back')
  let recomputed: Row[] = []
  await db
    .tx(async (tx) => {
      await tx.query('delete from work_items where project_id = $1', [projectId])
      await tx.query(
        `select work_refresh($1, array(select id from nodes where project_id = $1 and type in ('job', 'task')))
         from (select set_config('enable_seqscan', 'off', true)) s`,
        [projectId],
      )
      recomputed = await read(tx)
      throw rollback
    })
    .catch((e) => {
      if (e !== rollback) throw e
    })
  return { stored, recomputed }
}
