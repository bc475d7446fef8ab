import { randomUUID } from 'node:crypto'
import type { Db } from '../db'
import * as q from './queries'

/**
 * PostgreSQL, one replica or many: when may this process answer a cached read from memory,
 * without looking the project's revision up first? When it is sure to have heard of every
 * commit that any replica has acknowledged. Two halves make that true:
 *
 * - **Writers wait.** After a commit that notified a followed channel (a revision advanced, an
 *   access changed), the writer does not return before `heard()`: it sends a marker on
 *   BARRIER_CHANNEL and waits until every replica with a live lease has acknowledged it. The
 *   database delivers notifications in commit order, so a replica that heard the marker has
 *   heard every commit before it. A replica that does not answer is waited for until its lease
 *   runs out, at most LEASE_MS.
 * - **Readers hold a lease.** Each replica renews its row in `replicas` every RENEW_MS, and
 *   counts a renewal only when its own marker comes back on its LISTEN connection (so that
 *   connection is alive). It answers from memory only until LEASE_MS - MARGIN_MS after the
 *   renewal was sent, before the lease the writers read runs out. When the connection drops,
 *   or a renewal is late, it stops at once (`epoch` moves on) and looks revisions up again.
 *
 * A process that is frozen (a pause, SIGSTOP) holds writers up to LEASE_MS and, when it runs
 * again, finds its lease over before it answers anything from memory. `test/replicas.test.ts`
 * and `test/process.reads.test.ts` hold it to that.
 */
export const BARRIER_CHANNEL = 'arbor_barrier'
export const ACK_CHANNEL = 'arbor_ack'
export const LEASE_MS = 4000
export const RENEW_MS = 1000
/** kept between this replica's own end of answering from memory and the lease the writers see */
export const MARGIN_MS = 1000
/** waited beyond a lease's end for one that did not acknowledge (the clocks' rates may differ) */
const SLACK_MS = 50

interface Waiter {
  seq: number
  /** replica id → its lease's end on this process's clock */
  pending: Map<string, number>
  done: () => void
  timer: ReturnType<typeof setTimeout> | null
}

export class Replicas {
  /** moves on whenever answering from memory stops: what was learned before is not trusted after */
  epoch = 0
  private armedUntil = 0
  private following = false
  private seq = 0
  private renewals = 0
  /** renewal marker → when it was sent (performance.now()) */
  private readonly renewing = new Map<string, number>()
  private readonly waiters = new Set<Waiter>()
  /** other writers' markers heard and not yet acknowledged: writer id → seq */
  private readonly toAck = new Map<string, number>()
  private acking = false
  /** the markers being waited on share one barrier statement per round trip */
  private next: PromiseWithResolvers<void> | null = null
  private running = false
  private timer: ReturnType<typeof setInterval> | null = null
  private registered = false
  private stopped = false
  /** the lease's statements, one after another: a renewal never lands after the lease was given up */
  private leaseOps: Promise<unknown> = Promise.resolve()
  private renewPending: Promise<void> | null = null

  /** this process's name in `replicas` and in its markers (`start` gives it its final one) */
  id = `unregistered-${randomUUID()}`

  constructor(
    private readonly db: Db,
    private readonly onLapse: () => void = () => {},
  ) {
    void db
      .listen(BARRIER_CHANNEL, {
        message: (payload) => this.onMarker(payload),
        up: () => {
          this.following = true
          if (this.registered) void this.renew()
        },
        down: () => {
          this.following = false
          this.renewing.clear() // their markers may never come back
          this.lapse()
        },
      })
      .catch(() => {})
    void db.listen(ACK_CHANNEL, { message: (payload) => this.onAck(payload), up() {}, down() {} }).catch(() => {})
  }

  /**
   * Take a lease and keep it (main.ts, once the server listens, before it answers anything).
   * `place` names this host and port: the leases of earlier processes there are dropped (they
   * are gone, this one holds the port), so writers do not wait for them to run out.
   */
  async start(place: string): Promise<void> {
    this.id = `${place}:${randomUUID().slice(0, 8)}`
    this.registered = true
    await q.forgetPredecessors(this.db, `${place}:`, this.id)
    await this.renew()
    this.timer = setInterval(() => void this.renew(), RENEW_MS)
    this.timer.unref?.()
  }

