/** PostgreSQL: this process's lease among the replicas of one database (src/revisions/replicas.ts, built in createDeps). */
export interface ReplicaLease extends MemoryLease {
  /** Start renewing it, and answering kept reads from memory (main.ts, once the server listens). */
  start(): Promise<void>
  /** Stop answering from memory, and tell writers to stop waiting for this process. */
  stop(): Promise<void>
  /** writes that waited for another replica: acknowledged by all, or waited out (one never answered) */
  readonly stats: { acknowledged: number; waitedOut: number }
}

/**
 * PostgreSQL: whether what this process learned may be answered from memory now (the lease is
 * held), and `epoch`, which moves on whenever it may not: a value learned before a lapse is not
 * used after it. The read cache and the auth cache both ask it.
 */
export interface MemoryLease {
  trusted(): boolean
  readonly epoch: number
}

/** What had been heard of a project when a read of it began (ChangesHeard.mark). */
export type HeardMark = { readonly epoch: number; readonly forgets: number; readonly heard: number | undefined }

/**
 * PostgreSQL: the project changes this replica has heard, and whether they can vouch that
 * what a read found is still current (src/revisions/heard.ts, built in createDeps). The read
 * cache and the search index ask it.
 */
export interface ChangesHeard {
  /** the lease is held and the changes are heard */
  vouches(): boolean
  /** taken before a read's first statement is sent; undefined when nothing can vouch for it */
  mark(projectId: string): HeardMark | undefined
  /** no change of the project was heard since `mark` was taken, and the lease held throughout */
  unchanged(projectId: string, mark: HeardMark | undefined): boolean
  /** `follower` hears the project of each change as it is heard, and undefined when all heard was dropped */
  follow(follower: (projectId: string | undefined) => void): void
}
