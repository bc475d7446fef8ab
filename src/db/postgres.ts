import postgres from 'postgres'
import { createLogger, type Logger } from '../log'
import type { Db, Listener, Row, WaitHeard } from './port'
import { SQLSTATE, sqlState } from './sqlstate'

// biome-ignore lint/complexity/noBannedTypes: postgres.js spells 'no custom types' as {}
type NoTypes = {}
type Conn = postgres.Sql<NoTypes> | postgres.TransactionSql<NoTypes>

/** Inside a transaction: what it notified. */
interface TxState {
  /** every notification, sent together in one statement just before the commit (delivered at the commit all the same) */
  notes: [channel: string, payload: string][]
  /** those on the channels whose commits writers wait to be heard (waitHeard) */
  heard: [channel: string, payload: string][]
  /** the writer's marker sent with them (Listeners.marker) */
  marker?: [channel: string, payload: string] | null
  /** what runs once it has committed (afterCommit) */
  after: (() => void)[]
}

function wrap(
  sql: Conn,
  root: postgres.Sql<NoTypes>,
  rootDb: Db | null,
  listeners: Listeners,
  state: TxState | null = null,
  background?: Db,
): Db {
  const inTx = rootDb !== null
  const db: Db = {
    kind: 'postgres',
    get root() {
      return rootDb ?? db
    },
    background,
    async query<T = Row>(text: string, params: unknown[] = []) {
      listeners.inFlight.count++
      try {
        return (await sql.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: true })) as unknown as T[]
      } finally {
        listeners.inFlight.count--
      }
    },
    inFlight: () => listeners.inFlight.count,
    async exec(text: string) {
      await sql.unsafe(text)
    },
    async tx<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
      if (inTx) return fn(db)
      // Two writers locking the same rows in opposite orders: PostgreSQL aborts one with a
      // deadlock (or serialization) error. Nothing of it was committed, so run it again.
      for (let attempt = 1; ; attempt++) {
        const sent: TxState = { notes: [], heard: [], after: [] }
        try {
          let notified: Promise<unknown> | null = null
          const result = (await root.begin(async (t) => {
            const answer = await fn(wrap(t, root, db, listeners, sent))
            // the writer's marker, delivered after the transaction's notifications (waitHeard)
            if (sent.heard.length > 0) sent.marker = listeners.marker()
            // the notifications and the marker, in their order, in one statement, sent with the
            // commit (one round trip for both): it runs before the commit, and should it fail the
            // commit rolls the transaction back, which awaiting it below reports
            const notes = sent.marker ? [...sent.notes, sent.marker] : sent.notes
            if (notes.length > 0) {
              // prepared (one statement a number of notifications): unprepared, postgres.js would send
              // its Parse and wait for PostgreSQL's description before its Bind, a round trip more
              notified = t.unsafe(`select ${notes.map((_, i) => `pg_notify($${2 * i + 1}, $${2 * i + 2})`).join(', ')}`, notes.flat(), {
                prepare: true,
              })
              notified.catch(() => {})
            }
            return answer
          })) as T
          await notified
          if (sent.heard.length > 0) await listeners.committed(sent.heard, sent.marker ?? null)
          for (const fn of sent.after) fn()
          return result
        } catch (err) {
          listeners.forget(sent.marker)
          const state = sqlState(err)
          const retryable = state === SQLSTATE.deadlockDetected || state === SQLSTATE.serializationFailure
          if (!retryable || attempt >= 4) throw err
          listeners.log.warn('transaction rolled back by PostgreSQL; running it again', { attempt, reason: reasonOf(err) })
          await Bun.sleep(5 * attempt + Math.random() * 20)
        }
      }
    },
    async ping() {
      await sql.unsafe('select 1')
      return true
    },
    async close() {
      await listeners.close()
      await Promise.all([root.end({ timeout: 5 }), ...listeners.pools.map((p) => p.end({ timeout: 5 }))])
    },
    async notify(channel, payload) {
      const waited = listeners.waited.has(channel)
      // inside a transaction: sent with the others just before the commit (tx), which delivers them
      if (state) {
        if (!state.notes.some(([c, p]) => c === channel && p === payload)) state.notes.push([channel, payload])
        if (waited) state.heard.push([channel, payload])
        return
      }
      // outside a transaction, a waited notification carries the writer's marker in the same statement
      const marker = waited ? listeners.marker() : null
      try {
        if (marker) await sql.unsafe('select pg_notify($1, $2), pg_notify($3, $4)', [channel, payload, ...marker])
        else await sql.unsafe('select pg_notify($1, $2)', [channel, payload])
      } catch (err) {
        listeners.forget(marker)
        throw err
      }
      if (waited) await listeners.committed([[channel, payload]], marker)
    },
    afterCommit(fn) {
      if (state) state.after.push(fn)
      else fn()
    },
    waitHeard(channels, wait) {
      for (const c of channels) listeners.waited.add(c)
      listeners.wait = wait
    },
    listen: (channel, listener) => listeners.listen(channel, listener),
  }
  return db
}

