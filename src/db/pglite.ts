import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { pgliteAssets } from './pglite-assets'
import { preparedRunner } from './pglite-prepared'
import type { Db, Row } from './port'

/**
 * PGlite runs PostgreSQL in single-user mode inside this process and takes no lock on its
 * directory; two processes on one directory corrupt it. So we hold a lock file with our pid:
 * a second process fails fast, and a lock left by a dead process is taken over.
 */
export class DataDirLockedError extends Error {}

function acquireLock(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true })
  const lockPath = join(dataDir, 'arbor.lock')
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx')
      writeSync(fd, String(process.pid))
      closeSync(fd)
      return lockPath
    } catch (err: any) {
      if (err.code !== 'EEXIST') throw err
      const pid = Number(readFileSync(lockPath, 'utf8').trim())
      if (pid && pid !== process.pid && isAlive(pid))
        throw new DataDirLockedError(
          `DATA_DIR ${resolve(dataDir)} is in use by another Arbor process (pid ${pid}); stop it first, or set DATA_DIR to another directory`,
        )
      rmSync(lockPath, { force: true }) // stale: its owner is gone
    }
  }
  throw new DataDirLockedError(`could not take the lock on ${lockPath}`)
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err: any) {
    return err.code === 'EPERM'
  }
}

type Queryable = { query<T>(text: string, params?: unknown[]): Promise<{ rows: T[] }>; exec(text: string): Promise<unknown> }

type Run = ReturnType<typeof preparedRunner>

function wrap(conn: Queryable, inTx: boolean, base: { transaction: PGlite['transaction'] }, run: Run): Db {
  const db: Db = {
    kind: 'pglite',
    async query<T = Row>(text: string, params: unknown[] = []) {
      return run<T>(text, params, inTx)
    },
    async exec(text: string) {
      await conn.exec(text)
    },
    async tx<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
      if (inTx) return fn(db)
      return base.transaction((t) => fn(wrap(t as unknown as Queryable, true, base, run)))
    },
    async ping() {
      await conn.query('select 1')
      return true
    },
    async close() {},
  }
  return db
}

/**
 * Open PGlite persisted under `dataDir/pgdata`, or in memory when `dataDir` is null.
 * `template` (an in-memory database dumped with `dumpTemplate`) skips initdb: tests use it.
 */
export async function openPglite(dataDir: string | null, template?: Blob): Promise<Db> {
  const lockPath = dataDir ? acquireLock(dataDir) : null
  const pgdata = dataDir ? join(dataDir, 'pgdata') : undefined
  if (pgdata && !existsSync(pgdata)) mkdirSync(pgdata, { recursive: true })
  let pg: PGlite
  try {
    pg = await PGlite.create({
      ...(await pgliteAssets()),
      ...(pgdata ? { dataDir: pgdata } : {}),
      ...(template ? { loadDataDir: template } : {}),
    })
  } catch (err) {
    if (lockPath) rmSync(lockPath, { force: true })
    throw err
  }
  const db = wrap(pg as unknown as Queryable, false, pg, preparedRunner(pg))
  ;(db as any).dump = () => pg.dumpDataDir('none')
  let closed = false
  db.close = async () => {
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
  return db
}

/** A copy of an in-memory PGlite database, to open many identical ones quickly. */
export async function dumpTemplate(db: Db): Promise<Blob> {
  const dump = (db as any).dump
  if (!dump) throw new Error('dumpTemplate needs a PGlite database')
  return dump()
}
