import type { Db } from '../db'
import { migrate, migrationNames } from '../db/migrate'
import { savepoint } from '../db/port'
import { sqlState } from '../db/sqlstate'
import { LineError } from './lines'
import { checkCastRules, listForeignKeys, listSequences, listTables, quote, type Table } from './queries'
import { BACKUP_FORMAT, BACKUP_VERSION, type BackupHeader } from './service'

/** A backup this build cannot restore, or a target it must not restore into: one line for the operator. */
export class RestoreError extends Error {}

/** rows per INSERT: one parameter (a JSON array), so the size is bounded by memory only */
const BATCH = 500

/** A row line as read: its line number, its parsed row (for ordering) and the row's own JSON text (inserted as it is). */
interface Row {
  line: number
  row: Record<string, unknown>
  raw: string
}

/**
 * Load a backup (src/backup/service.ts) into an empty database, all in one transaction: build
 * the schema to the backup's migration level, insert every row (tables in foreign-key order, the
 * rows of a table that references itself parents first, user triggers off so nothing is derived
 * twice), set every sequence, check that every table of the header holds the rows the end line
 * announces and that nothing follows it, then apply the migrations newer than the backup, and
 * check every row against the rules the app's statements keep by a cast to a domain (the generic
 * insert here makes none: sql/backup/cast-rules.sql).
 * Anything wrong, and nothing is left behind, not even the schema: a RestoreError names the line.
 *
 * Nothing here names a table: the tables are the header's, checked against the schema the
 * migrations build, so a table a new migration adds travels without a change here.
 * Returns the row count of every table of the header.
 */
export async function restore(db: Db, lines: AsyncIterable<string>): Promise<Record<string, number>> {
  const reader = numbered(lines)
  const header = await readHeader(reader)
  await refuseNonEmpty(db)
  return db.tx(async (tx) => {
    await migrate(tx, header.migrations.at(-1))
    const tables = await checkTables(tx, header)
    const selfRefs = await selfReferences(tx)
    const sequences = new Set(await listSequences(tx))
    for (const t of tables.values()) await tx.exec(`alter table ${quote(t.name)} disable trigger user`)
    const reading = new Reading(header)
    // the rows read but not yet inserted, all of one table
    const pending: { table: string; rows: Row[] } = { table: '', rows: [] }
    const flush = async () => {
      const refs = selfRefs.get(pending.table)
      const rows = refs ? parentsFirst(pending.rows, refs, (r) => r.row) : pending.rows
      for (let i = 0; i < rows.length; i += BATCH) await insert(tx, tables.get(pending.table)!, rows.slice(i, i + BATCH))
      pending.rows = []
    }
    for (let next = await reader.next(); !next.done; next = await reader.next()) {
      const { n, text } = next.value
      const line = reading.take(n, text)
      if (line.kind === 'row') {
        if (pending.table !== line.t) {
          await flush()
          pending.table = line.t
        }
        pending.rows.push({ line: n, row: line.r, raw: rowText(text, line) })
        // a table that references itself is ordered whole; any other goes in batches as it comes
        if (!selfRefs.has(line.t) && pending.rows.length >= BATCH) await flush()
      } else if (line.kind === 'sequence') {
        await flush()
        if (!sequences.has(line.s)) throw new RestoreError(`line ${n}: sequence ${line.s} is not one of this schema's`)
        try {
          await tx.query('select setval($1::regclass, $2, $3)', [quote(line.s), line.v, line.c])
        } catch (err) {
          if (!sqlState(err)) throw err
          throw new RestoreError(`line ${n}: sequence ${line.s}: ${oneLine(err)}`)
        }
      } else await flush()
    }
    await flush()
    const counts = reading.finish({ rowCounts: true })
    for (const t of tables.values()) await tx.exec(`alter table ${quote(t.name)} enable trigger user`)
    await migrate(tx)
    // the rules the app's statements keep by a cast to a domain, which the inserts above did not make
    await checkCastRules(tx).catch((err) => {
      if (!sqlState(err)) throw err
      throw new RestoreError(`a row the schema refuses: ${oneLine(err)}`)
    })
    return counts
  })
}

