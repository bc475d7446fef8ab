import { randomUUID } from 'node:crypto'
import type { Db } from '../db'
import { createLogger, type Logger } from '../log'
import * as q from './queries'

/**
 * PostgreSQL, one replica or many: when may this process answer a cached read from memory,
 * without looking the project's revision up first? While it holds its lease: readers renew
 * (a marker on BARRIER_CHANNEL every RENEW_MS, counted when it comes back on this process's own
 * LISTEN connection), writers wait to be heard (`heard(marker)`) by every replica whose renewal
 * they heard in the last LEASE_MS. docs/caching.md, "The replicas' lease", explains it once,
 * with what it costs and the tests that hold it (`test/process.reads.test.ts`,
 * `test/replicas.test.ts`).
 */
export const BARRIER_CHANNEL = 'arbor_barrier'
export const ACK_CHANNEL = 'arbor_ack'
/** how long a renewal lets a replica answer from memory, counted by writers from when they heard it */
export const LEASE_MS = 4000
export const RENEW_MS = 1000
/** kept between a replica's own end of answering from memory on a renewal and the end writers count */
export const MARGIN_MS = 1000
/** waited beyond a renewal's end for a replica that did not acknowledge (the clocks' rates may differ) */
const SLACK_MS = 50
/** this process's markers whose place is remembered */
const MAX_ECHOES = 10_000
/**
 * How long a renewal or an acknowledgement may take to be sent. One sent while PostgreSQL
 * restarts can wait for the pool's reconnect (postgres.js gives up after 30 s), and while it
 * waits no other is sent: every write of the other replicas would wait LEASE_MS meanwhile.
 * Given up on, the next one goes out on a connection that works.
 */
const SEND_MS = 1000

/** `p`, or a rejection once `ms` have passed without it settling (it keeps running; its result is dropped). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)
  })
  p.catch(() => {}) // settling after the deadline is not an unhandled rejection
  return Promise.race([p, late]).finally(() => clearTimeout(timer))
}

interface Waiter {
  /** the place of the write's marker in `echoed` (Infinity when it did not come back) */
  place: number
  /** replica id → when its last renewal heard here stops it answering from memory, on this clock */
  pending: Map<string, number>
  done: () => void
  timer: ReturnType<typeof setTimeout> | null
  /** some replica's renewal ran out before it acknowledged */
  waitedOut: boolean
}

export class Replicas {
  /** moves on whenever answering from memory stops: what was learned before is not trusted after */
  epoch = 0
  /** writes that waited to be heard by another replica: acknowledged, or waited out (it never answered) */
  readonly stats = { acknowledged: 0, waitedOut: 0 }
  /** this process's name in its markers */
  readonly id = randomUUID()
  private armedUntil = 0
  private following = false
  private seq = 0
  private renewals = 0
  /**
   * This process's markers that came back, numbered in the order they came back: the commit
   * order, the same on every LISTEN connection. (Their seq is the order they were made in,
   * inside transactions that may commit in another order.)
   */
  private readonly echoed = new Map<number, number>()
  private echoes = 0
  private readonly echoWaiters = new Set<{ seq: number; done: () => void; timer?: ReturnType<typeof setTimeout> }>()
  /** renewal marker → when it was sent (performance.now()) */
  private readonly renewing = new Map<string, number>()
  /** other replicas → when their last renewal was heard here (performance.now()) */
  private readonly renewed = new Map<string, number>()
  private readonly waiters = new Set<Waiter>()
  /** other writers' markers heard and not yet acknowledged: writer id → the seq of the last one heard */
  private readonly toAck = new Map<string, number>()
  /**
   * replica id → the place (in `echoed`) of the last of this process's markers it acknowledged:
   * it has heard every marker (and commit) of this process up to that place
   */
  private readonly acked = new Map<string, number>()
  private acking = false
  private timer: ReturnType<typeof setInterval> | null = null
  private renewPending: Promise<void> | null = null
  private registered = false

