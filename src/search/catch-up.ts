// How the built-in index follows the events outbox: every search first applies what its index
// has not seen (read from the outbox, in seq order), and on PGlite the commits this app's writes
// announce are applied from memory (src/search/commits.ts), so a search there never waits for a
// long write. Reads of one project never interleave.

import type { CommitHandOff, CommittedEvent } from '../ports/commits'
import type { HeardMark } from '../ports/replicas'
import type { SearchDeps } from '../ports/search'
import type { Embedding } from './embedding'
import { vectorFromBytes } from './hash'
import type { IndexNode, ProjectIndex } from './project-index'
import * as q from './queries'

const EVENTS_PAGE = 2000

/** Commits told during a read of the outbox; `complete` is false once one came without its events. */
type Arriving = { events: CommittedEvent[]; complete: boolean }
/** hashes per database lookup of stored vectors */
const LOOKUP_PAGE = 5000

export class OutboxFollower {
  /** the read under way of each project (see `serial`) */
  readonly locks = new Map<string, Promise<unknown>>()
  /**
   * PGlite only: projects with events committed since their index last read the outbox. A search
   * of any other loaded project needs no database read (see OUTBOX_COMMITTED), so it is not held
   * up behind a long write such as a 1,000-node batch.
   */
  readonly committed = new Set<string>()
  /**
   * PGlite only: the events of the commits told while a project's index reads the outbox, in
   * commit order. The read stops where they begin and applies them from memory when it ends, so
   * a stream of writes (an import) can neither keep it reading page after page nor queue another
   * read behind it.
   */
  private readonly arriving = new Map<string, Arriving>()
  /**
   * PostgreSQL with replicas: what had been heard of its project (src/revisions/heard.ts) when
   * an index's last complete read of the outbox began (see `current`).
   */
  private readonly readMarks = new WeakMap<ProjectIndex, HeardMark>()
  /**
   * PGlite only: the events of commits to apply to their loaded index from memory, in commit
   * order, not yet applied (`applyTold`): the write that committed them answers first.
   */
  private told: [ProjectIndex, CommittedEvent[]][] = []
  /** reads of the outbox since start (GET /metrics) */
  reads = 0

  constructor(
    private readonly deps: SearchDeps & { commits: CommitHandOff },
    /** the loaded indexes of the backend */
    private readonly loaded: Map<string, ProjectIndex>,
    private readonly embedding: Embedding,
  ) {}

  /**
   * PGlite: a commit wrote events (`token`: see src/search/commits.ts). A loaded index with no read under
   * way applies them from memory, right after the write's answer has left (`told`, applied on the
   * event loop's next turn: the commit is heard before the write answers) or before anything
   * reads that index, whichever comes first; during a read they wait in `arriving` for its end;
   * otherwise the project is marked and its index reads the outbox (queued before the next write
   * can start).
   */
  onCommit(token: string): void {
    const { projectId, events } = this.deps.commits.take(token)
    const idx = this.loaded.get(projectId)
    const arriving = this.arriving.get(projectId)
    if (arriving?.complete) {
      if (events) return void arriving.events.push(...events) // the read under way applies them
      arriving.complete = false
    }
    if (idx && events && !this.committed.has(projectId) && !this.locks.has(projectId)) {
      if (this.told.push([idx, events]) === 1) setImmediate(() => this.applyTold())
      return
    }
    this.committed.add(projectId)
    if (idx)
      void this.current(idx).catch((err) =>
        this.deps.log.warn('search: catch-up after a commit failed; the next read retries', { projectId, error: String(err) }),
      )
  }

  /**
   * PGlite: apply the events of the commits told and not applied yet (`onCommit`), in commit
   * order. Called before anything reads an index (a search, the duplicate check, a read of the
   * outbox), so what a write committed is in its project's index once the write has answered.
   */
  applyTold(): void {
    const told = this.told
    if (told.length === 0) return
    this.told = []
    for (const [idx, events] of told)
      try {
        // after a failed apply, the project's next read takes the rest from the outbox
        if (!this.committed.has(idx.projectId)) this.applyCommitted(idx, events)
      } catch (err) {
        this.committed.add(idx.projectId)
        this.deps.log.warn('search: applying a commit failed; the next read reads the outbox', {
          projectId: idx.projectId,
          error: String(err),
        })
      }
  }

  /**
   * PGlite: apply events that commits handed over in memory, those above the index's seq only
   * (a read of the outbox may have applied the others already).
   */
  applyCommitted(idx: ProjectIndex, events: CommittedEvent[]): void {
    const saved: [string, Float32Array][] = []
    this.apply(
      idx,
      events.filter((e) => e.seq > idx.seq),
      this.embedding.freshVectors(saved),
    )
    // PGlite runs one transaction at a time, in seq order: every event up to here is applied
    // and none can still commit below it, so there is nothing for a read to skip or re-read
    idx.recent.clear()
    idx.horizon = { at: new Date(), xmin: idx.horizon.xmin }
    if (saved.length)
      void q.insertVectors(this.deps.db, idx.projectId, this.embedding.queue.id, saved).catch((err) =>
        this.deps.log.warn('search: storing vectors failed; they are embedded again after a restart', {
          projectId: idx.projectId,
          error: String(err),
        }),
      )
  }

