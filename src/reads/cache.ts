import { nextClaimExpiry } from '../claims/service'
import type { Db } from '../db'
import type { KeptBytes, KeptRequest, ReadCache as ReadCachePort, ReadOptions } from '../ports/reads'
import type { ChangesHeard } from '../ports/replicas'
import { REVISION_CHANNEL, readRevision } from '../revisions/revision'

/**
 * Answers of project reads (GET /nodes, /tree, /outline, /iterations, /search, /export-okf, the
 * share views) kept as the bytes they were sent as, and sent again while the project has not
 * changed. Each answer is stored with the project's revision (src/revisions/revision.ts), which
 * every committed change advances in its own transaction:
 *
 * - on PostgreSQL a replica that holds its lease (src/revisions/replicas.ts) knows the revision
 *   it last looked up until it hears of a change (src/revisions/heard.ts), since every write
 *   waits for it to hear;
 *   otherwise a cached read first looks the revision up (one primary-key read). Either way no
 *   replica answers from before a write that any replica has acknowledged;
 * - on PGlite (one process) the revision is a counter in memory, advanced by the commit's
 *   notification, which is delivered before the write answers: a hit reads no table.
 *
 * An answer that shows claims also ends at the earliest expiry of the project's live claims (a
 * claim that expires changes /nodes and /tree without any write). Access is checked by the
 * caller before it asks, and `key` holds everything else the answer depends on, so an answer is
 * shared only between callers who may all see it. Memory is bounded by READ_CACHE_MB, least
 * recently used first.
 */
export interface ReadCacheDeps {
  db: Db
  now: () => Date
  maxBytes: number
  /** PostgreSQL with replicas: the changes heard, which say when a revision learned here may be used without a lookup */
  heard?: ChangesHeard
}

interface Entry {
  revision: string
  /** a Blob: each Response shares its bytes (a Uint8Array body is copied into every Response) */
  body: Blob
  headers: Record<string, string>
  /** ms since the epoch after which the entry is not used (Infinity: only a write ends it) */
  until: number
}

interface Lookup {
  next: PromiseWithResolvers<string> | null
  running: boolean
}

/** An answer bigger than this share of the budget is sent but not kept. */
const LARGEST_SHARE = 4
/** Projects `known` holds before it starts over (bounds its memory) */
const MAX_PROJECTS_KNOWN = 100_000
/** Requests the fast lane's index remembers (a path and query each), the oldest forgotten first. */
const MAX_REQUESTS = 4096
/** what Elysia sends with an object, so a kept answer reads the same as a new one */
const JSON_HEADERS = { 'content-type': 'application/json;charset=utf-8' }

export type { ReadOptions }

export class ReadCache implements ReadCachePort {
  private readonly entries = new Map<string, Entry>()
  private readonly loading = new Map<string, Promise<Entry>>()
  /** PGlite: each project's revision in this process (bumped by the commit's notification) */
  private readonly local = new Map<string, number>()
  /** PostgreSQL: the revision lookup under way per project, and the requests for the next one */
  private readonly lookups = new Map<string, Lookup>()
  /** PostgreSQL: revisions looked up while this replica holds its lease, until a change is heard */
  private readonly known = new Map<string, string>()
  /** GET path and query → the entry that answered it (noteRequest), for the fast lane */
  private readonly requests = new Map<string, KeptRequest>()
  /** the entry behind each Response `answer` made, until the wrapper has seen it */
  private readonly made = new WeakMap<Response, KeptRequest>()
  private bytes = 0
  /** PostgreSQL: commits found by this process's reads before they were heard (`sawCommit`), counted */
  private commitsSeen = 0
  readonly stats = { hits: 0, misses: 0, evictions: 0, fast: 0, lookups: 0 }

  constructor(private readonly deps: ReadCacheDeps) {
    if (deps.db.kind === 'pglite')
      // one process: the notification is delivered at the commit, before the write answers
      void deps.db.listen(REVISION_CHANNEL, {
        message: (projectId) => this.local.set(projectId, (this.local.get(projectId) ?? 0) + 1),
        up: () => {},
        down: () => {},
      })
    // every replica: a write answers only once this has run here (or this replica's lease is over)
    else deps.heard?.follow((projectId) => (projectId === undefined ? this.known.clear() : this.known.delete(projectId)))
  }

  /** PostgreSQL: this replica stopped answering from memory; what it learned is looked up again. */
  forget(): void {
    this.known.clear()
  }

  /**
   * PostgreSQL: a commit is visible to every statement from the moment it commits, but heard
   * here a little later (on the LISTEN connection: a write answers only once it has been). A
   * read that found it in between (GET /events, the canvas's poll) says so here; the revision
   * this replica knew is dropped, and so is any lookup still under way, which may have read it
   * before the commit. On PGlite the commit's notification is delivered before any other
   * statement can see it: nothing to do.
   */
  sawCommit(projectId: string): void {
    if (this.deps.db.kind === 'pglite') return
    this.commitsSeen++
    this.known.delete(projectId)
  }

  /** The project's revision as this process may trust it now. */
  private revision(projectId: string): string | Promise<string> {
    if (this.deps.db.kind === 'pglite') return String(this.local.get(projectId) ?? 0)
    if (this.deps.heard?.vouches()) {
      const known = this.known.get(projectId)
      if (known !== undefined) return known
    }
    let lookup = this.lookups.get(projectId)
    if (!lookup) this.lookups.set(projectId, (lookup = { next: null, running: false }))
    lookup.next ??= Promise.withResolvers<string>()
    const { promise } = lookup.next
    if (!lookup.running) void this.lookUp(projectId, lookup)
    return promise
  }

