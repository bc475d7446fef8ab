/**
 * The one database interface every module uses. Two drivers implement it:
 * PGlite (embedded, the default) and postgres.js (a PostgreSQL server).
 * SQL text is the same on both; parameters are `$1…`.
 */
// biome-ignore lint/suspicious/noExplicitAny: the database boundary: a row's columns are what its SQL file selects, typed by the caller (query<T>) or read as a Row
export type Row = Record<string, any>

export interface Db {
  readonly kind: 'pglite' | 'postgres'
  /** The database itself; inside `tx`, the database the transaction belongs to. */
  readonly root: Db
  /**
   * PostgreSQL: the same database through a small pool of its own, for the background loops, the
   * search's catch-up and the replicas' lease (closed with this one). PGlite: undefined (this one).
   */
  readonly background?: Db
  /** Run one statement with `$n` parameters and return its rows. */
  query<T = Row>(text: string, params?: unknown[]): Promise<T[]>
  /** Run a script of several statements without parameters (migrations). */
  exec(text: string): Promise<void>
  /** Run `fn` in one transaction; it commits when `fn` resolves and rolls back when it throws. Nested calls join the outer one. */
  tx<T>(fn: (tx: Db) => Promise<T>): Promise<T>
  /** True when the database answers a trivial query. */
  ping(): Promise<boolean>
  /** Statements sent and not yet answered (GET /metrics: PGlite's queue, PostgreSQL's pool work). */
  inFlight?(): number
  /** Flush and release everything; the Db is unusable afterwards. */
  close(): Promise<void>
  /**
   * Send `payload` to every listener of `channel` (this process's too): on PostgreSQL every
   * replica's. Inside a transaction it leaves at the commit, and not at all on a rollback.
   */
  notify(channel: string, payload: string): Promise<void>
  /**
   * Run `fn` once the transaction this Db belongs to has committed, and not at all on a rollback
   * (a transaction PostgreSQL runs again: once, after the run that committed); outside a
   * transaction, at once. For what a write sets going in this process after it is durable (the
   * loops woken: src/mutate/sequence.ts `runWrite`), not for a reply to wait on.
   */
  afterCommit(fn: () => void): void
  /** Follow `channel` until the returned function is called. */
  listen(channel: string, listener: Listener): Promise<() => Promise<void>>
  /**
   * PostgreSQL: a transaction that notified one of `channels` (or such a notify outside a
   * transaction) also sends `wait.marker()` last, before its commit; after the commit it returns
   * only once `wait.heard(marker)` resolves: once the marker came back here and the other
   * replicas have heard it too (src/revisions/replicas.ts). This process's listeners hear each
   * notification once, before it returns: on the LISTEN connection, before the marker, or (the
   * connection down, the marker not back) delivered at the commit. PGlite has no other replica and delivers its notifications
   * before the commit returns: it has no such hook.
   */
  waitHeard?(channels: readonly string[], wait: WaitHeard): void
}

/** How writers wait to be heard (Db.waitHeard): a marker sent before the commit, and the wait after it. */
export interface WaitHeard {
  marker(): [channel: string, payload: string]
  heard(marker: [channel: string, payload: string]): Promise<void>
}

/**
 * What a `listen`er hears. `up` comes once following starts and again after every reconnect;
 * `down` when the connection is lost: notifications sent until the next `up` may be missed.
 */
export interface Listener {
  message(payload: string): void
  up(): void
  down(): void
}

/** The first row, or undefined. */
export async function one<T = Row>(db: Db, text: string, params?: unknown[]): Promise<T | undefined> {
  const rows = await db.query<T>(text, params)
  return rows[0]
}

/**
 * `fn` in a transaction whose commit does not wait for the disk (PostgreSQL's
 * `synchronous_commit = off`; PGlite: `fn` as is). Only for bookkeeping that a crash may undo
 * because it is then redone: the commit is still atomic and in order, it may just be lost with
 * the last fraction of a second before a crash. Never for a user's write. It spares the writes
 * of users a share of the disk flushes they wait for.
 */
export async function withoutFlushWait<T>(db: Db, fn: (tx: Db) => Promise<T>): Promise<T> {
  if (db.kind !== 'postgres') return fn(db)
  return db.tx(async (tx) => {
    await tx.query('set local synchronous_commit = off')
    return fn(tx)
  })
}

/** A savepoint open in a transaction (`savepoint`): taken back, or kept and let go. */
export interface Savepoint {
  /** Take back every row written and every lock taken since the savepoint; the transaction goes on. */
  rollback(): Promise<void>
  /** Keep what was written since it and let the savepoint go (a name marked again then marks anew). */
  release(): Promise<void>
}

/**
 * Mark this point of the transaction `tx` as `name` (a savepoint): for a dry run, taken back
 * (`rollback`), or for a statement that may fail without failing the transaction, kept once it
 * succeeded (`release`) or taken back when it failed. Two marks open at once need two names.
 */
export async function savepoint(tx: Db, name: `arbor_${string}`): Promise<Savepoint> {
  await tx.query(`savepoint ${name}`)
  return {
    rollback: async () => {
      await tx.query(`rollback to savepoint ${name}`)
    },
    release: async () => {
      await tx.query(`release savepoint ${name}`)
    },
  }
}
