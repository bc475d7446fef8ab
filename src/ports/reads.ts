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
  /** `fast`: the hits the fast lane served (also counted in `hits`); `lookups`: revisions read from PostgreSQL */
  readonly stats: { hits: number; misses: number; evictions: number; fast: number; lookups: number }
  /** The kept answer of `key` while the project's revision is unchanged, else `load()`'s, sent as a Response. */
  answer<T>(projectId: string, key: string, options: ReadOptions<T>, load: () => Promise<T>): Promise<Response>
  size(): { bytes: number; entries: number }
  /**
   * A read of this process found a commit of `projectId` in the database (a new event, a new
   * revision of the canvas's poll) that this replica may not have heard yet: its next answer
   * for the project looks the revision up, so a caller who saw the commit never gets an answer
   * from before it here.
   */
  sawCommit(projectId: string): void
  /**
   * The request index the fast lane reads (src/http/fast-lane.ts): `request` (a GET's path and
   * query) was answered with `res`, which `answer` made; later GETs of the same request may be
   * answered from the same entry without routing, once the caller's access is checked.
   */
  noteRequest(request: string, res: Response): void
  /** The project and entry that answered `request` before, if any. */
  requested(request: string): KeptRequest | undefined
  /** The entry's bytes while it is current (as `answer` would serve them), else undefined. */
  current(kept: KeptRequest): KeptBytes | undefined | Promise<KeptBytes | undefined>
}

/** Where a request's answer is kept. */
export interface KeptRequest {
  projectId: string
  id: string
}

/** A kept answer's bytes and Content-Type. */
export interface KeptBytes {
  /** a Blob: a Response shares its bytes, where it would copy a Uint8Array's every time */
  body: Blob
  type: string
}
