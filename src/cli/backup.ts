import { closeSync, createReadStream, createWriteStream, existsSync, openSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import type { Writable } from 'node:stream'
import { splitLines } from '../backup/lines'
import { checkBackup, RestoreError, restore } from '../backup/restore'
import { BackupError, writeBackup } from '../backup/service'
import type { Config } from '../config'
import { openDbAsIs } from '../db'
import { DataDirLockedError, refuseLocked } from '../db/data-dir-lock'
import type { Db } from '../db/port'
import { CliError, parse, URL_OPTION } from './args'
import { connect, isUp, serverUrl } from './server-api'

/**
 * `arbor backup [FILE]`: through the running server's admin API when one answers (with
 * ADMIN_TOKEN), else straight from the stopped database. `arbor restore FILE`: into the
 * configured database (DATABASE_URL, or the embedded one in DATA_DIR), which must be empty.
 * FILE `-` (or none, for backup) is stdout / stdin. docs/backup.md.
 */
export async function backupCommand(config: Config, argv: string[]): Promise<void> {
  const { values, positionals } = parse(argv, URL_OPTION, { min: 0, max: 1 })
  const file = positionals[0] ?? '-'
  const url = serverUrl(config, values.url)
  const out = openOutput(file)
  // what the backup was taken of, said with the file: the server that answered (which may not be
  // the DATA_DIR or DATABASE_URL of this shell), or the database the config names
  let source: string
  try {
    if (config.adminToken && (await isUp(url))) {
      source = `the running server at ${url}`
      await fromServer(connect(url, config.adminToken), out.write)
    } else if (values.url) throw new CliError(`no Arbor answers at ${url}, or ADMIN_TOKEN is not set`)
    else {
      source = where(config)
      await withDb(config, (db) => writeBackup(db, out.write))
    }
    await out.done()
  } catch (err) {
    out.abandon()
    throw err instanceof BackupError ? new CliError(err.message) : err
  }
  if (file !== '-') console.error(`arbor: backup of ${source} written to ${resolve(file)}`)
}

export async function restoreCommand(config: Config, argv: string[]): Promise<void> {
  const { positionals } = parse(argv, {}, { min: 1, max: 1 })
  const file = positionals[0]!
  if (file !== '-' && !existsSync(file)) throw new CliError(`no such file: ${file}`)
  if (file !== '-' && statSync(file).isDirectory()) throw new CliError(`${file} is a directory, not a backup file`)
  // A file is read twice: first for what needs no database (the header, every line's shape, the
  // end line: src/backup/restore.ts checkBackup), so that a damaged file is refused before a
  // database is opened, created or built; only a DATA_DIR a server holds, which opening nothing
  // tells, is refused before it (exit 3). Stdin is read once, by the restore, which checks the same.
  if (file !== '-') {
    if (!config.databaseUrl) await lockedAsCli(() => refuseLocked(config.dataDir), true)
    await checkBackup(splitLines(createReadStream(file))).catch(refused)
  }
  const input = file === '-' ? process.stdin : createReadStream(file)
  // a refused restore leaves no trace: the embedded database it created (or its directory) goes
  const dataDir = resolve(config.dataDir)
  const created = config.databaseUrl
    ? null
    : !existsSync(dataDir)
      ? dataDir
      : !existsSync(join(dataDir, 'pgdata'))
        ? join(dataDir, 'pgdata')
        : null
  const counts = await withDb(
    config,
    async (db) => {
      try {
        // lines end at "\n" only (src/backup/lines.ts): never at U+2028, U+2029 or U+0085 inside a string
        return await restore(db, splitLines(input))
      } catch (err) {
        return refused(err)
      }
    },
    { create: true },
  ).catch((err) => {
    if (created && !(err instanceof CliError && err.exitCode === 3)) rmSync(created, { recursive: true, force: true })
    throw err
  })
  const total = Object.values(counts).reduce((a, b) => a + b, 0)
  console.error(`arbor: restored ${total} rows of ${Object.keys(counts).length} tables into ${where(config)}`)
}

/** A restore's failure as the operator reads it: one line; nothing was restored. */
function refused(err: unknown): never {
  if (err instanceof RestoreError) throw new CliError(`${err.message}; nothing was restored`)
  // the database's or the file's own word (a lost connection, a read error): one line, the transaction undid the rest
  throw new CliError(`the restore failed, nothing was restored: ${String((err as Error).message ?? err).split('\n')[0]}`)
}

const where = (config: Config) => (config.databaseUrl ? 'the PostgreSQL database of DATABASE_URL' : `DATA_DIR ${resolve(config.dataDir)}`)

/** The configured database, opened as it is; an embedded one only when it exists (or `create`). */
async function withDb<T>(config: Config, fn: (db: Db) => Promise<T>, opts: { create?: boolean } = {}): Promise<T> {
  if (!config.databaseUrl && !opts.create && !existsSync(join(config.dataDir, 'pgdata', 'PG_VERSION')))
    throw new CliError(`no database in DATA_DIR ${resolve(config.dataDir)}: set DATA_DIR (or DATABASE_URL) to the one to back up`)
  const db = await lockedAsCli(() => openDbAsIs(config), !!opts.create)
  try {
    return await fn(db)
  } finally {
    await db.close()
  }
}

/** `fn`'s result; a DATA_DIR another process holds as the CliError (exit 3) that says what to do, for a restore or a backup. */
async function lockedAsCli<T>(fn: () => T | Promise<T>, restoring: boolean): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    if (!(err instanceof DataDirLockedError)) throw err
    throw new CliError(
      restoring
        ? `${err.message}. A restore goes only into an empty database that no server holds: restore into a new DATA_DIR, then start the server on it (arbor backup keeps what this one holds first)`
        : `${err.message}; to back up while it runs, set ADMIN_TOKEN (and --url) so the server writes the backup`,
      3,
    )
  }
}

