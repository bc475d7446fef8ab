/** How a kept answer of a project read may be used (src/reads/cache.ts). */
export interface ReadOptions<T> {
  /** the answer lists claims: it ends at the earliest live claim's expiry */
  claims?: boolean
  /** the answer holds the time it was made: it ends this many ms later */
  ttlMs?: number
  /** false for an answer that must not be kept (a search that is still indexing) */
  keep?: (answer: T) => boolean
  /** the headers of `render`'s text (default: Content-Type JSON) */
  headers?: Record<string, string>
  /** the text sent (default JSON.stringify) */
  render?: (answer: T) => string
}

/** Answers of project reads, kept while the project's revision is unchanged (src/reads/cache.ts, built in createDeps). */
export interface ReadCache {
  readonly stats: { hits: number; misses: number; evictions: number }
  /** The kept answer of `key` while the project's revision is unchanged, else `load()`'s, sent as a Response. */
  answer<T>(projectId: string, key: string, options: ReadOptions<T>, load: () => Promise<T>): Promise<Response>
  size(): { bytes: number; entries: number }
}