/**
 * What `restore` refuses without a database, checked over the whole backup before one is opened:
 * the header, every line's shape, a row of a table or a column the header does not list, the end
 * line (there, with a count for each table the header lists and no other) and nothing after it,
 * in the words of `restore`, which checks all this again as it loads. Left to the restore: the
 * tables, columns and sequences of the schema, every value (its type, keys, references, the rules
 * of a cast), and a count that is not the number of rows: a row added or taken out, which the
 * database names by its line when it can (a duplicate key, a child whose parent was taken out).
 */
export async function checkBackup(lines: AsyncIterable<string>): Promise<void> {
  const reader = numbered(lines)
  const reading = new Reading(await readHeader(reader))
  for await (const { n, text } of reader) reading.take(n, text)
  reading.finish({ rowCounts: false })
}

/** The header, from the first non-blank line. */
async function readHeader(reader: AsyncGenerator<{ n: number; text: string }>): Promise<BackupHeader> {
  const first = await reader.next()
  if (first.done) throw new RestoreError('the backup is empty')
  return parseHeader(first.value.text)
}

/**
 * The lines after the header, read in order and checked against the header alone: each one's
 * shape, a row's table and columns, the end line and what follows it; it counts the rows.
 */
class Reading {
  private readonly columns: Map<string, Set<string>>
  private readonly counts: Record<string, number>
  private end: { line: number; rows: Record<string, unknown> } | null = null

  constructor(header: BackupHeader) {
    this.columns = new Map(header.tables.map((t) => [t.name, new Set(t.columns)]))
    this.counts = Object.fromEntries(header.tables.map((t) => [t.name, 0]))
  }

  /** Line `n`'s meaning, or the RestoreError that names what is wrong with it. */
  take(n: number, text: string): Line {
    if (this.end) throw new RestoreError(`line ${n}: the backup goes on after its end line (line ${this.end.line}): the file was altered`)
    const line = parseLine(n, text)
    if (line.kind === 'row') {
      const columns = this.columns.get(line.t)
      if (!columns) throw new RestoreError(`line ${n}: a row of table ${line.t}, which the header does not list`)
      const unknown = Object.keys(line.r).filter((c) => !columns.has(c))
      if (unknown.length) throw new RestoreError(`line ${n}: table ${line.t} has no column ${unknown.join(', ')} in the header`)
      this.counts[line.t]!++
    } else if (line.kind === 'end') this.end = { line: n, rows: line.rows }
    return line
  }

  /**
   * The row count of every table of the header, once the end line is there and counts each of
   * them and no other; with `rowCounts`, each count the number of rows read.
   */
  finish({ rowCounts }: { rowCounts: boolean }): Record<string, number> {
    const end = this.end
    if (!end) throw new RestoreError('the backup is cut short (no end line): it was not written to the end')
    for (const name of Object.keys(end.rows))
      if (!this.columns.has(name))
        throw new RestoreError(`line ${end.line}: the end line counts table ${name}, which the header does not list`)
    for (const [name, n] of Object.entries(this.counts)) {
      const announced = end.rows[name]
      if (announced === undefined)
        throw new RestoreError(`line ${end.line}: the end line announces no row count for table ${name}, which the header lists`)
      if (rowCounts && announced !== n)
        throw new RestoreError(`table ${name}: the end line (line ${end.line}) announces ${announced} rows but the backup holds ${n}`)
    }
    return this.counts
  }
}

/** The non-blank lines with their numbers (counted over every line, blank ones too). */
async function* numbered(lines: AsyncIterable<string>): AsyncGenerator<{ n: number; text: string }> {
  let n = 0
  try {
    for await (const text of lines) {
      n++
      if (text.trim()) yield { n, text }
    }
  } catch (err) {
    if (err instanceof LineError) throw new RestoreError(err.message)
    throw err
  }
}

const oneLine = (err: unknown) => String((err as Error).message ?? err).split('\n')[0]
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string')
const isCount = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0

type Line =
  | { kind: 'row'; t: string; r: Record<string, unknown> }
  | { kind: 'sequence'; s: string; v: number; c: boolean }
  | { kind: 'end'; rows: Record<string, unknown> }

// how the backup writes a row: {"t":"<table>","r":{…}}; the row's own text is kept so that numbers keep every digit
const ROW_PREFIX = /^\{"t":"((?:[^"\\]|\\.)*)","r":/

