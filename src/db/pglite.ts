import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { acquireLock } from './data-dir-lock'
import { pgliteAssets } from './pglite-assets'
import { preparedRunner } from './pglite-prepared'
import { TarViewFS } from './pglite-template'
import type { Db, Listener, Row } from './port'

/**
 * PostgreSQL's default buffer pool (128 MB) is allocated inside PGlite's WebAssembly memory and
 * touched at start: most of an idle server's RSS. Reads that miss it go to PGlite's files,
 * which the operating system caches; 16 MB keeps the hot pages of our indexes.
 */
const SHARED_BUFFERS = '16MB'

type Queryable = { query<T>(text: string, params?: unknown[]): Promise<{ rows: T[] }>; exec(text: string): Promise<unknown> }

/** The Db on PGlite, plus what only an embedded database can do. */
export interface PgliteDb extends Db {
  readonly kind: 'pglite'
  /** A copy of the whole database (tests open many identical ones from it with `template`). */
  dump(): Promise<Blob>
}

/** What a database and its transactions share. */
interface Shared {
  root: PgliteDb | null
  pg: PGlite
  run: ReturnType<typeof preparedRunner>
  /** what a transaction's `exec` and `ping` run on */
  inTransaction: Queryable
  channels: Map<string, Set<Listener>>
  close: () => Promise<void>
  /** statements waiting for PGlite or running (GET /metrics) */
  inFlight: number
}

function deliver(shared: Shared, channel: string, payload: string) {
  for (const l of shared.channels.get(channel) ?? []) queueMicrotask(() => l.message(payload))
}

/**
 * PGlite runs in this thread: while a statement runs, nothing else does. A long write (a
 * 1,000-node batch: several statements and the JavaScript between them) would hold every other
 * request until it commits, even those that need no database (a search answered from memory, a
 * cached auth). So before a statement, once TURN_MS have passed since the last turn, the event
 * loop gets one: requests that came in meanwhile start, and those that need the database queue
 * for it behind the write.
 */
const TURN_MS = 4
let lastTurn = 0
async function takeTurns(): Promise<void> {
  if (performance.now() - lastTurn < TURN_MS) return
  await new Promise<void>((resolve) => setImmediate(resolve))
  lastTurn = performance.now()
}

function wrap(conn: Queryable, inTx: boolean, shared: Shared, queued: [string, string][] = [], after: (() => void)[] = []): PgliteDb {
  const db: PgliteDb = {
    kind: 'pglite',
    get root() {
      return shared.root ?? db
    },
    async query<T = Row>(text: string, params: unknown[] = []) {
      shared.inFlight++
      try {
        await takeTurns()
        return await shared.run.run<T>(text, params, inTx)
      } finally {
        shared.inFlight--
      }
    },
    inFlight: () => shared.inFlight,
    async exec(text: string) {
      await conn.exec(text)
    },
    async tx<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
      if (inTx) return fn(db)
      // notifications sent in the transaction leave once it commits
      const sent: [string, string][] = []
      const committed: (() => void)[] = []
      const result = await shared.run.transaction(() => fn(wrap(shared.inTransaction, true, shared, sent, committed)))
      for (const [channel, payload] of sent) deliver(shared, channel, payload)
      for (const run of committed) run()
      return result
    },
    async ping() {
      await conn.query('select 1')
      return true
    },
    close: () => shared.close(),
    async notify(channel, payload) {
      if (inTx) queued.push([channel, payload])
      else deliver(shared, channel, payload)
    },
    afterCommit(fn) {
      if (inTx) after.push(fn)
      else fn()
    },
    async listen(channel, listener) {
      let set = shared.channels.get(channel)
      if (!set) shared.channels.set(channel, (set = new Set()))
      set.add(listener)
      listener.up() // one process: nothing can be missed
      return async () => {
        set.delete(listener)
      }
    },
    dump: () => shared.pg.dumpDataDir('none'),
  }
  return db
}

/**
 * The worker's module; in the single executable it sits at its path under src/ (src/binary.ts).
 */
function initdbWorkerUrl(): string {
  if (import.meta.url.startsWith('file:///$bunfs/')) return new URL('./db/pglite-initdb-worker.ts', import.meta.url).href
  return new URL('./pglite-initdb-worker.ts', import.meta.url).href
}

/**
 * initdb for a new data directory, on a worker thread that then ends. In this process it peaks
 * near 1 GB (a second PostgreSQL instance and a dump of its files), and the server kept ~30 MB
 * more from it for the rest of its life than a start on an existing directory: memory freed but
 * never given back to the system.
 */
async function initDataDir(pgdata: string, startParams: string[]): Promise<void> {
  const worker = new Worker(initdbWorkerUrl())
  try {
    const reply = await new Promise<{ ok: boolean; error?: string }>((resolve, reject) => {
      worker.onmessage = (event) => resolve(event.data)
      worker.onerror = (event) => reject(new Error(`PGlite initdb worker failed: ${event.message}`))
      worker.postMessage({ pgdata, startParams })
    })
    if (!reply.ok) throw new Error(`PGlite initdb failed: ${reply.error}`)
  } finally {
    worker.terminate()
  }
}

/**
 * Open PGlite persisted under `dataDir/pgdata`, or in memory when `dataDir` is null.
 * `template` (an in-memory database dumped with `dump`) skips initdb: tests use it. As a
 * Uint8Array (the dump's bytes), an in-memory database takes it over: its files are views of
 * those bytes and PostgreSQL writes into them (see TarViewFS), so no other database may use it.
 */
export async function openPglite(dataDir: string | null, template?: Blob | Uint8Array): Promise<PgliteDb> {
  const lockPath = dataDir ? acquireLock(dataDir) : null
  const pgdata = dataDir ? join(dataDir, 'pgdata') : undefined
  if (pgdata && !existsSync(pgdata)) mkdirSync(pgdata, { recursive: true })
  const startParams = [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`]
  let pg: PGlite
  try {
    if (pgdata && !template && !existsSync(join(pgdata, 'PG_VERSION'))) await initDataDir(pgdata, startParams)
    // PGlite runs initdb itself only for a cluster neither loaded from `template` nor found on disk: in memory
    const initdb = !template && !(pgdata && existsSync(join(pgdata, 'PG_VERSION')))
    pg = await PGlite.create({
      ...(await pgliteAssets({ initdb })),
      startParams,
      ...(pgdata ? { dataDir: pgdata } : {}),
      ...(template instanceof Uint8Array && !pgdata ? { fs: new TarViewFS(template) } : {}),
      ...(template instanceof Uint8Array && pgdata ? { loadDataDir: new Blob([template]) } : {}),
      ...(template instanceof Blob ? { loadDataDir: template } : {}),
    })
  } catch (err) {
    if (lockPath) rmSync(lockPath, { force: true })
    throw err
  }
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    try {
      // Write every dirty page and the WAL out now, so the next start has no recovery to do.
      if (pgdata) await pg.query('checkpoint')
      await pg.close()
    } finally {
      if (lockPath) rmSync(lockPath, { force: true })
    }
  }
  const run = preparedRunner(pg)
  const inTransaction: Queryable = {
    query: async <T>(text: string, params: unknown[] = []) => ({ rows: await run.run<T>(text, params, true) }),
    exec: run.execInTransaction,
  }
  const shared: Shared = { root: null, pg, run, inTransaction, channels: new Map(), close, inFlight: 0 }
  shared.root = wrap(pg as unknown as Queryable, false, shared)
  return shared.root
}
