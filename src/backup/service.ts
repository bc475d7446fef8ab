import type { Db } from '../db'
import { escapeLineBreaks, MAX_LINE_BYTES } from './lines'
import { appliedMigrations, beginSnapshot, dependencyOrder, listForeignKeys, listSequences, listTables, quote } from './queries'

/**
 * A logical backup: one NDJSON stream, readable by `arbor restore` into PGlite or PostgreSQL.
 *
 *   {"format":"arbor-backup","version":1,"migrations":[…],"createdAt":…,"tables":[{name,columns,generated}…]}
 *   {"t":"<table>","r":{<row as row_to_json>}}      one line per row, tables in foreign-key order
 *   {"s":"<sequence>","v":<last_value>,"c":<is_called>}
 *   {"end":true,"rows":{"<table>":<count>…}}        absent when the stream broke off: restore refuses it
 *
 * Every table is read in one transaction: REPEATABLE READ on PostgreSQL (one snapshot while
 * writers go on), PGlite's exclusive transaction on the embedded database (writers wait).
 */
export const BACKUP_FORMAT = 'arbor-backup'
export const BACKUP_VERSION = 1
/** rows fetched per round trip from the cursor: bounded memory whatever a table's size */
const PAGE = 500

/** A database this backup cannot hold as its restore reads it: one line for the operator. */
export class BackupError extends Error {}

export interface BackupHeader {
  format: typeof BACKUP_FORMAT
  version: number
  migrations: string[]
  createdAt: string
  database: Db['kind']
  tables: { name: string; columns: string[]; generated: string[] }[]
}

/**
 * Write the whole database to `write`, whole lines (each with its newline) per call; `write` may
 * wait (backpressure). A row whose line would be longer than `maxLineBytes` (what a restore reads)
 * throws a BackupError before anything of its page is written.
 */
export async function writeBackup(
  db: Db,
  write: (line: string) => Promise<void>,
  now = new Date(),
  maxLineBytes = MAX_LINE_BYTES,
): Promise<void> {
  // a reader that splits lines at U+2028, U+2029 or U+0085 (JSON leaves them raw in strings) still reads each line whole
  const sink = (text: string) => write(escapeLineBreaks(text))
  await db.tx(async (tx) => {
    if (tx.kind === 'postgres') await beginSnapshot(tx)
    const migrations = await appliedMigrations(tx)
    const tables = dependencyOrder(await listTables(tx), await listForeignKeys(tx))
    const header: BackupHeader = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      migrations,
      createdAt: now.toISOString(),
      database: tx.kind,
      tables,
    }
    await sink(`${JSON.stringify(header)}\n`)
    const rows: Record<string, number> = {}
    for (const [i, table] of tables.entries()) {
      rows[table.name] = 0
      const cursor = `arbor_backup_${i}`
      // row_to_json keeps every type's full text form (timestamps to the microsecond, bytea as hex)
      await tx.query(`declare ${cursor} no scroll cursor for select row_to_json(t)::text as r from ${quote(table.name)} t`)
      for (;;) {
        const page = await tx.query<{ r: string }>(`fetch ${PAGE} from ${cursor}`)
        if (!page.length) break
        rows[table.name] += page.length
        const lines = page.map((p) => escapeLineBreaks(`{"t":${JSON.stringify(table.name)},"r":${p.r}}\n`))
        // a UTF-16 unit takes at most 3 bytes of UTF-8: only a line that may be too long is measured
        for (const line of lines) if (line.length * 3 > maxLineBytes) refuseLongLine(table.name, line, maxLineBytes)
        await write(lines.join(''))
      }
      await tx.query(`close ${cursor}`)
    }
    for (const name of await listSequences(tx)) {
      const [s] = await tx.query<{ v: string; c: boolean }>(`select last_value::text as v, is_called as c from ${quote(name)}`)
      await sink(`${JSON.stringify({ s: name, v: Number(s!.v), c: s!.c })}\n`)
    }
    await sink(`${JSON.stringify({ end: true, rows })}\n`)
  })
}

/**
 * A row whose line is longer than a restore reads (MAX_LINE_BYTES) fails the backup here, rather
 * than writing a file that its restore refuses. The API keeps every text field to 20,000
 * characters, so only a value written into the database by other means makes such a row.
 */
function refuseLongLine(table: string, line: string, max: number): void {
  const bytes = Buffer.byteLength(line, 'utf8')
  if (bytes <= max) return
  const mib = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`
  // the row's first columns (a table's key comes first) name it for the operator
  const start = line.slice(line.indexOf('"r":') + 4, line.indexOf('"r":') + 84)
  throw new BackupError(
    `a row of table ${table} (${start}…) takes ${mib(bytes)} as a line of the backup, and a restore reads lines of at most ${mib(max)}: no backup was written`,
  )
}

/** The backup as a byte stream with backpressure (GET /admin/v1/backup). A client that goes away ends the transaction. */
export function backupStream(db: Db, onError: (err: unknown) => void): ReadableStream<Uint8Array> {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>(undefined, { highWaterMark: 64 })
  const writer = writable.getWriter()
  const encoder = new TextEncoder()
  writeBackup(db, async (line) => {
    await writer.ready
    await writer.write(encoder.encode(line))
  }).then(
    () => writer.close(),
    (err) => {
      onError(err)
      // the response has started: breaking the stream (no end line) is how the client learns
      return writer.abort(err).catch(() => {})
    },
  )
  return readable
}

// what the doctor reads of a database: its schema level
export { appliedMigrations }
