/** A cached value as callers see it: its arrays (and those inside them) read-only. */
export type Cached<T> = T extends (infer E)[] ? readonly Cached<E>[] : T

/**
 * What every authenticated request reads, kept in memory, one per app (src/accounts/auth-cache.ts,
 * built in createDeps): key hash → user, a user's project lists, (project, user) → access.
 */
export interface AuthCache {
  /** Resolves once the cache follows the change notifications (it caches nothing before). */
  readonly ready: Promise<void>
  clear(): void
  /** The cached value of `key` in `space`, or `load()`'s (see src/accounts/auth-cache.ts). */
  get<T>(space: string, key: string, load: () => Promise<T>): Cached<T> | Promise<Cached<T>>
  /** `hash(authorization)`, remembered per header value and emptied with the cache (a SHA-256 per request spared). */
  keyHash(authorization: string | null | undefined, hash: (authorization: string) => string | null): string | null
  /** True when `hash`'s use should be written now (and notes that it is): src/accounts/key-use.ts. */
  useIsDue(hash: string, now?: number): boolean
  /** GET /projects: a cached list's JSON text, kept as long as the list (a WeakMap on it). */
  readonly listTexts: WeakMap<object, string>
}
