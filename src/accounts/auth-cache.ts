import type { Db } from '../db/port'
import type { AuthCache as AuthCachePort, Cached } from '../ports/auth'
import type { MemoryLease } from '../ports/replicas'
import { createKeyUse } from './key-use'

/**
 * What every authenticated request reads, kept in memory: key hash → user, a user's project
 * lists, and (project, user) → access. The rows change only through a few writes (users, API
 * keys, projects, members); each of them calls `authChanged` after it commits, which empties
 * this process's cache at once and, through the database's NOTIFY, every other replica's
 * within milliseconds (on PostgreSQL the write waits until the replicas holding a lease have
 * heard it: src/revisions/replicas.ts). A guard test lists the SQL that writes those tables.
 *
 * A read that started before a change may finish after it with the old rows: it is stored
 * only when no change came in between (the generation is the same), so the cache never keeps
 * what a committed write replaced. While the notification connection is down nothing is
 * cached, and everything is dropped when it is back: a missed notification cannot linger.
 * On PostgreSQL it answers from memory only while this replica holds its lease (`lease`): a
 * replica that lags may not have heard of a revocation its writer has already answered, so
 * then every read goes to the database, and what it learned is dropped when the lease lapses.
 * One per app, built in createDeps and passed as `deps.auth`.
 */
export const AUTH_CHANNEL = 'arbor_auth'
/** Entries per map before it is emptied: bounds memory whatever callers send. */
const MAX_ENTRIES = 20_000

export class AuthCache implements AuthCachePort {
  private generation = 0
  private following = false
  private readonly maps = new Map<string, Map<string, unknown>>()
  /** Resolves once the cache follows the change notifications (it caches nothing before). */
  readonly ready: Promise<void>
  readonly useIsDue = createKeyUse()
  readonly listTexts = new WeakMap<object, string>()

  constructor(
    db: Db,
    private readonly lease?: MemoryLease,
  ) {
    let following = () => {}
    this.ready = new Promise((resolve) => {
      following = resolve
    })
    db.listen(AUTH_CHANNEL, {
      message: () => this.clear(),
      up: () => {
        this.clear()
        this.following = true
        following()
      },
      down: () => {
        this.following = false
        this.clear()
      },
    }).catch(() => {
      this.following = false // not following: nothing is cached, every read goes to the database
    })
  }

  clear(): void {
    this.generation++
    for (const m of this.maps.values()) m.clear()
    this.hashes.clear()
  }

  /** Authorization header → hash of its key (or null): hashing the key cost every authenticated request a SHA-256. */
  private readonly hashes = new Map<string, string | null>()

  /**
   * `hash(authorization)`, remembered per header value (bounded like the other maps, and
   * emptied with them, so a revoked key's header is not kept past the change). A hash depends
   * on the header alone, so unlike `get` this needs no generation check.
   */
  keyHash(authorization: string | null | undefined, hash: (authorization: string) => string | null): string | null {
    if (!authorization) return null
    let h = this.hashes.get(authorization)
    if (h === undefined) {
      if (this.hashes.size >= MAX_ENTRIES) this.hashes.clear()
      this.hashes.set(authorization, (h = hash(authorization)))
    }
    return h
  }

  /**
   * The cached value of `key` in `space`, or `load()`'s, stored unless it is undefined or a
   * change came in while it loaded. Callers share what is stored, so it is read-only: objects
   * are frozen, arrays are read-only to the compiler (a frozen array loses JSON.stringify's
   * fast path, which cost GET /projects a third of its time). A hit is returned as it is, not
   * in a promise: every authenticated request takes this path, and awaiting a plain value
   * is cheaper than a chain of async calls.
   */
  get<T>(space: string, key: string, load: () => Promise<T>): Cached<T> | Promise<Cached<T>> {
    let map = this.maps.get(space)
    if (!map) this.maps.set(space, (map = new Map()))
    const hit = this.lease && !this.lease.trusted() ? undefined : map.get(key)
    return hit !== undefined ? (hit as Cached<T>) : this.load(map, key, load)
  }

  private async load<T>(map: Map<string, unknown>, key: string, load: () => Promise<T>): Promise<Cached<T>> {
    const generation = this.generation
    // kept only when the lease was held before the read and still is, in the same epoch
    const epoch = this.lease ? (this.lease.trusted() ? this.lease.epoch : -1) : 0
    const value = await load()
    const leased = !this.lease || (epoch >= 0 && this.lease.trusted() && this.lease.epoch === epoch)
    if (value !== undefined && this.following && leased && generation === this.generation) {
      if (map.size >= MAX_ENTRIES) map.clear()
      map.set(key, freezeObjects(value))
    }
    return value as Cached<T>
  }
}

export type { Cached }

/** Freezes every object inside `value`; arrays are walked, not frozen (see AuthCache.get). */
function freezeObjects<T>(value: T): T {
  if (Array.isArray(value)) for (const v of value) freezeObjects(v)
  else if (value && typeof value === 'object' && !Object.isFrozen(value) && !(value instanceof Date)) {
    Object.freeze(value)
    for (const v of Object.values(value)) freezeObjects(v)
  }
  return value
}

/**
 * Call after (or inside the transaction of) every write to users, api_keys, projects or
 * project_members. This process forgets at once, and again when the notification comes back
 * after the commit (a read during the transaction may have stored the old rows); the other
 * replicas forget when it reaches them.
 */
export async function authChanged(deps: { db: Db; auth: AuthCachePort }): Promise<void> {
  deps.auth.clear()
  await deps.db.notify(AUTH_CHANNEL, '')
}