type Listeners = ReturnType<typeof createListeners>

/** An error's message for a log line (its SQLSTATE code when it has one). */
const reasonOf = (err: unknown) => {
  const code = err && typeof err === 'object' && 'code' in err ? ` (${String(err.code)})` : ''
  return `${err instanceof Error ? err.message : String(err)}${code}`.slice(0, 500)
}

/**
 * LISTEN on one connection of its own, opened at the first `listen`. When it drops, every
 * listener hears `down` at once, and `up` once it listens again (retried every 250 ms); the loss,
 * the failed attempts (with their reason) and the return are logged.
 */
function createListeners(url: string, log: Pick<Logger, 'warn'>) {
  const channels = new Map<string, Set<Listener>>()
  let conn: postgres.Sql<NoTypes> | null = null
  let connected = false
  let closed = false
  const each = (fn: (l: Listener) => void) => {
    for (const set of channels.values()) for (const l of set) fn(l)
  }
  const quote = (name: string) => `"${name.replace(/"/g, '""')}"`
  /** one notification to this process's listeners of `channel` */
  const deliver = (channel: string, payload: string) => {
    for (const l of channels.get(channel) ?? []) l.message(payload)
  }
  /** this process's writers' markers on their way (committed), each true once it came back on the LISTEN connection */
  const markers = new Map<string, boolean>()
  const markerKey = ([channel, payload]: [string, string]) => `${channel}\n${payload}`
  /** what the LISTEN connection hears */
  const heard = (channel: string, payload: string) => {
    const key = markerKey([channel, payload])
    if (markers.has(key)) markers.set(key, true)
    deliver(channel, payload)
  }

  async function follow(): Promise<void> {
    let failures = 0
    while (!closed) {
      try {
        for (const name of channels.keys()) await conn!.unsafe(`listen ${quote(name)}`)
        connected = true
        if (failures > 0) log.warn('LISTEN connection back', { failedAttempts: failures })
        each((l) => l.up())
        return
      } catch (err) {
        // the first failure and then one line every ~10 s of retries, each with its reason
        if (failures++ % 40 === 0 && !closed)
          log.warn('LISTEN connection failed; retrying every 250 ms', { attempt: failures, reason: reasonOf(err) })
        await Bun.sleep(250)
      }
    }
  }

  function open() {
    // onnotify (every notification, the LISTEN being ours) is an option postgres.js reads but its types do not name
    const options = {
      max: 1,
      connect_timeout: CONNECT_TIMEOUT_S,
      idle_timeout: 0,
      max_lifetime: null,
      fetch_types: false,
      onnotice: () => {},
      connection: { application_name: 'arbor-listen' },
      onnotify: heard,
      onclose: () => {
        if (closed || !connected) return
        connected = false
        log.warn('LISTEN connection lost; listening again', { channels: channels.size })
        each((l) => l.down())
        void follow()
      },
    }
    conn = postgres(url, options)
  }

  return {
    /** the server's logger: a transaction run again (tx) is a warning */
    log,
    /** the pools besides the requests' (the background one), ended with it (close) */
    pools: [] as postgres.Sql<NoTypes>[],
    /** statements sent on the pools and not yet answered, every transaction's included (GET /metrics) */
    inFlight: { count: 0 },
    /** channels whose commits writers wait to be heard, and how (waitHeard) */
    waited: new Set<string>(),
    wait: null as WaitHeard | null,
    /** The marker a writer sends last, before its commit (`wait.marker()`), followed until `committed` or `forget`. */
    marker(): [channel: string, payload: string] | null {
      const marker = this.wait?.marker() ?? null
      if (marker) markers.set(markerKey(marker), false)
      return marker
    },
    /** A marker whose transaction did not commit. */
    forget(marker: [string, string] | null | undefined): void {
      if (marker) markers.delete(markerKey(marker))
    },
    /**
     * After a commit that notified waited channels (`sent`), with its marker last: this process's
     * listeners hear each of them once, and the other replicas have heard them (`wait.heard`).
     * While the LISTEN connection is up it brings them back just before the marker, which
     * `wait.heard` waits for: they are heard there, not delivered here too (they were, and a
     * writer's listeners heard each twice). With the connection down they are delivered here at
     * once; with the marker not back when the wait ends (a lagging connection), here then, and
     * again should the connection bring them back later.
     */
    async committed(sent: [channel: string, payload: string][], marker: [string, string] | null): Promise<void> {
      const key = marker ? markerKey(marker) : null
      const echoing = key !== null && connected
      const here = () => {
        for (const [channel, payload] of sent) deliver(channel, payload)
      }
      try {
        if (!echoing) here()
        if (marker && this.wait) await this.wait.heard(marker)
        if (echoing && !markers.get(key)) here()
      } finally {
        if (key) markers.delete(key)
      }
    },
    async listen(channel: string, listener: Listener): Promise<() => Promise<void>> {
      if (closed) throw new Error('the database is closed')
      if (!conn) open()
      let set = channels.get(channel)
      const first = !set
      if (!set) channels.set(channel, (set = new Set()))
      set.add(listener)
      if (connected && first) await conn!.unsafe(`listen ${quote(channel)}`)
      if (connected) listener.up()
      else if (channels.size === 1 && set.size === 1) await follow()
      return async () => {
        set.delete(listener)
      }
    },
    async close() {
      closed = true
      await conn?.end({ timeout: 1 })
    },
  }
}

