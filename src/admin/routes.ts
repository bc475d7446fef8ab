import { timingSafeEqual } from 'node:crypto'
import { Elysia, t } from 'elysia'
import { authChanged } from '../accounts/auth-cache'
import { publicUser, STATUSES, TIERS } from '../accounts/model'
import { checkedScope, ScopeSchema } from '../accounts/scope'
import { createApiKey, createUser, getApiKey, getUser, listUsers, rescopeKey, revokeApiKey, updateUser } from '../accounts/service'
import { backupStream } from '../backup/service'
import type { Deps } from '../deps'
import { notFound, RefusalError } from '../errors'
import { checkInput } from '../http/action-schema'
import { documentedBody } from '../http/documented'
import { literals } from '../ports/schema-rules'

// the lists `arbor user add|set` checks its --tier and --status against (src/cli/users.ts)
const Tier = literals(TIERS)
const Status = literals(STATUSES)

// the bodies, checked by checkInput in the handlers (the admin token is checked before, in derive)
const NewUser = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
    tier: t.Optional(Tier),
    status: t.Optional(Status),
    contributor: t.Optional(t.Boolean()),
  },
  { additionalProperties: false },
)
const UserPatch = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 100, pattern: '\\S' })),
    tier: t.Optional(Tier),
    status: t.Optional(Status),
    lapsed: t.Optional(t.Boolean()),
    contributor: t.Optional(t.Boolean()),
    creditsLimit: t.Optional(t.Nullable(t.Integer({ minimum: 0, maximum: 2_147_483_647, description: 'a 32-bit count; null: unlimited' }))),
  },
  { additionalProperties: false },
)
const NewKey = t.Object(
  { label: t.Optional(t.String({ maxLength: 100 })), scope: t.Optional(ScopeSchema) },
  { additionalProperties: false },
)
const Rescope = t.Object({ scope: ScopeSchema }, { additionalProperties: false })
const User = t.Object({ id: t.String(), name: t.String(), tier: Tier, status: Status, lapsed: t.Boolean(), contributor: t.Boolean() })

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** The operator's API (docs/operations.md). Without ADMIN_TOKEN it does not exist: every path answers 404. */
export const adminRoutes = (deps: Deps) =>
  new Elysia({ name: 'admin', prefix: '/admin/v1' })
    .derive(({ headers }) => {
      // derive runs before body validation: no token, no admin API, whatever the body
      const token = deps.config.adminToken
      if (!token) throw notFound('unknown_endpoint', { message: 'The admin API is disabled: ADMIN_TOKEN is not set' })
      const m = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '')
      if (!m || !sameToken(m[1]!, token)) throw new RefusalError(401, 'unauthorized', { message: 'Missing or invalid admin token' })
      return {}
    })
    .get('/users', async () => ({ users: (await listUsers(deps.db)).map(publicUser) }), {
      response: { 200: t.Object({ users: t.Array(User) }) },
      detail: { summary: 'List users', tags: ['admin'] },
    })
    .post(
      '/users',
      async ({ body: raw, set }) => {
        const body = checkInput('body', NewUser, raw)
        const { user, apiKey } = await createUser(deps.db, {
          name: body.name.trim(),
          tier: body.tier,
          status: body.status,
          contributor: body.contributor,
        })
        await authChanged(deps)
        set.status = 201
        return { user: publicUser(user), apiKey }
      },
      {
        response: { 201: t.Object({ user: User, apiKey: t.String() }) },
        detail: { summary: 'Create a user and its first API key (shown once)', tags: ['admin'], requestBody: documentedBody(NewUser) },
      },
    )
    .patch(
      '/users/:id',
      async ({ params, body: raw }) => {
        const body = checkInput('body', UserPatch, raw)
        const user = await updateUser(deps.db, params.id, { ...body, name: body.name?.trim() })
        await authChanged(deps)
        if (!user) throw notFound('user_not_found', { message: `User ${params.id} not found` })
        return { user: publicUser(user) }
      },
      {
        params: t.Object({ id: t.String() }),
        response: { 200: t.Object({ user: User }) },
        detail: {
          summary: 'Change a user: plan, status, lapsed, contributor, credits',
          tags: ['admin'],
          requestBody: documentedBody(UserPatch),
        },
      },
    )
    .post(
      '/users/:id/api-keys',
      async ({ params, body: raw, set }) => {
        const body = checkInput('body', NewKey, raw === undefined ? {} : raw)
        if (!(await getUser(deps.db, params.id))) throw notFound('user_not_found', { message: `User ${params.id} not found` })
        const scope = body.scope === undefined ? undefined : checkedScope(body.scope)
        const key = await createApiKey(deps.db, params.id, body.label ?? null, scope)
        await authChanged(deps)
        set.status = 201
        return key
      },
      {
        params: t.Object({ id: t.String() }),
        response: { 201: t.Object({ apiKey: t.String(), keyId: t.String() }) },
        detail: {
          summary: 'Mint another API key for a user (shown once), with an optional scope (live.md §6)',
          tags: ['admin'],
          requestBody: { ...documentedBody(NewKey), required: false },
        },
      },
    )
    .patch(
      '/api-keys/:keyId',
      ({ params, body }) => rescopeKey(deps, params.keyId, checkedScope(checkInput('body', Rescope, body).scope)),
      {
        params: t.Object({ keyId: t.String() }),
        response: { 200: t.Object({ keyId: t.String(), scope: ScopeSchema }) },
        detail: {
          summary: "Change a live key's scope; it holds at once, on every replica, as a revocation does",
          tags: ['admin'],
          requestBody: documentedBody(Rescope),
        },
      },
    )
    .delete(
      '/api-keys/:keyId',
      async ({ params }) => {
        const key = await getApiKey(deps.db, params.keyId)
        if (!key) throw notFound('key_not_found', { message: `API key ${params.keyId} not found` })
        await revokeApiKey(deps.db, params.keyId)
        await authChanged(deps)
        return { success: true as const }
      },
      {
        params: t.Object({ keyId: t.String() }),
        response: { 200: t.Object({ success: t.Literal(true) }) },
        detail: { summary: 'Revoke an API key; it stops working at once', tags: ['admin'] },
      },
    )
    .get(
      '/backup',
      () => {
        const stamp = deps.now().toISOString().replace(/[:.]/g, '-')
        const body = backupStream(deps.db, (err) => deps.log.error('backup failed', { error: String(err) }))
        return new Response(body, {
          headers: { 'content-type': 'application/x-ndjson', 'content-disposition': `attachment; filename="arbor-backup-${stamp}.ndjson"` },
        })
      },
      {
        detail: {
          summary: 'A consistent backup of the whole database, streamed as NDJSON (docs/backup.md); arbor restore loads it',
          tags: ['admin'],
          responses: {
            200: {
              description: 'NDJSON: a header line, one line per row, the sequences, an end line',
              content: { 'application/x-ndjson': {} },
            },
          },
        },
      },
    )
