/** PostgreSQL: this process's lease among the replicas of one database (src/revisions/replicas.ts, built in createDeps). */
export interface ReplicaLease {
  /** Take the lease and keep it; `place` names this host and port (main.ts, once the server listens). */
  start(place: string): Promise<void>
  /** Give it up: stop answering from memory, and let writers stop waiting for this process. */
  stop(): Promise<void>
}