/**
 * The JSON text of a row line's row, to insert as it is: the line's own text where it is written
 * as the backup writes it, else the parsed row again (a number may then lose digits). Only the
 * restore needs it: checkBackup reads a row's shape alone.
 */
function rowText(text: string, line: { t: string; r: Record<string, unknown> }): string {
  const prefix = ROW_PREFIX.exec(text)
  const trimmed = text.trimEnd()
  const own = prefix && trimmed.endsWith('}') && JSON.parse(`"${prefix[1]}"`) === line.t
  return own ? trimmed.slice(prefix[0].length, -1) : JSON.stringify(line.r)
}

function parseLine(n: number, text: string): Line {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw new RestoreError(`line ${n}: not valid JSON (${oneLine(err)}): the line was cut in the middle or altered`)
  }
  const shape = `line ${n}: not a row, a sequence or the end line of an Arbor backup`
  if (!isObject(value))
    throw new RestoreError(`${shape} (it is ${value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`})`)
  const keys = Object.keys(value).sort().join(',')
  if (keys === 'r,t') {
    if (typeof value.t !== 'string') throw new RestoreError(`line ${n}: a row's table ("t") must be a string`)
    if (!isObject(value.r)) throw new RestoreError(`line ${n}: a row ("r") must be a JSON object of its columns`)
    return { kind: 'row', t: value.t, r: value.r }
  }
  if (keys === 'c,s,v') {
    if (typeof value.s !== 'string' || !Number.isSafeInteger(value.v) || typeof value.c !== 'boolean')
      throw new RestoreError(`line ${n}: a sequence line needs a name ("s"), an integer value ("v") and a boolean ("c")`)
    return { kind: 'sequence', s: value.s, v: value.v as number, c: value.c }
  }
  if (keys === 'end,rows') {
    const rows = value.rows
    if (value.end !== true || !isObject(rows) || !Object.values(rows).every(isCount))
      throw new RestoreError(`line ${n}: the end line needs "end": true and "rows": the row count of each table`)
    return { kind: 'end', rows }
  }
  throw new RestoreError(shape)
}

function parseHeader(text: string): BackupHeader {
  let header: unknown
  try {
    header = JSON.parse(text)
  } catch {
    throw new RestoreError('this is not an Arbor backup: its first line is not JSON')
  }
  if (!isObject(header) || header.format !== BACKUP_FORMAT)
    throw new RestoreError('this is not an Arbor backup: its header names no arbor-backup format')
  if (header.version !== BACKUP_VERSION)
    throw new RestoreError(`backup format version ${header.version} is not supported by this Arbor (it reads version ${BACKUP_VERSION})`)
  const { migrations, tables } = header
  if (!isStrings(migrations) || !migrations.length) throw new RestoreError('line 1: the header names no migrations')
  if (!Array.isArray(tables) || !tables.every((t) => isObject(t) && typeof t.name === 'string' && isStrings(t.columns)))
    throw new RestoreError('line 1: the header\'s "tables" must list each table with its name and columns')
  const names = tables.map((t) => t.name as string)
  const twice = names.find((name, i) => names.indexOf(name) !== i)
  if (twice) throw new RestoreError(`line 1: the header lists table ${twice} twice`)
  // the backup's migrations must be the first ones this build knows, in the same order
  migrations.forEach((name, i) => {
    if (migrationNames[i] !== name)
      throw new RestoreError(`the backup's schema has migration ${name}, which this Arbor does not know: restore it with a newer Arbor`)
  })
  return header as unknown as BackupHeader
}

async function refuseNonEmpty(db: Db): Promise<void> {
  for (const t of await listTables(db)) {
    const [row] = await db.query<{ any: boolean }>(`select exists (select 1 from ${quote(t.name)}) as any`)
    if (row!.any) throw new RestoreError(`the target database is not empty (table ${t.name} has rows): restore only into an empty one`)
  }
}

/** A table to load: the columns to insert (the backup's, less those the database computes) and every column the backup has. */
type Target = Table & { all: Set<string> }

