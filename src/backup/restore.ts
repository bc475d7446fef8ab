import type { Db } from '../db'
import { migrate, migrationNames } from '../db/migrate'
import { listForeignKeys, listTables, quote, type Table } from './queries'
import { BACKUP_FORMAT, BACKUP_VERSION, type BackupHeader } from './service'

/** A backup this build cannot restore, or a target it must not restore into: one line for the operator. */
export class RestoreError extends Error {}

/** rows per INSERT: one parameter (a JSON array), so the size is bounded by memory only */
const BATCH = 500

type Line = { t: string; r: Record<string, unknown> } | { s: string; v: number; c: boolean } | { end: true; rows: Record<string, number> }

/**
 * Load a backup (src/backup/service.ts) into an empty database: build the schema to the backup's
 * migration level, insert every row in one transaction (tables in foreign-key order, the rows of
 * a table that references itself parents first, user triggers off so nothing is derived twice),
 * set every sequence, then apply the migrations newer than the backup. Returns the row counts.
 */
export async function restore(db: Db, lines: AsyncIterable<string>): Promise<Record<string, number>> {
  const iterator = lines[Symbol.asyncIterator]()
  const first = await iterator.next()
  if (first.done) throw new RestoreError('the backup is empty')
  const header = parseHeader(first.value)
  await refuseNonEmpty(db)
  await migrate(db, header.migrations.at(-1))
  const tables = await checkTables(db, header)
  const selfRefs = await selfReferences(db)

  const counts = await db.tx(async (tx) => {
    for (const t of tables.values()) await tx.exec(`alter table ${quote(t.name)} disable trigger user`)
    const counts: Record<string, number> = {}
    let end: Record<string, number> | null = null
    // the rows read but not yet inserted, all of one table
    const pending: { table: string; rows: Record<string, unknown>[] } = { table: '', rows: [] }
    const flush = async () => {
      const refs = selfRefs.get(pending.table)
      const rows = refs ? parentsFirst(pending.rows, refs) : pending.rows
      for (let i = 0; i < rows.length; i += BATCH) await insert(tx, tables.get(pending.table)!, rows.slice(i, i + BATCH))
      pending.rows = []
    }
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      if (!next.value.trim()) continue
      if (end) throw new RestoreError('the backup goes on after its end line')
      const line = JSON.parse(next.value) as Line
      if ('t' in line) {
        if (!tables.has(line.t)) throw new RestoreError(`the backup has rows of table ${line.t}, which its header does not list`)
        if (pending.table !== line.t) {
          await flush()
          pending.table = line.t
        }
        pending.rows.push(line.r)
        counts[line.t] = (counts[line.t] ?? 0) + 1
        // a table that references itself is ordered whole; any other goes in batches as it comes
        if (!selfRefs.has(line.t) && pending.rows.length >= BATCH) await flush()
      } else if ('s' in line) {
        await flush()
        await tx.query('select setval($1::regclass, $2, $3)', [quote(line.s), line.v, line.c])
      } else if ('end' in line) {
        await flush()
        end = line.rows
      }
    }
    if (!end) throw new RestoreError('the backup is cut short (no end line): it was not written to the end')
    for (const [name, n] of Object.entries(end))
      if ((counts[name] ?? 0) !== n) throw new RestoreError(`table ${name}: the backup announces ${n} rows but holds ${counts[name] ?? 0}`)
    for (const t of tables.values()) await tx.exec(`alter table ${quote(t.name)} enable trigger user`)
    return counts
  })
  await migrate(db)
  return counts
}

function parseHeader(text: string): BackupHeader {
  let header: BackupHeader
  try {
    header = JSON.parse(text)
  } catch {
    throw new RestoreError('this is not an Arbor backup: its first line is not JSON')
  }
  if (header?.format !== BACKUP_FORMAT) throw new RestoreError('this is not an Arbor backup: its header names no arbor-backup format')
  if (header.version !== BACKUP_VERSION)
    throw new RestoreError(`backup format version ${header.version} is not supported by this Arbor (it reads version ${BACKUP_VERSION})`)
  // the backup's migrations must be the first ones this build knows, in the same order
  header.migrations.forEach((name, i) => {
    if (migrationNames[i] !== name)
      throw new RestoreError(`the backup's schema has migration ${name}, which this Arbor does not know: restore it with a newer Arbor`)
  })
  return header
}

async function refuseNonEmpty(db: Db): Promise<void> {
  for (const t of await listTables(db)) {
    const [row] = await db.query<{ any: boolean }>(`select exists (select 1 from ${quote(t.name)}) as any`)
    if (row!.any) throw new RestoreError(`the target database is not empty (table ${t.name} has rows): restore only into an empty one`)
  }
}

/** The backup's tables as the target has them; a table or column the target lacks is refused, never dropped. */
async function checkTables(db: Db, header: BackupHeader): Promise<Map<string, Table>> {
  const target = new Map((await listTables(db)).map((t) => [t.name, t]))
  const out = new Map<string, Table>()
  for (const t of header.tables) {
    const mine = target.get(t.name)
    if (!mine) throw new RestoreError(`the backup has table ${t.name}, which the schema at ${header.migrations.at(-1)} does not have`)
    const missing = t.columns.filter((c) => !mine.columns.includes(c))
    if (missing.length)
      throw new RestoreError(`the backup has columns ${missing.join(', ')} of table ${t.name}, which this schema does not have`)
    // insert what the backup has, less what the database computes itself
    out.set(t.name, { name: t.name, columns: t.columns.filter((c) => !mine.generated.includes(c)), generated: mine.generated })
  }
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
export function parentsFirst(rows: Record<string, unknown>[], refs: [string[], string[]][]): Record<string, unknown>[] {
  const key = (row: Record<string, unknown>, cols: string[]) => JSON.stringify(cols.map((c) => row[c] ?? null))
  const out: Record<string, unknown>[] = []
  const placed = new Set<Record<string, unknown>>()
  const byKey = refs.map(([, target]) => new Map(rows.map((r) => [key(r, target), r])))
  const place = (row: Record<string, unknown>) => {
    // iterative over the chain of parents: a deep tree must not overflow the stack
    const chain: Record<string, unknown>[] = []
    for (let at: Record<string, unknown> | undefined = row; at && !placed.has(at); ) {
      chain.push(at)
      placed.add(at)
      const current: Record<string, unknown> = at
      at = undefined
      refs.forEach(([cols], i) => {
        if (cols.some((c) => current[c] === null || current[c] === undefined)) return
        const parent = byKey[i]!.get(key(current, cols))
        if (parent && !placed.has(parent)) at = parent
      })
    }
    out.push(...chain.reverse())
  }
  for (const r of rows) place(r)
  return out
}

async function insert(tx: Db, table: Table, rows: Record<string, unknown>[]): Promise<void> {
  const cols = table.columns.map(quote).join(', ')
  await tx.query(
    `insert into ${quote(table.name)} (${cols}) overriding system value select ${cols} from jsonb_populate_recordset(null::${quote(table.name)}, $1::jsonb)`,
    [JSON.stringify(rows)],
  )
}