  /**
   * PostgreSQL: the revision reads of one project, batched. Each request waits for a lookup
   * SENT AFTER it arrived, so it sees every write acknowledged before it came (a lookup already
   * under way may predate such a write); all requests that arrive while one lookup runs share
   * the next. Under load that is one primary-key read per round trip instead of per request.
   */
  private async lookUp(projectId: string, lookup: Lookup): Promise<void> {
    lookup.running = true
    const heard = this.deps.heard
    while (lookup.next) {
      const waiting = lookup.next
      lookup.next = null
      // kept as known only when this replica held its lease before it asked and still does, and no
      // change of the project was heard or found (`sawCommit`) meanwhile: every later commit then
      // waits to be heard here
      const mark = heard?.mark(projectId)
      const seen = this.commitsSeen
      try {
        this.stats.lookups++
        const revision = await readRevision(this.deps.db, projectId)
        if (heard?.unchanged(projectId, mark) && this.commitsSeen === seen) {
          if (this.known.size >= MAX_PROJECTS_KNOWN) this.known.clear()
          this.known.set(projectId, revision)
        }
        waiting.resolve(revision)
      } catch (err) {
        waiting.reject(err)
      }
    }
    lookup.running = false
    this.lookups.delete(projectId)
  }

  /**
   * The answer of `load` for `key` of `projectId` as a Response: from memory while the project
   * is at the revision it was made at (and before its claims' expiry), else made again.
   * Concurrent misses of one key share one `load`.
   */
  async answer<T>(projectId: string, key: string, options: ReadOptions<T>, load: () => Promise<T>): Promise<Response> {
    const revision = await this.revision(projectId)
    const id = `${projectId}\n${key}`
    const hit = this.hit(id, revision)
    if (hit) return this.respond(hit, projectId, id)
    this.stats.misses++
    const flight = `${id}\n${revision}`
    let made = this.loading.get(flight)
    if (!made) {
      made = this.make(projectId, id, revision, options, load).finally(() => this.loading.delete(flight))
      this.loading.set(flight, made)
    }
    return this.respond(await made, projectId, id)
  }

  /** The entry `id` when it is at `revision` and before its end (and counted as a hit), else undefined. */
  private hit(id: string, revision: string): Entry | undefined {
    const hit = this.entries.get(id)
    // (the clock is read only for an answer with an end: one that shows claims, or the export)
    if (!hit || hit.revision !== revision || (hit.until !== Infinity && this.deps.now().getTime() >= hit.until)) return undefined
    this.stats.hits++
    // most recently used last: the Map keeps insertion order
    this.entries.delete(id)
    this.entries.set(id, hit)
    return hit
  }

  private respond(entry: Entry, projectId: string, id: string): Response {
    const res = new Response(entry.body, { headers: entry.headers })
    this.made.set(res, { projectId, id })
    return res
  }

  noteRequest(request: string, res: Response): void {
    const kept = this.made.get(res)
    if (!kept || !this.entries.has(kept.id)) return
    this.requests.delete(request)
    this.requests.set(request, kept)
    if (this.requests.size > MAX_REQUESTS) this.requests.delete(this.requests.keys().next().value!)
  }

  requested(request: string): KeptRequest | undefined {
    return this.requests.get(request)
  }

  current(kept: KeptRequest): KeptBytes | undefined | Promise<KeptBytes | undefined> {
    const bytes = (entry: Entry | undefined) =>
      entry && { body: entry.body, type: entry.headers['content-type'] ?? JSON_HEADERS['content-type'] }
    // the same checks as `answer`: the revision as of now (on PostgreSQL, known or looked up), the claims' expiry
    const revision = this.revision(kept.projectId)
    return typeof revision === 'string' ? bytes(this.fastHit(kept.id, revision)) : revision.then((r) => bytes(this.fastHit(kept.id, r)))
  }

  private fastHit(id: string, revision: string): Entry | undefined {
    const hit = this.hit(id, revision)
    if (hit) this.stats.fast++
    return hit
  }

  private async make<T>(projectId: string, id: string, revision: string, options: ReadOptions<T>, load: () => Promise<T>): Promise<Entry> {
    const started = this.deps.now()
    // claims live at `started` include every claim the answer shows (it reads them later), so
    // the earliest of their expiries bounds it
    const [answer, expiry] = await Promise.all([load(), options.claims ? nextClaimExpiry(this.deps.db, projectId, started) : null])
    const text = options.render ? options.render(answer) : JSON.stringify(answer)
    const until = Math.min(expiry ? expiry.getTime() : Infinity, options.ttlMs ? started.getTime() + options.ttlMs : Infinity)
    const entry: Entry = { revision, body: new Blob([text]), headers: options.headers ?? JSON_HEADERS, until }
    if (options.keep && !options.keep(answer)) return entry
    this.store(id, entry)
    return entry
  }

  private store(id: string, entry: Entry): void {
    const size = entry.body.size + id.length
    if (size > this.deps.maxBytes / LARGEST_SHARE) return
    const old = this.entries.get(id)
    if (old) {
      // a slow read of an older revision does not replace a newer one
      if (newer(old.revision, entry.revision)) return
      this.entries.delete(id)
      this.bytes -= old.body.size + id.length
    }
    this.entries.set(id, entry)
    this.bytes += size
    for (const [oldest, e] of this.entries) {
      if (this.bytes <= this.deps.maxBytes) break
      this.entries.delete(oldest)
      this.bytes -= e.body.size + oldest.length
      this.stats.evictions++
    }
  }

  /** Bytes held now, and entries. */
  size(): { bytes: number; entries: number } {
    return { bytes: this.bytes, entries: this.entries.size }
  }
}

/** True when revision `a` is after `b` (both decimal counters). */
const newer = (a: string, b: string) => a.length > b.length || (a.length === b.length && a > b)
