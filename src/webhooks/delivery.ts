import { isIP } from 'node:net'
import type { Deps } from '../deps'
import { orderPayload } from '../events/service'
import * as q from './queries'
import { deliveryHeaders } from './sign'
import { checkUrl, RefusedUrl } from './ssrf'

/** api.md, Limits: 6 attempts in total, 5 seconds to answer. */
export const MAX_ATTEMPTS = 6
export const TIMEOUT_MS = 5_000
/** How long a claimed attempt is ours: well past the timeout, so a live attempt is never taken over. */
const LEASE_MS = 60_000
/** Attempts claimed, and run side by side, per round; and rounds in flight at once. */
const BATCH = 100
const MAX_ROUNDS = 4

/** The wait after failed attempt `n` (1-based): 2, 4, 8, 16, 32 minutes, capped at 60, times the scale. */
export function retryDelayMs(attempt: number, scale: number): number {
  return Math.min(2 ** attempt, 60) * 60_000 * scale
}

type Outcome = { httpStatus: number | null; error: string | null }

/** One HTTP attempt. Never throws: every failure becomes an outcome to record. */
async function send(deps: Deps, d: q.ClaimedDelivery, body: string, at: Date): Promise<Outcome> {
  let target: Awaited<ReturnType<typeof checkUrl>>
  try {
    // checked again at every attempt: the URL may have been fine at registration and the DNS
    // answer may have changed since (rebinding)
    target = await checkUrl(d.url, deps.config.webhookAllowInsecure)
  } catch (err) {
    if (err instanceof RefusedUrl) return { httpStatus: null, error: `${err.message}: ${err.detail}` }
    return { httpStatus: null, error: String((err as Error)?.message ?? err) }
  }
  const headers: Record<string, string> = deliveryHeaders({
    id: d.id,
    event: d.event,
    secret: d.secret,
    body,
    timestamp: Math.floor(at.getTime() / 1000),
  })
  // Connect to the address that was checked, not to whatever the name resolves to a moment
  // later; the Host header and TLS server name keep the original name.
  const url = new URL(target.url)
  let tls: { serverName: string } | undefined
  if (target.address && !isIP(url.hostname.replace(/^\[|\]$/g, ''))) {
    headers.host = url.host
    tls = { serverName: url.hostname.replace(/\.$/, '') }
    url.hostname = isIP(target.address) === 6 ? `[${target.address}]` : target.address
  }
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      proxy: false,
      signal: AbortSignal.timeout(TIMEOUT_MS),
      ...(tls ? { tls } : {}),
    } as RequestInit)
    await res.body?.cancel().catch(() => {})
    if (res.status >= 200 && res.status < 300) return { httpStatus: res.status, error: null }
    const redirect = res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : ''
    return { httpStatus: res.status, error: `HTTP ${res.status}${redirect}` }
  } catch (err: any) {
    if (err?.name === 'TimeoutError' || err?.name === 'AbortError')
      return { httpStatus: null, error: `no answer within ${TIMEOUT_MS / 1000} s` }
    return { httpStatus: null, error: String(err?.message ?? err).slice(0, 500) }
  }
}

async function attempt(deps: Deps, d: q.ClaimedDelivery): Promise<q.AttemptOutcome> {
  const body = JSON.stringify(orderPayload(d.payload))
  const attemptedAt = deps.now()
  const { httpStatus, error } = await send(deps, d, body, attemptedAt)
  const status = error === null ? 'delivered' : d.attempts >= MAX_ATTEMPTS ? 'failed' : 'pending'
  const finishedAt = deps.now()
  const nextAttemptAt =
    status === 'pending' ? new Date(finishedAt.getTime() + retryDelayMs(d.attempts, deps.config.webhookBackoffScale)) : finishedAt
  if (status === 'failed') deps.log.warn('webhook delivery failed for good', { delivery: d.id, webhook: d.webhook_id, error })
  return { id: d.id, attempts: d.attempts, status, httpStatus, error, attemptedAt, nextAttemptAt }
}

/** One round: run the claimed attempts side by side, then record their outcomes in one statement. */
async function runRound(deps: Deps, claimed: q.ClaimedDelivery[]): Promise<void> {
  const outcomes: q.AttemptOutcome[] = [] // in the order the attempts finish
  await Promise.all(claimed.map(async (d) => outcomes.push(await attempt(deps, d))))
  await q.recordAttempts(deps.db, outcomes)
}

const claim = (deps: Deps, now: Date) => q.claimDue(deps.db, now, new Date(now.getTime() + LEASE_MS), BATCH)

/**
 * Claim every attempt due at `now` and run it, at most MAX_ROUNDS rounds at a time; resolves
 * once every outcome is recorded, with how many ran. Safe to call from several places and
 * several replicas at once: a row is claimed by one caller only.
 */
export async function deliverDue(deps: Deps, now: Date = deps.now()): Promise<number> {
  let total = 0
  const rounds = new Set<Promise<void>>()
  for (;;) {
    if (rounds.size >= MAX_ROUNDS) await Promise.race(rounds)
    const claimed = await claim(deps, now)
    total += claimed.length
    if (claimed.length) {
      const round: Promise<void> = runRound(deps, claimed).finally(() => rounds.delete(round))
      rounds.add(round)
    }
    if (claimed.length < BATCH) break
  }
  await Promise.all(rounds)
  return total
}

/**
 * Under a stream of writes, claims start at most this often: the events committed in between
 * are claimed, sent and recorded together, so each write pays a share of one claim and one
 * record instead of both. The first event after a quiet spell is claimed at once.
 */
export const CLAIM_EVERY_MS = 10

/**
 * What the `events` wake-up runs: first attempts at once after a commit. Unlike `deliverDue` it
 * never waits for a round before claiming the next, so a receiver that hangs for 5 s holds up
 * only its own round, not the events committed meanwhile. Wake-ups during a claim, or within
 * CLAIM_EVERY_MS of the last one, are folded into one more claim; a finished round claims again.
 * `stop` waits for what is in flight.
 */
export function createDeliveryRunner(deps: Deps) {
  const rounds = new Set<Promise<void>>()
  let claiming: Promise<void> | null = null
  let again = false
  let stopped = false
  let lastClaim = Number.NEGATIVE_INFINITY
  let timer: ReturnType<typeof setTimeout> | null = null
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
    claiming = (async () => {
      do {
        again = false
        while (!stopped && rounds.size < MAX_ROUNDS) {
          const claimed = await claim(deps, deps.now())
          if (!claimed.length) break
          const round: Promise<void> = runRound(deps, claimed)
            .catch((err) => deps.log.error('webhook delivery round failed', { error: String(err) }))
            .finally(() => {
              rounds.delete(round)
              pump()
            })
          rounds.add(round)
          if (claimed.length < BATCH) break
        }
      } while (again && !stopped)
    })()
      .catch((err) => deps.log.error('webhook delivery claim failed', { error: String(err) }))
      .finally(() => {
        claiming = null
      })
  }
  return {
    run: pump,
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      while (claiming || rounds.size) await Promise.allSettled([claiming, ...rounds])
    },
  }
}
