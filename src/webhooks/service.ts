import { Type } from '@sinclair/typebox'
import { newId } from '../accounts/keys'
import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { notFound, RefusalError } from '../errors'
import { afterAccess, IntegerText, ProjectQuery, refined, ruled } from '../http/action-schema'
import { requireProject } from '../projects/access'
import * as q from './queries'
import { newSecret } from './sign'
import { checkUrl, RefusedUrl } from './ssrf'

/** The six event types of docs/reference/events.md (Events), in the order they are listed there. */
export const EVENT_TYPES = [
  'node.added',
  'node.updated',
  'node.deleted',
  'iteration.added',
  'iteration.updated',
  'iteration.deleted',
] as const

/**
 * Claim events (docs/agents.md): sent only to a webhook that lists them by name, so a
 * webhook registered for "all six" never receives them.
 */
export const CLAIM_EVENT_TYPES = ['node.claimed', 'node.released'] as const
/** Proposal events (live.md §5): like the claim events, sent only to a webhook that lists them by name. */
export const PROPOSAL_EVENT_TYPES = ['proposal.created', 'proposal.applied', 'proposal.rejected', 'proposal.withdrawn'] as const
const ALL_EVENT_TYPES: readonly string[] = [...EVENT_TYPES, ...CLAIM_EVENT_TYPES, ...PROPOSAL_EVENT_TYPES]

export const MAX_WEBHOOKS = 10
const MAX_URL = 2048

const bad = (error: string, message?: string) => new RefusalError(400, error, message ? { message } : {})

/** GET /webhooks/deliveries' query string with docs/reference/events.md's messages, checked after the access check (checkInput). */
export const DeliveriesQuery = Type.Object(
  {
    projectId: Type.String(),
    id: ruled(Type.String({ minLength: 1, description: 'the webhook id' }), () => bad('id is required')),
    limit: Type.Optional(IntegerText(1, 200, () => bad('limit must be an integer from 1 to 200'), '1 to 200, default 50')),
  },
  { additionalProperties: true },
)

const eventsDoc = `event names; omitted means all six: ${EVENT_TYPES.join(', ')}; ${[...CLAIM_EVENT_TYPES, ...PROPOSAL_EVENT_TYPES].join(', ')} only when listed`

/** POST /webhooks' body, checked after the access check (checkInput); the URL and the events are checked below (cleanUrl, cleanEvents). */
export const RegisterBody = Type.Object(
  {
    projectId: Type.String(),
    url: Type.String({ description: 'https, publicly routable receiver URL' }),
    events: Type.Optional(Type.Array(Type.String(), { description: eventsDoc })),
  },
  { additionalProperties: false },
)

/** PATCH /webhooks' body, checked after the access check (checkInput): it changes at least one thing. */
export const UpdateBody = refined(
  Type.Object(
    {
      projectId: Type.String(),
      id: ruled(Type.String({ minLength: 1 }), () => bad('id is required')),
      url: Type.Optional(Type.String()),
      events: Type.Optional(Type.Array(Type.String(), { description: eventsDoc })),
      rotateSecret: Type.Optional(Type.Boolean({ description: 'true mints a new secret, shown once; the old one stops working at once' })),
    },
    { additionalProperties: false },
  ),
  (body) => body.url !== undefined || body.events !== undefined || body.rotateSecret === true,
  () => bad('Nothing to update: send at least one of url, events, rotateSecret'),
)

/** DELETE /webhooks' query string: `id`, any other name (webhookId) answering docs/reference/events.md's 400. */
export const DeleteQuery = Type.Object(
  { projectId: Type.String(), id: ruled(Type.String({ minLength: 1 }), () => bad('id is required')) },
  { additionalProperties: true },
)

/** Share and webhook endpoints refuse with 403 'Not your project' and 404 for an unknown project (docs/reference/events.md). */
export const projectFor = (deps: Deps, user: User, projectId: string) =>
  requireProject(deps, user, projectId, {
    deny: 'not-yours',
    unknown: () => notFound(`Project ${projectId} not found`, { message: 'No project has that id; GET /projects lists yours.' }),
  })

/** The URL the body's schema typed a string: not blank, not over MAX_URL, then the SSRF check (its host resolved). */
async function cleanUrl(deps: Deps, url: string): Promise<string> {
  if (url.trim() === '') throw bad('url is required', 'Send the https URL of your receiver.')
  if (url.length > MAX_URL) throw bad(`url must be at most ${MAX_URL} characters`)
  try {
    return (await checkUrl(url.trim(), deps.config.webhookAllowInsecure)).url.toString()
  } catch (err) {
    if (err instanceof RefusedUrl) throw bad(err.message, err.detail)
    throw err
  }
}