  /** Stop answering from memory and drop the lease, so no writer waits for this process. */
  async stop(): Promise<void> {
    this.stopped = true
    this.registered = false
    if (this.timer) clearInterval(this.timer)
    this.lapse()
    // (if this fails, the lease runs out by itself)
    await (this.leaseOps = this.leaseOps.then(() => q.leave(this.db, this.id)).catch(() => {}))
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

  /**
   * Renew the lease, and send the marker that arms it when it comes back. Not while the LISTEN
   * connection is down: the lease then runs out, and writers stop waiting for this process.
   */
  private renew(): Promise<void> {
    // one at a time: renewals do not pile up behind a database that stopped answering
    if (this.renewPending) return this.renewPending
    const step = async () => {
      if (!this.registered || this.stopped || !this.following) return
      const marker = `${this.id} r${++this.renewals}`
      this.renewing.set(marker, performance.now())
      try {
        await q.renewLease(this.db, this.id, LEASE_MS)
        await this.db.notify(BARRIER_CHANNEL, marker)
      } catch {
        this.renewing.delete(marker) // not renewed: the lease runs out, and so does answering from memory
      }
    }
    const done = this.leaseOps.then(step).finally(() => {
      this.renewPending = null
    })
    this.leaseOps = this.renewPending = done
    return done
  }

  /**
   * Resolves once every replica with a live lease has heard of every commit this process made
   * before the call (or its lease has run out). Calls that come while one barrier is under way
   * share the next.
   */
  heard(): Promise<void> {
    this.next ??= Promise.withResolvers<void>()
    const { promise } = this.next
    if (!this.running) void this.barriers()
    return promise
  }

  private async barriers(): Promise<void> {
    this.running = true
    while (this.next) {
      const waiting = this.next
      this.next = null
      try {
        await this.barrier()
      } catch {
        // the write has committed; a replica that cannot be told stops answering from memory
        // within a lease (it cannot renew without the database either)
        await Bun.sleep(LEASE_MS + SLACK_MS)
      }
      waiting.resolve()
    }
    this.running = false
  }

  private async barrier(): Promise<void> {
    const seq = ++this.seq
    const live = await q.barrier(this.db, BARRIER_CHANNEL, `${this.id} ${seq}`)
    const now = performance.now()
    const pending = new Map<string, number>()
    for (const [id, ms] of live) pending.set(id, now + Number(ms) + SLACK_MS)
    if (pending.size === 0) return
    await new Promise<void>((done) => {
      const waiter: Waiter = { seq, pending, done, timer: null }
      this.waiters.add(waiter)
      this.settle(waiter)
    })
  }

  /** Resolve `waiter` once no replica it waits for is left; else wait for the next lease's end. */
  private settle(waiter: Waiter): void {
    const now = performance.now()
    for (const [id, until] of waiter.pending) if (until <= now || (this.acked.get(id) ?? 0) >= waiter.seq) waiter.pending.delete(id)
    if (waiter.timer) clearTimeout(waiter.timer)
    waiter.timer = null
    if (waiter.pending.size === 0) {
      this.waiters.delete(waiter)
      waiter.done()
      return
    }
    const first = Math.min(...waiter.pending.values())
    waiter.timer = setTimeout(() => this.settle(waiter), Math.max(1, first - now))
  }

  /** replica id → the highest of this process's markers it acknowledged */
  private readonly acked = new Map<string, number>()

  private onMarker(payload: string): void {
    const space = payload.indexOf(' ')
    const writer = payload.slice(0, space)
    const what = payload.slice(space + 1)
    if (writer === this.id) {
      if (what.startsWith('r')) {
        // our renewal came back on our LISTEN connection: answer from memory until before the lease ends
        const sent = this.renewing.get(payload)
        if (sent === undefined) return
        for (const marker of this.renewing.keys()) {
          this.renewing.delete(marker)
          if (marker === payload) break
        }
        if (!this.following || !this.registered || this.stopped) return
        // a lease that ran out before this renewal came back ends what was learned under it
        if (this.armedUntil !== 0 && performance.now() >= this.armedUntil) this.lapse()
        this.armedUntil = Math.max(this.armedUntil, sent + LEASE_MS - MARGIN_MS)
      } else this.ack(this.id, Number(what))
      return
    }
    if (what.startsWith('r')) return
    // another writer's marker: everything it waits for has been heard here (the listeners ran first)
    this.toAck.set(writer, Math.max(this.toAck.get(writer) ?? 0, Number(what)))
    if (!this.acking) void this.sendAcks()
  }

  private async sendAcks(): Promise<void> {
    this.acking = true
    try {
      while (this.toAck.size > 0) {
        const marks = [...this.toAck]
        this.toAck.clear()
        await this.db.notify(ACK_CHANNEL, `${this.id} ${JSON.stringify(marks)}`).catch(() => {})
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
    for (const [writer, seq] of marks) if (writer === this.id) this.ack(from, seq)
  }

  private ack(from: string, seq: number): void {
    if ((this.acked.get(from) ?? 0) >= seq) return
    this.acked.set(from, seq)
    for (const waiter of this.waiters) if (waiter.pending.has(from)) this.settle(waiter)
  }
}