  /**
   * Apply node events to `idx`, in seq order. Those read from the outbox (with their txid) are
   * remembered as applied, so a later read that meets them again skips them.
   */
  apply(
    idx: ProjectIndex,
    events: { seq: number; payload: Record<string, unknown>; txid?: bigint }[],
    vectorOf: (hash: string) => Float32Array | undefined,
  ): void {
    for (const { seq, payload, txid } of events) {
      const node = payload?.node as IndexNode | undefined
      if (node?.id) {
        if (payload.event === 'node.deleted') idx.delete(node.id)
        else idx.upsert({ id: node.id, rev: node.rev, type: node.type, parentId: node.parentId ?? null, data: node.data ?? {} }, vectorOf)
      }
      if (txid !== undefined) idx.recent.set(seq, txid)
      if (seq > idx.seq) idx.seq = seq
    }
  }

  /**
   * Read the outbox into `idx`, unless nothing was committed for it since the last read: on
   * PGlite, as the commits tell this process; on PostgreSQL, while this replica holds its lease
   * and has heard no change of the project since its last read began (a search of an unchanged
   * project then reads no table).
   */
  current(idx: ProjectIndex): Promise<unknown> {
    const projectId = idx.projectId
    this.applyTold() // the commits told before this read, applied first: the read starts after them
    return this.serial(projectId, async () => {
      if (this.deps.db.kind === 'postgres') {
        const heard = this.deps.heard
        if (heard?.unchanged(projectId, this.readMarks.get(idx))) return
        // sampled before the read's first statement is sent: a change heard after it is read again next time
        const mark = heard?.mark(projectId)
        this.readMarks.delete(idx)
        await this.read(idx, null)
        if (mark) this.readMarks.set(idx, mark)
        return
      }
      if (!this.committed.has(projectId)) return
      this.committed.delete(projectId) // before the read: a commit told without its events marks the project again
      const arriving: Arriving = { events: [], complete: true }
      this.arriving.set(projectId, arriving)
      try {
        await this.read(idx, arriving)
      } catch (err) {
        arriving.complete = false
        throw err
      } finally {
        this.arriving.delete(projectId)
        // the commits told meanwhile come after everything read: applied now, not read again
        if (arriving.complete) this.applyCommitted(idx, arriving.events)
        else this.committed.add(projectId)
      }
    })
  }

  /** Apply the node events this index has not seen, in seq order (see sql/search/horizon.sql). */
  async read(idx: ProjectIndex, arriving: Arriving | null): Promise<void> {
    const db = this.deps.db
    const saved: [string, Float32Array][] = []
    const vectorOf = this.embedding.freshVectors(saved)
    this.reads++
    for (;;) {
      const horizon = await q.horizon(db)
      const rows = await q.eventsSince(db, idx.projectId, idx.seq, idx.horizon, [...idx.recent.keys()])
      this.apply(
        idx,
        rows.map((r) => ({ seq: Number(r.seq), payload: r.payload, txid: BigInt(r.txid) })),
        vectorOf,
      )
      // PGlite: from the first commit told during this read on, the events are in memory
      const first = arriving?.complete ? arriving.events[0] : undefined
      if (rows.length >= EVENTS_PAGE && !(first && idx.seq >= first.seq)) continue // more to read; keep the old horizon until done
      idx.horizon = q.advance(idx.horizon, horizon)
      // what no later read can meet again: a transaction below the xmin (never by time: a later
      // horizon may be older, see horizon.sql, and re-applying an old event would undo a newer one)
      for (const [seq, txid] of idx.recent) if (txid < idx.horizon.xmin) idx.recent.delete(seq)
      break
    }
    if (saved.length) await q.insertVectors(db, idx.projectId, this.embedding.queue.id, saved)
    // vectors another replica (or an earlier run) already stored, for texts that started waiting
    // in this catch-up only: a text still waiting after its lookup is the embedder's to do, and
    // no later search or tick reads it again (embedMissing looks once more, per batch)
    const unknown = idx.takeUnchecked().filter((h) => !this.embedding.inFlight.has(h))
    for (let i = 0; i < unknown.length; i += LOOKUP_PAGE)
      for (const r of await q.loadVectors(db, idx.projectId, this.embedding.queue.id, unknown.slice(i, i + LOOKUP_PAGE)))
        idx.supply(r.text_hash, vectorFromBytes(r.vector))
  }

  /** Run `fn` after every earlier call for the same project (catch-ups never interleave). */
  serial<T>(projectId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(projectId) ?? Promise.resolve()
    const next = prev.catch(() => undefined).then(fn) // the earlier call's caller got its error; this one runs regardless
    this.locks.set(projectId, next)
    next.finally(() => this.locks.get(projectId) === next && this.locks.delete(projectId)).catch(() => undefined) // returned to the caller below
    return next
  }
}
