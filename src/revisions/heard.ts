import type { Db } from '../db'
import type { Logger } from '../log'
import type { ChangesHeard as ChangesHeardPort, HeardMark, MemoryLease } from '../ports/replicas'
import { REVISION_CHANNEL } from './revision'

/** Projects `heard` holds before it starts over (bounds its memory) */
const MAX_PROJECTS_HEARD = 100_000

/**
 * PostgreSQL: the changes of each project this replica has heard on REVISION_CHANNEL. Every
 * commit that changes what a project's reads return notifies it, and while this replica holds
 * its lease no write is answered, by any replica, before this one has heard it
 * (./replicas.ts). So what a read found in the database, when `mark(project)` was taken before
 * its first statement, is still current as long as `unchanged(project, mark)`: the lease is
 * held in the same epoch, the LISTEN connection has not dropped, and no change of the project
 * was heard since. The read cache keeps project revisions on that (src/reads/cache.ts), and the
 * search index skips its read of the outbox (src/search/catch-up.ts).
 *
 * One per app, built in createDeps when there are replicas; one LISTEN.
 */
export class ChangesHeard implements ChangesHeardPort {
  /** per project, the number of the last change heard */
  private readonly heard = new Map<string, number>()
  /** numbered from one counter, so a number is never seen twice, even after `forget` */
  private changes = 0
  /** times what was heard was dropped (the LISTEN connection went down, or `heard` grew too big) */
  private forgets = 0
  private listening = false
  private readonly followers: ((projectId: string | undefined) => void)[] = []

  constructor(
    db: Db,
    private readonly lease: MemoryLease,
    log: Pick<Logger, 'warn'>,
  ) {
    void db
      .listen(REVISION_CHANNEL, {
        message: (projectId) => {
          if (this.heard.size >= MAX_PROJECTS_HEARD) this.forget()
          this.heard.set(projectId, ++this.changes)
          for (const follower of this.followers) follower(projectId)
        },
        up: () => {
          this.listening = true
        },
        down: () => {
          this.listening = false
          this.forget()
        },
      })
      .catch((err) => log.warn('following project changes failed; every read looks the revision up', { error: String(err) }))
  }

  /**
   * Call `follower` with the project of each change heard, as it is heard (before the write
   * that made it can answer), and with undefined when everything heard so far was dropped.
   */
  follow(follower: (projectId: string | undefined) => void): void {
    this.followers.push(follower)
  }

  /** Whether what is heard here can vouch for a read now: the lease is held and the changes are heard. */
  vouches(): boolean {
    return this.listening && this.lease.trusted()
  }

  /** Taken before a read's first statement is sent; undefined when nothing can vouch for it. */
  mark(projectId: string): HeardMark | undefined {
    if (!this.vouches()) return undefined
    return { epoch: this.lease.epoch, forgets: this.forgets, heard: this.heard.get(projectId) }
  }

  /** No change of the project was heard since `mark` was taken, and the lease has held throughout. */
  unchanged(projectId: string, mark: HeardMark | undefined): boolean {
    return (
      mark !== undefined &&
      this.vouches() &&
      this.lease.epoch === mark.epoch &&
      this.forgets === mark.forgets &&
      this.heard.get(projectId) === mark.heard
    )
  }

  private forget(): void {
    this.heard.clear()
    this.forgets++
    for (const follower of this.followers) follower(undefined)
  }
}
