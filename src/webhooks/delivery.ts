import type { Deps } from '../deps'
import * as q from './queries'
import type { SendOutcome } from './send'

/** docs/reference/limits.md: 6 attempts in total (5 seconds to answer each: send.ts). */
export const MAX_ATTEMPTS = 6
/** How long a claimed attempt is ours: well past the timeout, so a live attempt is never taken over. */
const LEASE_MS = 60_000
/** Attempts claimed, and run side by side, per round; and rounds in flight at once. */
const BATCH = 100
const MAX_ROUNDS = 4

/** The wait after failed attempt `n` (1-based): 2, 4, 8, 16, 32 minutes, capped at 60, times the scale. */
export function retryDelayMs(attempt: number, scale: number): number {
  return Math.min(2 ** attempt, 60) * 60_000 * scale
}

/** What an attempt's outcome means for its delivery: delivered, retried later, or failed for good. */
function outcome(deps: Deps, d: q.ClaimedDelivery, sent: SendOutcome, attemptedAt: Date, finishedAt: Date): q.AttemptOutcome {
  const { httpStatus, error } = sent
  const status = error === null ? 'delivered' : d.attempts >= MAX_ATTEMPTS ? 'failed' : 'pending'
  const nextAttemptAt =
    status === 'pending' ? new Date(finishedAt.getTime() + retryDelayMs(d.attempts, deps.config.webhookBackoffScale)) : finishedAt
  if (status === 'failed') deps.log.warn('webhook delivery failed for good', { delivery: d.id, webhook: d.webhook_id, error })
  return { id: d.id, attempts: d.attempts, status, httpStatus, error, attemptedAt, nextAttemptAt }
}

/**
 * One round: the claimed attempts go to the delivery worker (sender.ts), which runs them side by
 * side; their outcomes are recorded in one statement.
 */
async function runRound(deps: Deps, claimed: q.ClaimedDelivery[]): Promise<void> {
  const attemptedAt = deps.now()
  const timestamp = Math.floor(attemptedAt.getTime() / 1000)
  const sent = await deps.webhookSender.send(
    claimed.map((d) => ({
      id: d.id,
      url: d.url,
      event: d.event,
      secret: d.secret,
      payload: d.payload,
      timestamp,
    })),
  )
  const finishedAt = deps.now() // the app's clock, which tests move (the worker's `ms` is wall time)
  await q.recordAttempts(
    deps.db,
    claimed.map((d, i) => outcome(deps, d, sent[i]!, attemptedAt, finishedAt)),
  )
}

const leaseFrom = (now: Date) => new Date(now.getTime() + LEASE_MS)
const claim = (deps: Deps, now: Date) => q.claimDue(deps.db, now, leaseFrom(now), BATCH)

/** Events read per project and fan-out statement. */
const FAN_OUT_PAGE = 500

/**
 * Turn the events committed since the last call into deliveries (the outbox fan-out), until no
 * project has a full page left. The write itself only adds its event: this runs here, after
 * the commit has woken the loop, not inside the write's transaction. The first `room`
 * deliveries made are claimed as they are made and returned, so a first attempt needs no claim
 * statement of its own; `backlog` says whether some were made beyond them (due now, for a claim).
 */
export async function fanOut(
  deps: Deps,
  room: number,
  now: Date = deps.now(),
): Promise<{ claimed: q.ClaimedDelivery[]; backlog: boolean; held: boolean }> {
  const claimed: q.ClaimedDelivery[] = []
  let backlog = false
  for (;;) {
    const r = await q.fanOut(deps.db, FAN_OUT_PAGE, leaseFrom(now), room - claimed.length)
    claimed.push(...r.claimed)
    if (r.made > r.claimed.length) backlog = true
    if (r.events < FAN_OUT_PAGE) return { claimed, backlog, held: r.held }
  }
}

/** `claimed` in rounds of at most BATCH. */
const inRounds = (claimed: q.ClaimedDelivery[]) =>
  Array.from({ length: Math.ceil(claimed.length / BATCH) }, (_, i) => claimed.slice(i * BATCH, (i + 1) * BATCH))

/**
 * Fan the new events out, then claim every attempt due at `now` and run it, at most MAX_ROUNDS rounds at a time; resolves
 * once every outcome is recorded, with how many ran. Safe to call from several places and
 * several replicas at once: a row is claimed by one caller only.
 */
export async function deliverDue(deps: Deps, now: Date = deps.now()): Promise<number> {
  const rounds = new Set<Promise<void>>()
  const start = (claimed: q.ClaimedDelivery[]) => {
    const round: Promise<void> = runRound(deps, claimed).finally(() => rounds.delete(round))
    rounds.add(round)
  }
  const fresh = await fanOut(deps, BATCH * MAX_ROUNDS, now)
  for (const batch of inRounds(fresh.claimed)) start(batch)
  let total = fresh.claimed.length
  for (;;) {
    if (rounds.size >= MAX_ROUNDS) await Promise.race(rounds)
    const claimed = await claim(deps, now)
    total += claimed.length
    if (claimed.length) start(claimed)
    if (claimed.length < BATCH) break
  }
  await Promise.all(rounds)
  return total
}