  constructor(
    private readonly db: Db,
    private readonly onLapse: () => void = () => {},
    private readonly log: Pick<Logger, 'warn'> = createLogger('warn'),
  ) {
    void db
      .listen(BARRIER_CHANNEL, {
        message: (payload) => this.onMarker(payload),
        up: () => {
          this.following = true
          void this.renew()
        },
        down: () => {
          this.following = false
          this.renewing.clear() // their markers may never come back
          this.lapse()
          for (const w of this.echoWaiters) {
            clearTimeout(w.timer)
            w.done() // they fall back to waiting out every renewal
          }
          this.echoWaiters.clear()
        },
      })
      // without it this process never answers from memory (a slower, still correct, replica)
      .catch((err) => this.warn('replica LISTEN failed; this process will not answer from memory', BARRIER_CHANNEL, err))
    void db
      .listen(ACK_CHANNEL, { message: (payload) => this.onAck(payload), up() {}, down() {} })
      // without it this process's writes wait out every other replica's renewal instead
      .catch((err) => this.warn('replica LISTEN failed; writes will wait out other replicas instead', ACK_CHANNEL, err))
  }

  private warn(msg: string, channel: string, err: unknown): void {
    this.log.warn(msg, { replica: this.id, channel, reason: err instanceof Error ? err.message : String(err) })
  }

  /** Start renewing, so this process answers from memory (main.ts, once the server listens). */
  start(): Promise<void> {
    this.registered = true
    this.timer = setInterval(() => void this.renew(), RENEW_MS)
    this.timer.unref?.()
    return this.renew()
  }

  /** Stop renewing and answering from memory, then say so: writers stop waiting for this process. */
  async stop(): Promise<void> {
    this.registered = false
    if (this.timer) clearInterval(this.timer)
    this.lapse()
    // a renewal still on its way would land after the 'bye' and be waited for
    await this.renewPending
    // (if this fails, writers wait for it until LEASE_MS after its last renewal)
    await q.signal(this.db, BARRIER_CHANNEL, `${this.id} bye`).catch(() => {})
  }

  /** May a revision learned in the current `epoch` be used now? */
  trusted(): boolean {
    if (this.armedUntil === 0) return false
    if (performance.now() < this.armedUntil) return true
    this.lapse()
    return false
  }

  private lapse(): void {
    if (this.armedUntil !== 0) {
      this.armedUntil = 0
      this.epoch++
      this.onLapse()
    }
  }

  /** Send a renewal marker (one at a time, and not while the LISTEN connection is down). */
  private renew(): Promise<void> {
    if (!this.registered || !this.following) return Promise.resolve()
    this.renewPending ??= (async () => {
      const marker = `${this.id} r${++this.renewals}`
      this.renewing.set(marker, performance.now())
      try {
        await within(q.signal(this.db, BARRIER_CHANNEL, marker), SEND_MS, 'renewal')
      } catch (err) {
        this.renewing.delete(marker) // not renewed: answering from memory ends on the last one
        this.warn('replica renewal failed; answering from memory ends with the last one', BARRIER_CHANNEL, err)
      }
    })().finally(() => {
      this.renewPending = null
    })
    return this.renewPending
  }

  /** The marker a transaction that writers wait on ends with: [channel, payload] (src/db/postgres.ts). */
  marker(): [channel: string, payload: string] {
    return [BARRIER_CHANNEL, `${this.id} ${++this.seq}`]
  }

  /**
   * Resolves once `marker` (committed) has come back here and every other replica that may be
   * answering from memory on a renewal heard before it has acknowledged it, or no longer is.
   */
  async heard([, payload]: [string, string]): Promise<void> {
    const seq = Number(payload.slice(payload.indexOf(' ') + 1))
    const committed = performance.now()
    if (!this.echoed.has(seq) && this.following) {
      // every renewal committed before the write is heard before its marker comes back; a
      // marker that does not come back by then is waited out with every renewal
      await new Promise<void>((done) => {
        const waiter: { seq: number; done: () => void; timer?: ReturnType<typeof setTimeout> } = { seq, done }
        this.echoWaiters.add(waiter)
        waiter.timer = setTimeout(() => {
          this.echoWaiters.delete(waiter)
          done()
        }, LEASE_MS + SLACK_MS)
      })
    }
    const now = performance.now()
    const pending = new Map<string, number>()
    const place = this.echoed.get(seq)
    if (place !== undefined) {
      for (const [id, at] of this.renewed) {
        const until = at + LEASE_MS + SLACK_MS
        if (until > now) pending.set(id, until)
        else this.renewed.delete(id)
      }
    } else if (committed + LEASE_MS + SLACK_MS > now) {
      // not heard back (the connection is down or slow): a renewal sent before the commit ends by then
      pending.set('', committed + LEASE_MS + SLACK_MS)
    }
    if (pending.size === 0) return
    await new Promise<void>((done) => {
      const waiter: Waiter = { place: place ?? Number.POSITIVE_INFINITY, pending, done, timer: null, waitedOut: false }
      this.waiters.add(waiter)
      this.settle(waiter)
    })
  }

