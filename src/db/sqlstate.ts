/** PostgreSQL error codes we give meaning to (SQLSTATE). */
export const SQLSTATE = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  checkViolation: '23514',
  notNullViolation: '23502',
  invalidTextRepresentation: '22P02',
  numericOutOfRange: '22003',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
} as const

export function sqlState(err: unknown): string | undefined {
  const e = err as { code?: unknown }
  return typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : undefined
}

/**
 * Does `err` say the database is out of reach for a moment (a restart, a failover, a dropped
 * connection, no free connection) or that the transaction lost a race it may simply run again
 * (a serialization failure, a deadlock)? Such a request is answered 503 with Retry-After: the
 * same request, sent again, may well succeed.
 */
export function transient(err: unknown): boolean {
  const state = sqlState(err)
  if (state)
    return (
      state.startsWith('08') || // connection exception
      state === '57P01' || // admin_shutdown
      state === '57P02' || // crash_shutdown
      state === '57P03' || // cannot_connect_now (starting up, shutting down)
      state === '53300' || // too_many_connections
      state === SQLSTATE.serializationFailure ||
      state === SQLSTATE.deadlockDetected
    )
  // the driver's and the socket's own words for a connection that failed or went away
  const code = (err as { code?: unknown })?.code
  return (
    typeof code === 'string' &&
    [
      'CONNECTION_CLOSED',
      'CONNECTION_ENDED',
      'CONNECTION_DESTROYED',
      'CONNECT_TIMEOUT',
      'ECONNREFUSED',
      'ECONNRESET',
      'EPIPE',
      'ETIMEDOUT',
    ].includes(code)
  )
}
