/** PostgreSQL: this process's lease among the replicas of one database (src/revisions/replicas.ts, built in createDeps). */
export interface ReplicaLease {
  /** Start renewing it, and answering kept reads from memory (main.ts, once the server listens). */
  start(): Promise<void>
  /** Stop answering from memory, and tell writers to stop waiting for this process. */
  stop(): Promise<void>
  /** writes that waited for another replica: acknowledged by all, or waited out (one never answered) */
  readonly stats: { acknowledged: number; waitedOut: number }
}