/**
 * Under a stream of writes, fan-outs start at most this often: the events committed in between
 * are fanned out (and claimed by the same statement), sent and recorded together, so each write
 * pays a small share of two statements instead of both. The first event after a quiet spell is claimed at once.
 * Sequential writes with 10 webhooks, PostgreSQL (wrk -t1 -c1; p50 with / without webhooks):
 * 50 ms gave 1.5-2x, 200 ms 0.96-1.0x, 500 ms no better; on PGlite 50 ms was already 1.05x.
 * Under the stream a first attempt then waits up to 200 ms.
 */
export const CLAIM_EVERY_MS = 200

/**
 * How soon the fan-out runs again while a committed event waits behind an older transaction still
 * running (another write, an import's chunk, in any database of the cluster): that transaction's
 * end wakes nothing, and the loop's own tick comes only every SCHEDULER_INTERVAL_MS.
 */
const HELD_AGAIN_MS = 1_000

/** How often a wake-up also claims everything due (retries, lapsed leases) when nothing is known to wait. */
const SWEEP_EVERY_MS = 5_000

/**
 * What the `events` wake-up runs: first attempts at once after a commit. Unlike `deliverDue` it
 * never waits for a round before claiming the next, so a receiver that hangs for 5 s holds up
 * only its own round, not the events committed meanwhile. Wake-ups during a fan-out, or within
 * CLAIM_EVERY_MS of the last one, are folded into one more; a finished round runs one again.
 * An event the fan-out found held back by an older transaction is looked for again after
 * HELD_AGAIN_MS. Deliveries the fan-out made beyond what it could claim are claimed at once; retries and lapsed
 * leases at most every SWEEP_EVERY_MS (and by the loop's tick). `stop` waits for what is in flight.
 */
export function createDeliveryRunner(deps: Deps) {
  const rounds = new Set<Promise<void>>()
  let claiming: Promise<void> | null = null
  let again = false
  let stopped = false
  let lastClaim = Number.NEGATIVE_INFINITY
  /** deliveries made but not claimed are waiting; and when the last claim of everything due ran */
  let backlog = true
  let lastSweep = Number.NEGATIVE_INFINITY
  let timer: ReturnType<typeof setTimeout> | null = null
  /** set while a fan-out found an event held back (HELD_AGAIN_MS) */
  let heldTimer: ReturnType<typeof setTimeout> | null = null
  const startRound = (claimed: q.ClaimedDelivery[]) => {
    const round: Promise<void> = runRound(deps, claimed)
      .catch((err) => deps.log.error('webhook delivery round failed', { error: String(err) }))
      .finally(() => {
        rounds.delete(round)
        pump()
      })
    rounds.add(round)
  }
  const pump = (): void => {
    if (stopped) return
    if (claiming) {
      again = true
      return
    }
    const wait = lastClaim + CLAIM_EVERY_MS - performance.now()
    if (wait > 0) {
      timer ??= setTimeout(() => {
        timer = null
        pump()
      }, wait)
      return
    }
    lastClaim = performance.now()
    again = false
    claiming = (async () => {
      const fresh = await fanOut(deps, BATCH * Math.max(0, MAX_ROUNDS - rounds.size))
      for (const batch of inRounds(fresh.claimed)) startRound(batch)
      backlog ||= fresh.backlog
      // an event held back: look again soon (a wake-up before then runs it sooner)
      if (fresh.held && !stopped)
        heldTimer ??= setTimeout(() => {
          heldTimer = null
          pump()
        }, HELD_AGAIN_MS)
      // deliveries the fan-out could not claim, and now and then retries and lapsed leases
      // (the loop's tick claims those too, every SCHEDULER_INTERVAL_MS)
      if (!backlog && performance.now() - lastSweep < SWEEP_EVERY_MS) return
      lastSweep = performance.now()
      for (;;) {
        if (stopped || rounds.size >= MAX_ROUNDS) {
          backlog = true // more may be due: a finished round's wake-up claims again
          break
        }
        const claimed = await claim(deps, deps.now())
        if (claimed.length) startRound(claimed)
        if (claimed.length < BATCH) {
          backlog = false
          break
        }
      }
    })()
      .catch((err) => deps.log.error('webhook delivery claim failed', { error: String(err) }))
      .finally(() => {
        claiming = null
        // the wake-ups that came meanwhile: one more fan-out, CLAIM_EVERY_MS after this one began
        // (run at once, they made about one fan-out per write under a stream of writes)
        if (again && !stopped) pump()
      })
  }
  return {
    run: pump,
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      if (heldTimer) clearTimeout(heldTimer)
      while (claiming || rounds.size) await Promise.allSettled([claiming, ...rounds])
    },
  }
}
