import { type PGlite, parse, protocol } from '@electric-sql/pglite'

const { serialize } = protocol
/** "cached plan must not change result type": the schema changed under a prepared statement */
const PLAN_CHANGED = '0A000'

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

/**
 * Named prepared statements for PGlite. Its own `query()` sends Parse, Describe, Bind, Describe,
 * Execute and Sync as six calls into the WebAssembly backend and parses and plans the text every
 * time (0.4–0.9 ms a query). Here each distinct text is parsed once; later calls send
 * Bind+Describe+Execute+Sync in one call and reuse the plan, as postgres.js does on a server.
 * Statements take the same locks as PGlite's own query(): the query lock always, and outside a
 * transaction also the transaction lock, so they never run inside someone else's transaction.
 */
export function preparedRunner(pg: PGlite) {
  const statements = new Map<string, { name: string; types: number[] }>()
  // protected members of PGlite: the locks its own query() takes, and its type maps
  const internals = pg as unknown as {
    _runExclusiveQuery<T>(fn: () => Promise<T>): Promise<T>
    _runExclusiveTransaction<T>(fn: () => Promise<T>): Promise<T>
    serializers: Record<number, (v: unknown) => string>
    parsers: Record<number, (v: string, typeId?: number) => unknown>
  }
  let counter = 0

  async function prepare(text: string) {
    let st = statements.get(text)
    if (st) return st
    const name = `arbor_${++counter}`
    const r = await pg.execProtocol(
      concat([serialize.parse({ name, text, types: [] }), serialize.describe({ type: 'S', name }), serialize.sync()]),
      {
        syncToFs: false,
      },
    )
    const description = r.messages.find((m) => m.name === 'parameterDescription') as { dataTypeIDs?: number[] } | undefined
    st = { name, types: description?.dataTypeIDs ?? [] }
    statements.set(text, st)
    return st
  }

  async function execute<T>(text: string, params: unknown[], inTx: boolean): Promise<T[]> {
    const st = await prepare(text)
    const values = params.map((v, i) => {
      if (v === null || v === undefined) return null
      const serializer = internals.serializers[st.types[i]!]
      return serializer ? serializer(v) : String(v)
    })
    const r = await pg.execProtocol(
      concat([serialize.bind({ statement: st.name, values }), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync()]),
      { syncToFs: !inTx },
    )
    return (parse.parseResults(r.messages, internals.parsers)[0]?.rows ?? []) as T[]
  }

  return async function run<T>(text: string, params: unknown[], inTx: boolean): Promise<T[]> {
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
}