/** The event names the body's schema typed an array of strings: known ones, each once, at least one. */
function cleanEvents(events: string[]): string[] {
  // docs/reference/events.md's message names the six; the claim events are listed in the guide
  const valid = `Valid: ${EVENT_TYPES.join(', ')}`
  if (events.length > ALL_EVENT_TYPES.length)
    throw bad(`Invalid events: ${events.length} entries; at most ${ALL_EVENT_TYPES.length}, each event name once. ${valid}`)
  const unknown = events.filter((e) => !ALL_EVENT_TYPES.includes(e))
  if (unknown.length) throw bad(`Invalid events: ${unknown.join(', ')}. ${valid}`)
  if (events.length === 0) throw bad(`Invalid events: the list is empty (omit events for all six). ${valid}`)
  return ALL_EVENT_TYPES.filter((e) => events.includes(e))
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null)

/** The public shape of a webhook. The secret appears only where docs/reference/events.md shows it: creation and rotation. */
function present(row: q.WebhookRow, withSecret = false) {
  return {
    id: row.id,
    url: row.url,
    events: ALL_EVENT_TYPES.filter((e) => row.events.includes(e)),
    ...(withSecret ? { secret: row.secret! } : {}),
    lastDeliveryAt: iso(row.last_delivery_at),
    lastStatus: row.last_status,
    lastError: row.last_error,
    createdAt: iso(row.created_at)!,
  }
}

export async function registerWebhook(deps: Deps, user: User, raw: unknown) {
  const { project, input: body } = await afterAccess((id) => projectFor(deps, user, id), 'body', RegisterBody, raw)
  const url = await cleanUrl(deps, body.url)
  const events = body.events === undefined ? [...EVENT_TYPES] : cleanEvents(body.events)
  const row = await deps.db.tx(async (tx) => {
    await q.lockProject(tx, project.id)
    if ((await q.countByProject(tx, project.id)) >= MAX_WEBHOOKS)
      throw bad(
        `Webhook limit reached: at most ${MAX_WEBHOOKS} webhooks per project`,
        'Delete one (DELETE /webhooks?projectId&id) or change one in place (PATCH /webhooks).',
      )
    return (await q.insert(tx, { id: newId('wh'), projectId: project.id, url, events, secret: newSecret(), now: deps.now() }))!
  })
  const { id, url: savedUrl, events: savedEvents, secret } = present(row, true)
  return {
    webhook: { id, url: savedUrl, events: savedEvents, secret: secret! },
    _meta: {
      _tip: 'Store the secret now: it is shown only once. Verify X-Arbor-Signature (sha256=<hex HMAC of the raw body>, keyed with the secret string) or webhook-signature with a Standard Webhooks library.',
    },
  }
}

export async function listWebhooks(deps: Deps, user: User, query: unknown) {
  const { project } = await afterAccess((id) => projectFor(deps, user, id), 'query', ProjectQuery, query)
  return { webhooks: (await q.listByProject(deps.db, project.id)).map((r) => present(r)) }
}

export async function updateWebhook(deps: Deps, user: User, raw: unknown) {
  const { project, input: body } = await afterAccess((id) => projectFor(deps, user, id), 'body', UpdateBody, raw)
  const set = {
    url: body.url === undefined ? undefined : await cleanUrl(deps, body.url),
    events: body.events === undefined ? undefined : cleanEvents(body.events),
    secret: body.rotateSecret === true ? newSecret() : undefined,
  }
  const row = await q.update(deps.db, project.id, body.id, set)
  if (!row) throw notFound('Webhook not found')
  const webhook = present(row, !!set.secret)
  return {
    webhook,
    _meta: {
      _tip: set.secret
        ? 'New secret shown once; the old one stopped working now, and pending retries are signed with the new one.'
        : 'Updated in place: the id and secret are unchanged.',
    },
  }
}

export async function deleteWebhook(deps: Deps, user: User, raw: unknown) {
  const { project, input: query } = await afterAccess((id) => projectFor(deps, user, id), 'query', DeleteQuery, raw)
  if (!(await q.remove(deps.db, project.id, query.id))) throw notFound('Webhook not found')
  return {
    success: true as const,
    deleted: query.id,
    _meta: { _tip: 'Its pending deliveries were dropped. Registering again mints a new secret.' },
  }
}

export async function listWebhookDeliveries(deps: Deps, user: User, raw: Record<string, string>) {
  const { project, input: query } = await afterAccess((id) => projectFor(deps, user, id), 'query', DeliveriesQuery, raw)
  const limit = query.limit === undefined ? 50 : Number(query.limit)
  const exists = (await q.listByProject(deps.db, project.id)).some((w) => w.id === query.id)
  if (!exists) throw notFound('Webhook not found')
  const rows = await q.listDeliveries(deps.db, project.id, query.id, limit)
  return {
    deliveries: rows.map((d) => ({
      id: d.id,
      event: d.event,
      status: d.status,
      attempts: d.attempts,
      lastStatus: d.last_status,
      lastError: d.last_error,
      lastAttemptAt: iso(d.last_attempt_at),
      nextAttemptAt: d.status === 'pending' ? iso(d.next_attempt_at) : null,
      createdAt: iso(d.created_at)!,
    })),
  }
}
