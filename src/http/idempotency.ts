import { createHash } from 'node:crypto'
import type { Config } from '../config'
import type { Db } from '../db'
import { one } from '../db/port'
import { ErrorListError, RefusalError } from '../errors'
import type { Logger } from '../log'
import { IdempotencyKey, parseAction } from './action-schema'
import { idempotencySql } from './queries'
import { isSealed, replaySecretOf, seal, unseal } from './seal'

/** What the idempotent runner needs: the database, the logger (a failed release) and the config (the seal's secret). */
export type IdempotencyDeps = { db: Db; log: Pick<Logger, 'info' | 'warn' | 'error'>; config: Pick<Config, 'replaySecret' | 'adminToken'> }

/** A claim left running is taken over after this long (sql/idempotency/claim.sql): retrying a failed release past it is moot. */
const TAKEOVER_MS = 10 * 60_000

export interface Outcome {
  status: number
  body: Record<string, unknown>
  replayed: boolean
}

/** What is stored under a key: the answer sent, once its request has run (status_code null until then, and response with it). */
type StoredRow = { request_hash: string; status_code: number | null; response: Record<string, unknown>; held?: boolean }

/** JSON with object keys sorted, so `{a,b}` and `{b,a}` are the same request. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    const fields = value as Record<string, unknown>
    return `{${Object.keys(fields)
      .sort()
      .filter((k) => fields[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical(fields[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

export const requestHash = (request: unknown) => createHash('sha256').update(canonical(request)).digest('hex')

/**
 * Runs a write at most once per (user, Idempotency-Key) within 24 hours (docs/reference/mutate.md).
 * The write and the stored response commit in one transaction, so a crash can never leave a
 * committed write without its stored answer (which would let a retry write twice).
 * Client errors (4xx) are stored and replayed too; a 5xx frees the key for a retry. Whether the
 * caller may still make this request (the project's access) is the caller's to ask before, for a
 * first run and a replay alike, so a replay never shows what the caller can no longer read.
 */
export async function runIdempotent(
  deps: IdempotencyDeps,
  userId: string,
  key: string | undefined,
  request: unknown,
  run: (db: Db) => Promise<Record<string, unknown>>,
  opts: {
    /** false: a 4xx frees the key instead of being replayed (the workflow's apply, whose refusals can pass) */
    storeRefusals?: boolean
    /** the answer carries secrets (claim tokens): stored sealed (./seal.ts), never readable at rest */
    sealed?: boolean
  } = {},
): Promise<Outcome> {
  const { db } = deps
  // every write is one transaction, with or without a key
  if (key === undefined) return { status: 200, body: await db.tx(run), replayed: false }
  parseAction(IdempotencyKey, key) // the header's key, or the body's idempotencyKey: the one rule of both (Envelope)
  const hash = requestHash(request)
  const claimed = await one(db, idempotencySql.claim, [userId, key, hash])
  const inProgress = () =>
    new ErrorListError(
      ['A request with this Idempotency-Key is still in progress; retry shortly'],
      { _tip: 'The first request with this key has not finished. Retry the same request in a few seconds.' },
      409,
      1,
    )
  const replay = async (row: StoredRow & { status_code: number }): Promise<Outcome> => {
    // a stored refusal is thrown again, so the error plugin renders it exactly as the first time
    if (row.status_code >= 400) throw replayedError(row.status_code, row.response)
    return { status: row.status_code, body: opened(deps, row.response), replayed: true }
  }
  if (!claimed) {
    const row = await one<StoredRow>(db, idempotencySql.get, [userId, key])
    if (!row || row.request_hash !== hash) throw new ErrorListError(['Idempotency-Key already used with a different request body'], {}, 409)
    if (row.status_code !== null) return replay({ ...row, status_code: row.status_code })
    if (!row.held) throw inProgress() // claimed before records were held: only time frees it (claim.sql)
    // no answer yet: running elsewhere (its transaction holds the record), or left by a process
    // that died mid-request (nothing holds it): then this request runs the write, below
  }
  let stored: (StoredRow & { status_code: number }) | undefined
  try {
    const body = await db.tx(async (tx) => {
      // the record stays locked while the write runs: a retry meanwhile is told it is in progress
      const own = await one<StoredRow>(tx, idempotencySql.own, [userId, key])
      if (!own) throw inProgress()
      if (own.request_hash !== hash) throw new ErrorListError(['Idempotency-Key already used with a different request body'], {}, 409)
      if (own.status_code !== null) {
        stored = { ...own, status_code: own.status_code } // answered meanwhile by another attempt
        return {}
      }
      const result = await run(tx)
      const kept = opts.sealed ? seal(replaySecretOf(deps.config), result) : result
      await tx.query(idempotencySql.complete, [userId, key, 200, JSON.stringify(kept)])
      return result
    })
    if (stored) return replay(stored)
    return { status: 200, body, replayed: false }
  } catch (err) {
    // not this attempt's answer: the key belongs to another attempt, running or done
    if (
      err instanceof ErrorListError &&
      err.status === 409 &&
      (err.retryAfter !== undefined || err.errors[0]?.startsWith('Idempotency-Key'))
    )
      throw err
    if ((err instanceof ErrorListError || err instanceof RefusalError) && err.status < 500 && opts.storeRefusals !== false) {
      await db.query(idempotencySql.complete, [userId, key, err.status, JSON.stringify(err.toBody())]).catch(async (stored) => {
        // the refusal could not be kept: free the key, or a retry would see "in progress" for 10 minutes
        deps.log.warn('idempotency refusal not stored; freeing the key', { userId, error: String(stored) })
        await release(deps, userId, key)
      })
    } else {
      await release(deps, userId, key)
    }
    throw err
  }
}