/** The backup's tables as the target has them; a table or column the target lacks is refused, never dropped. */
async function checkTables(db: Db, header: BackupHeader): Promise<Map<string, Target>> {
  const target = new Map((await listTables(db)).map((t) => [t.name, t]))
  const out = new Map<string, Target>()
  for (const t of header.tables) {
    const mine = target.get(t.name)
    if (!mine) throw new RestoreError(`the backup has table ${t.name}, which the schema at ${header.migrations.at(-1)} does not have`)
    const missing = t.columns.filter((c) => !mine.columns.includes(c))
    if (missing.length)
      throw new RestoreError(`the backup has columns ${missing.join(', ')} of table ${t.name}, which this schema does not have`)
    // insert what the backup has, less what the database computes itself
    const columns = t.columns.filter((c) => !mine.generated.includes(c))
    out.set(t.name, { name: t.name, columns, generated: mine.generated, all: new Set(t.columns) })
  }
  // a backup holds every table of its schema (src/backup/service.ts): one without a table it
  // should hold (its header entry, rows and count dropped together) would restore it empty
  const lacking = [...target.keys()].filter((name) => !out.has(name))
  if (lacking.length)
    throw new RestoreError(
      `the backup lacks table${lacking.length > 1 ? 's' : ''} ${lacking.join(', ')}, which its schema (at ${header.migrations.at(-1)}) has: the file was altered or cut`,
    )
  return out
}

/** table → [its columns, the columns they reference] of each foreign key to itself */
async function selfReferences(db: Db): Promise<Map<string, [string[], string[]][]>> {
  const out = new Map<string, [string[], string[]][]>()
  for (const fk of await listForeignKeys(db))
    if (fk.table === fk.references) out.set(fk.table, [...(out.get(fk.table) ?? []), [fk.columns, fk.refColumns]])
  return out
}

/** The rows ordered so that a row comes after the row it references (a parent before its children). */
export function parentsFirst<R>(
  rows: R[],
  refs: [string[], string[]][],
  fieldsOf: (row: R) => Record<string, unknown> = (row) => row as Record<string, unknown>,
): R[] {
  const key = (row: R, cols: string[]) => JSON.stringify(cols.map((c) => fieldsOf(row)[c] ?? null))
  const out: R[] = []
  const placed = new Set<R>()
  const byKey = refs.map(([, target]) => new Map(rows.map((r) => [key(r, target), r])))
  const place = (row: R) => {
    // iterative over the chain of parents: a deep tree must not overflow the stack
    const chain: R[] = []
    for (let at: R | undefined = row; at !== undefined && !placed.has(at); ) {
      chain.push(at)
      placed.add(at)
      const current: R = at
      at = undefined
      refs.forEach(([cols], i) => {
        if (cols.some((c) => fieldsOf(current)[c] === null || fieldsOf(current)[c] === undefined)) return
        const parent = byKey[i]!.get(key(current, cols))
        if (parent !== undefined && !placed.has(parent)) at = parent
      })
    }
    out.push(...chain.reverse())
  }
  for (const r of rows) place(r)
  return out
}

/**
 * Insert rows in one statement, under a savepoint. When the database refuses the batch, the
 * savepoint takes it back and its rows are tried one by one to name the line the database
 * refuses, with its reason.
 */
async function insert(tx: Db, table: Table, rows: Row[]): Promise<void> {
  const cols = table.columns.map(quote).join(', ')
  const sql = `insert into ${quote(table.name)} (${cols}) overriding system value select ${cols} from jsonb_populate_recordset(null::${quote(table.name)}, $1::jsonb)`
  const run = (some: Row[]) => tx.query(sql, [`[${some.map((r) => r.raw).join(',')}]`])
  const mark = await savepoint(tx, 'arbor_restore_batch')
  try {
    await run(rows)
    await mark.release()
    return
  } catch (err) {
    if (!sqlState(err)) throw err
    await mark.rollback()
    for (const row of rows) {
      try {
        await run([row])
      } catch (one) {
        if (!sqlState(one)) throw one
        throw new RestoreError(`line ${row.line}: table ${table.name}: ${oneLine(one)}`)
      }
    }
    const lines = rows.map((r) => r.line)
    throw new RestoreError(`lines ${Math.min(...lines)}–${Math.max(...lines)}: table ${table.name}: ${oneLine(err)}`)
  }
}