  /** Resolve `waiter` once no replica it waits for is left; else wait for the next renewal's end. */
  private settle(waiter: Waiter): void {
    const now = performance.now()
    for (const [id, until] of waiter.pending)
      if ((this.acked.get(id) ?? 0) >= waiter.place) waiter.pending.delete(id)
      else if (until <= now) {
        waiter.pending.delete(id)
        waiter.waitedOut = true
      }
    if (waiter.timer) clearTimeout(waiter.timer)
    waiter.timer = null
    if (waiter.pending.size === 0) {
      this.waiters.delete(waiter)
      if (waiter.waitedOut) this.stats.waitedOut++
      else this.stats.acknowledged++
      waiter.done()
      return
    }
    const first = Math.min(...waiter.pending.values())
    waiter.timer = setTimeout(() => this.settle(waiter), Math.max(1, first - now))
  }

  private onMarker(payload: string): void {
    const space = payload.indexOf(' ')
    const writer = payload.slice(0, space)
    const what = payload.slice(space + 1)
    const renewal = what.startsWith('r')
    if (writer !== this.id) {
      if (renewal) this.renewed.set(writer, performance.now())
      else if (what === 'bye') {
        // it stopped answering from memory before it said so
        this.renewed.delete(writer)
        this.ack(writer, Number.POSITIVE_INFINITY)
      } else {
        // another writer's marker: its commit's notifications were heard here before it
        // (the last heard, not the highest: markers commit in another order than they are numbered)
        this.toAck.set(writer, Number(what))
        if (!this.acking) void this.sendAcks()
      }
      return
    }
    if (!renewal) {
      const seq = Number(what)
      // bounded: a place forgotten only makes an acknowledgement of it count for nothing
      if (this.echoed.size >= MAX_ECHOES) this.echoed.delete(this.echoed.keys().next().value!)
      this.echoed.set(seq, ++this.echoes)
      for (const w of this.echoWaiters)
        if (w.seq === seq) {
          this.echoWaiters.delete(w)
          clearTimeout(w.timer)
          w.done()
        }
      return
    }
    // our renewal came back on our LISTEN connection: answer from memory until before its end
    const sent = this.renewing.get(payload)
    if (sent === undefined) return
    for (const marker of this.renewing.keys()) {
      this.renewing.delete(marker)
      if (marker === payload) break
    }
    if (!this.following || !this.registered) return
    // a renewal that ran out before this one came back ends what was learned under it
    if (this.armedUntil !== 0 && performance.now() >= this.armedUntil) this.lapse()
    this.armedUntil = Math.max(this.armedUntil, sent + LEASE_MS - MARGIN_MS)
  }

  private async sendAcks(): Promise<void> {
    this.acking = true
    try {
      while (this.toAck.size > 0) {
        const marks = [...this.toAck]
        this.toAck.clear()
        // unsent, the writers wait out this process's renewal instead (slower, still correct)
        await within(q.signal(this.db, ACK_CHANNEL, `${this.id} ${JSON.stringify(marks)}`), SEND_MS, 'acknowledgement').catch((err) =>
          this.warn('replica acknowledgement failed; writers wait out this renewal instead', ACK_CHANNEL, err),
        )
      }
    } finally {
      this.acking = false
    }
  }

  private onAck(payload: string): void {
    const space = payload.indexOf(' ')
    const from = payload.slice(0, space)
    let marks: [string, number][]
    try {
      marks = JSON.parse(payload.slice(space + 1))
    } catch {
      return
    }
    for (const [writer, seq] of marks) {
      // it came back here before this acknowledgement, which committed after it
      const place = writer === this.id ? this.echoed.get(seq) : undefined
      if (place !== undefined) this.ack(from, place)
    }
  }

  private ack(from: string, place: number): void {
    if ((this.acked.get(from) ?? 0) >= place) return
    this.acked.set(from, place)
    for (const waiter of this.waiters) if (waiter.pending.has(from)) this.settle(waiter)
  }
}
