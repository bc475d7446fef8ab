import { type PGlite, protocol } from '@electric-sql/pglite'

const { serialize } = protocol
/** "cached plan must not change result type": the schema changed under a prepared statement */
const PLAN_CHANGED = '0A000'

type Parser = (value: string, typeId: number) => unknown

interface Statement {
  name: string
  /** parameter type ids, from the Describe at prepare time */
  types: number[]
  /** result columns, from the same Describe: names and the parser of each column's type */
  columns: { name: string; typeId: number; parse: Parser | undefined }[]
}

/**
 * What this runner uses of PGlite beyond its documented API (`execProtocol`,
 * `execProtocolRawStream`, `parsers`, `serializers`): the two locks its own `query()` takes,
 * public methods of the PGlite class marked internal by their names. The shape of the raw
 * protocol answer is relied on too. `test/pglite-internals.test.ts` fails loudly when an
 * upgrade changes any of it, and package.json pins the exact version.
 */
export interface PgliteInternals {
  _runExclusiveQuery<T>(fn: () => Promise<T>): Promise<T>
  _runExclusiveTransaction<T>(fn: () => Promise<T>): Promise<T>
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

const decoder = new TextDecoder()
const SYNC = serialize.sync()
const EXECUTE_SYNC = concat([serialize.execute({}), SYNC])
const encoder = new TextEncoder()

/**
 * `before` (or nothing), then Bind (the unnamed portal, statement `name`, every parameter and
 * result in text), Execute and Sync, in one buffer: the bytes PGlite's `serialize.bind` and
 * `concat` produce, written once (about a fifth of their time; test/pglite-internals.test.ts
 * compares the two).
 */
export function bindExecuteSync(name: string, values: (string | null)[], before?: Uint8Array): Uint8Array {
  const head = before?.length ?? 0
  // room enough: UTF-8 takes at most 3 bytes for each UTF-16 unit
  let size = head + 1 + 4 + 1 + name.length * 3 + 1 + 2 + 2 * values.length + 2 + 2 + EXECUTE_SYNC.length
  for (const v of values) size += 4 + (v === null ? 0 : v.length * 3)
  const buf = new Uint8Array(size)
  const dv = new DataView(buf.buffer)
  if (before) buf.set(before)
  let at = head + 5
  buf[head] = 66 // B: Bind; its length at head + 1, once known
  buf[at++] = 0 // the unnamed portal
  at += encoder.encodeInto(name, buf.subarray(at)).written
  buf[at++] = 0
  dv.setInt16(at, values.length) // a format code for each parameter: 0, text (the buffer is zeroed)
  at += 2 + 2 * values.length
  dv.setInt16(at, values.length)
  at += 2
  for (const v of values) {
    if (v === null) {
      dv.setInt32(at, -1)
      at += 4
      continue
    }
    const n = encoder.encodeInto(v, buf.subarray(at + 4)).written
    dv.setInt32(at, n)
    at += 4 + n
  }
  dv.setInt16(at, 0) // results: text
  at += 2
  dv.setInt32(head + 1, at - head - 1)
  buf.set(EXECUTE_SYNC, at)
  return buf.subarray(0, at + EXECUTE_SYNC.length)
}

/** The fields of an ErrorResponse, as PGlite's own parser reports them (a DatabaseError). */
function databaseError(bytes: Uint8Array, at: number, end: number, length: number): Error {
  const fields: Record<string, string> = {}
  while (at < end && bytes[at] !== 0) {
    const key = String.fromCharCode(bytes[at]!)
    let stop = at + 1
    while (bytes[stop] !== 0) stop++
    fields[key] = decoder.decode(bytes.subarray(at + 1, stop))
    at = stop + 1
  }
  const err = new protocol.messages.DatabaseError(fields.M ?? 'database error', length, 'error')
  // the ErrorResponse field codes of the PostgreSQL protocol, by the names pg's DatabaseError gives them
  return Object.assign(err, {
    severity: fields.S,
    code: fields.C,
    detail: fields.D,
    hint: fields.H,
    position: fields.P,
    where: fields.W,
    schema: fields.s,
    table: fields.t,
    column: fields.c,
    dataType: fields.d,
    constraint: fields.n,
    routine: fields.R,
  })
}

/**
 * Rows of one Bind/Execute/Sync answer, decoded as the bytes arrive from the backend: each
 * text field is read once from the backend's buffer (no copy of the message, none per field)
 * and parsed with the column's parser chosen at prepare time. A message split across two
 * chunks is the only thing ever copied.
 */
function createDecoder(st: Statement) {
  const rows: Record<string, unknown>[] = []
  let error: Error | undefined
  let tag = ''
  let carry: Uint8Array | null = null
  const cols = st.columns
  const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength)

