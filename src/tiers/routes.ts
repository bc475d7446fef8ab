import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import { KEY_ROLE_HEADER } from '../accounts/scope'
import type { Deps } from '../deps'
import { tierStatus } from './service'

const Limits = t.Object({
  max_projects: t.Nullable(t.Number()),
  max_seats: t.Nullable(t.Number()),
  node_cap: t.Nullable(t.Number()),
})

export const TierStatus = t.Object(
  {
    tier: t.Union([t.Literal('free'), t.Literal('strategist'), t.Literal('builder'), t.Literal('team')]),
    status: t.String(),
    api_access: t.Boolean(),
    has_realtime: t.Boolean(),
    has_share_management: t.Boolean(),
    lapsed: t.Boolean(),
    is_contributor: t.Optional(t.Boolean()),
    builderTrial: t.Boolean(),
    trialExpiresAt: t.Null(),
    credits: t.Object({ used: t.Number(), limit: t.Nullable(t.Number()), remaining: t.Nullable(t.Number()) }),
    limits: Limits,
    period: t.Nullable(t.Object({ start: t.String(), end: t.String() })),
  },
  { additionalProperties: true },
)

export const tierRoutes = (deps: Deps) =>
  new Elysia({ name: 'tiers' }).derive(withUser(deps)).get(
    '/tier-status',
    ({ user, set }) => {
      // the key's role (live.md §6) in a header, so the answer's body stays as docs/reference/account.md gives it: the MCP server reads it
      set.headers[KEY_ROLE_HEADER] = user.scope?.role ?? 'write'
      return tierStatus(deps.config, user, deps.now())
    },
    {
      response: { 200: TierStatus },
      detail: { summary: "The key's plan, credits and limits (the key's role in the X-Arbor-Key-Role header)", tags: ['account'] },
    },
  )