/** A stored answer as the caller first got it; a sealed one this process cannot open is refused with the reason. */
function opened(deps: IdempotencyDeps, stored: Record<string, unknown>): Record<string, unknown> {
  if (!isSealed(stored)) return stored
  const body = unseal(replaySecretOf(deps.config), stored)
  if (body) return body
  throw new ErrorListError(
    ['The answer to this Idempotency-Key carried secrets (claim tokens) and this server cannot replay it'],
    {
      _tip: 'Such answers are kept encrypted with REPLAY_SECRET (or ADMIN_TOKEN); it is unset or changed since. The claims taken stay held until they expire; claim again with a new Idempotency-Key.',
    },
    409,
  )
}

/**
 * Frees the key of a failed first attempt, so the client's retry runs instead of meeting 409
 * "in progress". A release that fails (the database unreachable) is logged with its reason and
 * retried in the background, with a growing pause, until it lands or the claim's own takeover
 * (10 minutes) has made it moot.
 */
async function release(deps: IdempotencyDeps, userId: string, key: string, attempt = 0, since = Date.now()): Promise<void> {
  try {
    await deps.db.query(idempotencySql.release, [userId, key])
    if (attempt > 0) deps.log.info('idempotency key released after a failed release', { userId, attempts: attempt + 1 })
  } catch (err) {
    if (Date.now() - since >= TAKEOVER_MS) {
      deps.log.error('idempotency key release failed; giving up, the key is taken over 10 minutes after its claim', {
        userId,
        attempts: attempt + 1,
        error: String(err),
      })
      return
    }
    const pause = Math.min(100 * 2 ** attempt, 30_000)
    deps.log.warn('idempotency key release failed; retrying', { userId, attempt: attempt + 1, retryInMs: pause, error: String(err) })
    const timer = setTimeout(() => void release(deps, userId, key, attempt + 1, since), pause)
    timer.unref?.()
  }
}

/** What is stored under a key: null when nothing is, `status: null` while its request runs. */
export async function storedOutcome(db: Db, userId: string, key: string) {
  const row = await one<StoredRow>(db, idempotencySql.get, [userId, key])
  return row ? { status: row.status_code, body: row.response as Record<string, unknown> | null } : null
}

/** A stored 4xx answer as the error that produced it, marked as a replay. */
function replayedError(status: number, body: Record<string, unknown>): ErrorListError | RefusalError {
  const { error, ...extra } = body
  const err =
    body.success === false
      ? new ErrorListError((body.errors as string[] | undefined) ?? [], (body._meta as Record<string, unknown> | undefined) ?? {}, status)
      : new RefusalError(status, String(error), extra)
  err.replayed = true
  return err
}

/** The clean-up loop's work: forget keys older than 24 hours. */
export async function deleteExpiredKeys(db: Db, now: Date): Promise<number> {
  return (await db.query(idempotencySql.deleteExpired, [now.toISOString()])).length
}