  function messages(bytes: Uint8Array) {
    const dv = view(bytes)
    let at = 0
    while (at + 5 <= bytes.length) {
      const type = bytes[at]!
      const length = dv.getInt32(at + 1)
      const end = at + 1 + length
      if (end > bytes.length) break
      if (type === 68 /* D: DataRow */) {
        let p = at + 7 // type, length, field count
        const row: Record<string, unknown> = {}
        for (let i = 0; i < cols.length; i++) {
          const n = dv.getInt32(p)
          p += 4
          const col = cols[i]!
          if (n === -1) row[col.name] = null
          else {
            const text = decoder.decode(bytes.subarray(p, p + n))
            row[col.name] = col.parse ? col.parse(text, col.typeId) : text
            p += n
          }
        }
        rows.push(row)
      } else if (type === 69 /* E: ErrorResponse */ && !error) error = databaseError(bytes, at + 5, end, length)
      else if (type === 67 /* C: CommandComplete */) tag = decoder.decode(bytes.subarray(at + 5, end - 1))
      // everything else (ParseComplete, BindComplete, ReadyForQuery, notices) says nothing we need
      at = end
    }
    return at
  }

  return {
    onRawData(chunk: Uint8Array) {
      let at = 0
      // a message split across chunks: complete it with only the bytes it still needs
      while (carry) {
        const headerDone = carry.length >= 5
        const need = headerDone ? 1 + view(carry).getInt32(1) : 5
        const take = Math.min(need - carry.length, chunk.length - at)
        if (take > 0) {
          carry = concat([carry, chunk.subarray(at, at + take)])
          at += take
        }
        if (carry.length < need) return
        if (!headerDone) continue
        messages(carry)
        carry = null
      }
      const rest = at ? chunk.subarray(at) : chunk
      const used = messages(rest)
      if (used < rest.length) carry = rest.slice(used) // a message continues in the next chunk
    },
    result() {
      if (error) throw error
      return rows
    },
    /** the command tag of the last statement completed ('COMMIT', 'ROLLBACK', 'UPDATE 1'...) */
    tag: () => tag,
  }
}

/**
 * Named prepared statements for PGlite. Its own `query()` sends Parse, Describe, Bind, Describe,
 * Execute and Sync as six calls into the WebAssembly backend, parses and plans the text every
 * time, and decodes the answer through generic message objects with a copy of every field.
 * Here each distinct text is parsed and described once; later calls send Bind+Execute+Sync in
 * one call, reuse the plan and the column descriptions, and decode the rows straight from the
 * backend's output. Statements take the same locks as PGlite's own query(): the query lock
 * always, and outside a transaction also the transaction lock, so they never run inside someone
 * else's transaction.
 */