/** seconds a new connection may take before it counts as failed (postgres.js's default is 30) */
const CONNECT_TIMEOUT_S = 5

/**
 * Connections of the background pool (Db.background: the loops, the search's catch-up, the
 * replicas' lease). postgres.js hands each statement the connection idle longest: with the loops
 * on the requests' pool, one writer's transactions went round every connection they had opened,
 * each backend preparing and planning each statement anew (bench/writes.md, "Tenth pass: the
 * delete"). On a pool of their own, the requests' pool grows only with concurrent requests.
 */
const BACKGROUND_CONNECTIONS = 3

/** `log` hears the LISTEN connection's losses and failed reconnects (the server passes its own). */
export async function openPostgres(url: string, log: Pick<Logger, 'warn'> = createLogger('warn')): Promise<Db> {
  const options = (max: number, name: string) => ({
    max,
    // a connection attempt PostgreSQL neither takes nor refuses (seen while it restarts) fails
    // after 5 s, not postgres.js's 30: the request waiting on it answers 503 with Retry-After
    connect_timeout: CONNECT_TIMEOUT_S,
    onnotice: () => {},
    // int8 (counts, sequences) as JS numbers: our values stay far below 2^53.
    types: {
      bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) },
      // Our SQL passes JSON as text to `$n::jsonb`; postgres.js would encode that string a second
      // time (storing a jsonb string). Pass strings through as they are, as PGlite does.
      json: {
        to: 114,
        from: [114, 3802],
        serialize: (x: unknown) => (typeof x === 'string' ? x : JSON.stringify(x)),
        parse: (x: string) => JSON.parse(x),
      },
    },
    // jit off: a statement the planner costs high (a subtree under an approach of thousands of
    // jobs: its recursion's estimate grows with the widest parent) was compiled to machine code on
    // each run, about 100 ms, to run for well under one (bench/writes.md, "Twelfth pass: JIT")
    connection: { application_name: name, jit: 'off' },
  })
  const sql = postgres(url, options(10, 'arbor'))
  const background = postgres(url, options(BACKGROUND_CONNECTIONS, 'arbor-background'))
  const listeners = createListeners(url, log)
  listeners.pools.push(background)
  const db = wrap(sql, sql, null, listeners, null, wrap(background, background, null, listeners))
  await db.ping()
  return db
}
