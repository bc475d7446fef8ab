import { createReadStream, createWriteStream, existsSync, renameSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import type { Writable } from 'node:stream'
import { RestoreError, restore } from '../backup/restore'
import { writeBackup } from '../backup/service'
import type { Config } from '../config'
import { openDbAsIs } from '../db'
import { DataDirLockedError } from '../db/pglite'
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
  try {
    if (config.adminToken && (await isUp(url))) await fromServer(connect(url, config.adminToken), out.write)
    else if (values.url) throw new CliError(`no Arbor answers at ${url}, or ADMIN_TOKEN is not set`)
    else await withDb(config, (db) => writeBackup(db, out.write))
    await out.done()
  } catch (err) {
    out.abandon()
    throw err
  }
  if (file !== '-') console.error(`arbor: backup written to ${resolve(file)}`)
}

export async function restoreCommand(config: Config, argv: string[]): Promise<void> {
  const { positionals } = parse(argv, {}, { min: 1, max: 1 })
  const file = positionals[0]!
  if (file !== '-' && !existsSync(file)) throw new CliError(`no such file: ${file}`)
  const input = file === '-' ? process.stdin : createReadStream(file)
  const counts = await withDb(
    config,
    async (db) => {
      try {
        return await restore(db, createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY }))
      } catch (err) {
        if (err instanceof RestoreError) throw new CliError(err.message)
        throw err
      }
    },
    { create: true },
  )
  const total = Object.values(counts).reduce((a, b) => a + b, 0)
  console.error(`arbor: restored ${total} rows of ${Object.keys(counts).length} tables into ${where(config)}`)
}

const where = (config: Config) => (config.databaseUrl ? 'the PostgreSQL database of DATABASE_URL' : `DATA_DIR ${resolve(config.dataDir)}`)

/** The configured database, opened as it is; an embedded one only when it exists (or `create`). */
async function withDb<T>(config: Config, fn: (db: Db) => Promise<T>, opts: { create?: boolean } = {}): Promise<T> {
  if (!config.databaseUrl && !opts.create && !existsSync(join(config.dataDir, 'pgdata', 'PG_VERSION')))
    throw new CliError(`no database in DATA_DIR ${resolve(config.dataDir)}: set DATA_DIR (or DATABASE_URL) to the one to back up`)
  let db: Db
  try {
    db = await openDbAsIs(config)
  } catch (err) {
    if (err instanceof DataDirLockedError)
      throw new CliError(`${err.message}; to back up while it runs, set ADMIN_TOKEN (and --url) so the server writes the backup`, 3)
    throw err
  }
  try {
    return await fn(db)
  } finally {
    await db.close()
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

/** FILE, written to FILE.partial and renamed at the end: a broken backup never takes the name of a good one. */
function openOutput(file: string) {
  const partial = `${file}.partial`
  const stream: Writable = file === '-' ? process.stdout : createWriteStream(partial)
  const write = (s: string) =>
    new Promise<void>((ok, fail) => {
      if (stream.write(s)) ok()
      else stream.once('drain', ok).once('error', fail)
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
