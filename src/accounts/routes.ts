import { Type } from '@sinclair/typebox'
import { Elysia, t } from 'elysia'
import type { Deps } from '../deps'
import { checkInput } from '../http/action-schema'
import { documentedBody, documentedQuery } from '../http/documented'
import { withUser } from './auth'
import { checkedScope, ScopeSchema } from './scope'

/** POST /keys' body (optional) and DELETE /keys' query string, checked by checkInput before the key is minted or revoked. */
const KeyBody = Type.Object(
  { label: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })), scope: Type.Optional(ScopeSchema) },
  { additionalProperties: false },
)
const KeyQuery = Type.Object({ keyId: Type.String() }, { additionalProperties: false })

import { createOwnKey, listOwnKeys, revokeOwnKey } from './service'

const Key = t.Object({
  keyId: t.String(),
  label: t.Union([t.String(), t.Null()]),
  prefix: t.String({ description: "the key's first 8 characters ('arb_' alone for keys minted before the list existed)" }),
  createdAt: t.String(),
  lastUsedAt: t.Union([t.String(), t.Null()], { description: 'recorded at most once a minute; null: never used' }),
  current: t.Boolean({ description: 'the key of this request' }),
  scope: ScopeSchema,
})

/** The caller's own API keys (docs/reference/authentication.md): any authenticated user, whatever the plan. */
export const keyRoutes = (deps: Deps) =>
  new Elysia({ name: 'keys' })
    .derive(withUser(deps))
    .get('/keys', ({ user, headers }) => listOwnKeys(deps.db, user, headers.authorization), {
      response: { 200: t.Object({ keys: t.Array(Key) }) },
      detail: { summary: 'Your live API keys, oldest first, each with its scope (never key material)', tags: ['keys'] },
    })
    .post(
      '/keys',
      async ({ user, body: raw, set }) => {
        const body = checkInput('body', KeyBody, raw === undefined ? {} : raw)
        const scope = body.scope === undefined ? undefined : checkedScope(body.scope)
        const key = await createOwnKey(deps, user, body.label ?? null, scope)
        set.status = 201
        return key
      },
      {
        response: { 201: t.Object({ apiKey: t.String(), keyId: t.String() }) },
        detail: {
          requestBody: { ...documentedBody(KeyBody), required: false },
          summary:
            'Mint an API key for yourself (shown once; at most 20 live keys), with an optional scope: a role and the projects it works on (live.md §6). Only a key of role write without a project list may list, mint or revoke keys.',
          tags: ['keys'],
        },
      },
    )
    .delete('/keys', ({ user, query }) => revokeOwnKey(deps, user, checkInput('query', KeyQuery, query).keyId), {
      response: { 200: t.Object({ success: t.Literal(true) }) },
      detail: {
        summary: 'Revoke one of your API keys at once, on every replica (never your last one)',
        tags: ['keys'],
        ...documentedQuery(KeyQuery),
      },
    })