async function fromServer(server: ReturnType<typeof connect>, write: (s: string) => Promise<void>): Promise<void> {
  const res = await server.fetch('/admin/v1/backup')
  const decoder = new TextDecoder()
  let tail = ''
  try {
    for await (const chunk of res.body!) {
      const text = decoder.decode(chunk, { stream: true })
      tail = (tail + text).slice(-4096)
      await write(text)
    }
  } catch (err) {
    throw new CliError(`the backup stream broke off: ${(err as Error).message}`)
  }
  // the server cannot change the status once the rows flow: a missing end line is how a failure shows
  const last = tail.trimEnd().split('\n').at(-1) ?? ''
  if (!last.startsWith('{"end":true')) throw new CliError('the server ended the backup before its end line: see the server log')
}

/**
 * FILE, written to FILE.partial and renamed at the end: a broken backup never takes the name of a
 * good one. The file is opened here, before any row is read, so a directory that does not exist
 * (or cannot be written) is refused at once; a write that fails later rejects the next write.
 */
function openOutput(file: string) {
  const partial = `${file}.partial`
  let stream: Writable = process.stdout
  if (file !== '-') {
    let fd: number
    try {
      fd = openSync(partial, 'w')
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      const dir = dirname(resolve(file))
      if (code === 'ENOENT') throw new CliError(`cannot write ${file}: the directory ${dir} does not exist`)
      if (code === 'EACCES' || code === 'EPERM') throw new CliError(`cannot write ${file}: permission denied in ${dir}`)
      throw new CliError(`cannot write ${partial}: ${(err as Error).message}`)
    }
    try {
      stream = createWriteStream('', { fd })
    } catch (err) {
      closeSync(fd)
      throw err
    }
  }
  let failed: Error | null = null
  stream.on('error', (err) => {
    failed = err
  })
  const write = (s: string) =>
    new Promise<void>((ok, fail) => {
      if (failed) return fail(new CliError(`cannot write ${file}: ${failed.message}`))
      const broke = (err: Error) => fail(new CliError(`cannot write ${file}: ${err.message}`))
      if (stream.write(s)) ok()
      else
        stream
          .once('drain', () => {
            stream.off('error', broke)
            ok()
          })
          .once('error', broke)
    })
  return {
    write,
    async done() {
      if (file === '-') return
      await new Promise<void>((ok, fail) => stream.end((err?: Error | null) => (err ? fail(err) : ok())))
      renameSync(partial, file)
    },
    abandon() {
      if (file === '-') return
      stream.destroy()
      rmSync(partial, { force: true })
    },
  }
}
