import { Type } from '@sinclair/typebox'
import { IntegerText, refined, ruled } from '../http/action-schema'

export const DEFAULT_LIMIT = 100
export const MAX_LIMIT = 500
/** GET /events?wait: the longest an empty page is held open (docs/agents.md). */
export const MAX_WAIT_SECONDS = 60

/** A cursor is `<transaction id>_<seq>`, both bigints in the database. */
export const CURSOR = /^(\d{1,20})_(\d{1,20})$/
const MAX_BIGINT = 2n ** 63n - 1n

/** Is `after` a cursor this endpoint could have given ('' and absent mean the start)? A number past a bigint's range is none of ours. */
const isCursor = (after: string) => {
  if (after === '') return true
  const m = CURSOR.exec(after)
  return !!m && BigInt(m[1]!) <= MAX_BIGINT && BigInt(m[2]!) <= BigInt(Number.MAX_SAFE_INTEGER)
}

/** GET /events' query values (strings) with docs/reference/events.md's messages, checked in this order after the access check (checkInput). */
export const EventsQuery = Type.Object(
  {
    projectId: Type.String(),
    limit: Type.Optional(IntegerText(1, MAX_LIMIT, `limit must be an integer from 1 to ${MAX_LIMIT}`)),
    wait: Type.Optional(
      refined(
        ruled(Type.String({ pattern: '^\\d{0,2}$' }), `wait must be an integer from 0 to ${MAX_WAIT_SECONDS} (seconds)`),
        (wait) => Number(wait) <= MAX_WAIT_SECONDS,
      ),
    ),
    after: Type.Optional(
      refined(
        ruled(Type.String(), {
          message: 'after must be a nextCursor returned by this endpoint',
          tip: 'Omit after to start from the oldest event kept (7 days).',
        }),
        isCursor,
      ),
    ),
  },
  { additionalProperties: false },
)
