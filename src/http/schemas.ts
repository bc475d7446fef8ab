import { t } from 'elysia'

/** The `{error, message?}` body of an ApiError (src/http/errors.ts), for route response schemas. */
export const RefusalBody = t.Object({ error: t.String(), message: t.Optional(t.String()) }, { additionalProperties: true })
