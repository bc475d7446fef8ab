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