export function preparedRunner(pg: PGlite) {
  const statements = new Map<string, Statement>()
  const internals = pg as unknown as PgliteInternals
  // PGlite's type maps: the defaults plus the array types it reads from the catalog at start
  const parsers = pg.parsers as Record<number, Parser>
  const serializers = pg.serializers as Record<number, (v: unknown) => string>
  let counter = 0

  async function prepare(text: string) {
    let st = statements.get(text)
    if (st) return st
    const name = `arbor_${++counter}`
    const r = await pg.execProtocol(concat([serialize.parse({ name, text, types: [] }), serialize.describe({ type: 'S', name }), SYNC]), {
      syncToFs: false,
    })
    const params = r.messages.find((m) => m.name === 'parameterDescription') as { dataTypeIDs?: number[] } | undefined
    const rowDescription = r.messages.find((m) => m.name === 'rowDescription') as
      | { fields: { name: string; dataTypeID: number }[] }
      | undefined
    st = {
      name,
      types: params?.dataTypeIDs ?? [],
      columns: (rowDescription?.fields ?? []).map((f) => ({ name: f.name, typeId: f.dataTypeID, parse: parsers[f.dataTypeID] })),
    }
    statements.set(text, st)
    return st
  }

  /**
   * A transaction's BEGIN, not sent yet: it goes in front of the transaction's first statement,
   * in the same call into the backend (at most one transaction runs: the transaction lock).
   */
  let beginPending: Uint8Array | null = null

  async function send(text: string, params: unknown[], syncToFs: boolean) {
    const st = await prepare(text)
    const values = params.map((v, i) => {
      if (v === null || v === undefined) return null
      const serializer = serializers[st.types[i]!]
      return serializer ? serializer(v) : String(v)
    })
    const decode = createDecoder(st)
    const message = bindExecuteSync(st.name, values, beginPending ?? undefined)
    beginPending = null
    await pg.execProtocolRawStream(message, { syncToFs, onRawData: decode.onRawData })
    return decode
  }

  async function execute<T>(text: string, params: unknown[], inTx: boolean): Promise<T[]> {
    return (await send(text, params, !inTx)).result() as T[]
  }

  async function run<T>(text: string, params: unknown[], inTx: boolean): Promise<T[]> {
    const once = () => internals._runExclusiveQuery(() => execute<T>(text, params, inTx))
    const attempt = () => (inTx ? once() : internals._runExclusiveTransaction(once))
    try {
      return await attempt()
    } catch (err) {
      // a statement prepared before a schema change: prepare it again (outside a transaction only,
      // where nothing has been aborted by the failure)
      if ((err as { code?: string }).code !== PLAN_CHANGED || inTx) throw err
      statements.delete(text)
      return attempt()
    }
  }

  /** BEGIN, COMMIT or ROLLBACK, prepared like any statement; its command tag */
  const control = (text: 'begin' | 'commit' | 'rollback', syncToFs: boolean) =>
    internals._runExclusiveQuery(async () => {
      const decode = await send(text, [], syncToFs)
      decode.result()
      return decode.tag()
    })

  let begin: Uint8Array | undefined

  /**
   * PGlite's transaction() under the same lock, with BEGIN and COMMIT sent as prepared
   * statements: its own sends each as a simple query and a Sync (two calls into the backend),
   * decoded through its generic message objects. Here BEGIN goes with the first statement and
   * COMMIT alone, one call each; a transaction that sent no statement sends neither. As there, a
   * failure rolls back, and a COMMIT that the server answers with ROLLBACK (the transaction had
   * failed and the error was caught) rejects with 25P02.
   */
  function transaction<T>(fn: () => Promise<T>): Promise<T> {
    return internals._runExclusiveTransaction(async () => {
      begin ??= await internals._runExclusiveQuery(async () =>
        concat([serialize.bind({ statement: (await prepare('begin')).name, values: [] }), serialize.execute({})]),
      )
      beginPending = begin
      let result: T
      try {
        result = await fn()
      } catch (err) {
        if (beginPending) beginPending = null
        else await control('rollback', true)
        throw err
      }
      if (beginPending) {
        beginPending = null
        return result
      }
      if ((await control('commit', true)) === 'ROLLBACK')
        throw Object.assign(new protocol.messages.DatabaseError('Transaction was rolled back instead of committed', 0, 'error'), {
          severity: 'ERROR',
          code: '25P02',
        })
      return result
    })
  }

  /** Simple-protocol SQL (several statements, no parameters) inside `transaction`: the query lock only. */
  async function execInTransaction(text: string): Promise<void> {
    await internals._runExclusiveQuery(async () => {
      if (beginPending) {
        beginPending = null
        await send('begin', [], false)
      }
      await pg.execProtocol(concat([serialize.query(text), SYNC]), { syncToFs: false })
    })
  }

  return { run, transaction, execInTransaction }
}
