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
