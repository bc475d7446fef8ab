import { RETENTION_DAYS } from '../events/service'
import { MAX_ATTEMPTS } from '../webhooks/delivery'
import { TIMEOUT_MS } from '../webhooks/send'
import { CLAIM_EVENT_TYPES, EVENT_TYPES, MAX_WEBHOOKS, PROPOSAL_EVENT_TYPES } from '../webhooks/service'

/** The guide's part on webhooks, share links, the pull feed and the OKF export. */
export const integrationsGuide = {
  events: {
    types: EVENT_TYPES,
    claimTypes: CLAIM_EVENT_TYPES,
    claimPayload:
      '{event, project_id, timestamp, nodeId, agent, expiresAt?}: node.claimed carries expiresAt; webhooks get these only when they list them by name',
    proposalTypes: PROPOSAL_EVENT_TYPES,
    proposalPayload:
      '{event, project_id, timestamp, proposalId, title, actor}: a proposal made, applied, rejected or withdrawn (live.md §5); webhooks get these only when they list them by name',
    nodePayload: '{event, project_id, timestamp (ISO 8601 UTC), node:{id,type,parentId,data}}',
    iterationPayload:
      '{event, project_id, timestamp, iteration:{name, status?, previous_name?}}: status only when it changed, previous_name on a rename',
    pull: {
      request: 'GET /api/v1/events?projectId&after=<nextCursor>&limit=<1-500, default 100>&wait=<0-60 seconds>',
      response: '{events:[payload…] oldest first, nextCursor, hasMore, _meta}',
      notes: [
        'The same payloads, byte for byte, as webhooks deliver: an agent without a public URL polls instead.',
        'Pass nextCursor back as after; it stays the same while nothing new arrived. Cursors are opaque.',
        'wait=N holds an empty page open until an event arrives or N seconds pass: no need to poll, and a waiting request does not count against the rate limit.',
        `Events are kept ${RETENTION_DAYS} days.`,
        'An event appears once every transaction that started before it has finished, so a cursor never skips one that commits late.',
      ],
    },
  },
  webhooks: {
    register: 'POST /api/v1/webhooks {projectId, url, events?} → 201 {webhook:{id,url,events,secret}}; the secret is shown once',
    list: 'GET /api/v1/webhooks?projectId → {webhooks:[{id,url,events,lastDeliveryAt,lastStatus,lastError,createdAt}]}; never secrets',
    update:
      'PATCH /api/v1/webhooks {projectId, id, url?, events?, rotateSecret?} → {webhook}; keeps id and secret; rotateSecret:true shows a new secret once and the old one stops working at once',
    delete: 'DELETE /api/v1/webhooks?projectId&id',
    deliveries:
      'GET /api/v1/webhooks/deliveries?projectId&id → recent deliveries: status (pending, delivered, failed), attempts, lastStatus, lastError, nextAttemptAt',
    rules: [
      "url must be https and publicly routable: 400 'url must use https' or 'url must be publicly routable' (loopback, private, link-local, CGNAT, multicast, unspecified, IPv4-mapped and unique-local addresses; the host is resolved).",
      `events omitted means all six; an unknown one gives 400 'Invalid events: … Valid: …'.`,
      `At most ${MAX_WEBHOOKS} webhooks per project.`,
      "403 {error:'Not your project'}; 404 {error:'Webhook not found'}; DELETE without id gives 400 {error:'id is required'}.",
    ],
    headers: {
      'X-Arbor-Event': 'the event type',
      'X-Arbor-Delivery': 'delivery id, the same on every retry of one event: deduplicate on it',
      'X-Arbor-Signature': 'sha256=<hex HMAC-SHA256 of the raw body>, keyed with the secret string (UTF-8, whsec_ prefix included)',
      'webhook-id, webhook-timestamp, webhook-signature':
        'Standard Webhooks: verify with any Standard Webhooks library and the same secret',
    },
    delivery: [
      'Persisted in the same transaction as the change; the first attempt is immediate.',
      `An attempt fails on a non-2xx answer or none within ${TIMEOUT_MS / 1000} s; redirects are not followed.`,
      `Retries after about 2, 4, 8, 16 and 32 minutes; after ${MAX_ATTEMPTS} attempts the delivery is failed for good. Reconcile with GET /nodes or GET /events.`,
      'Each attempt is signed with the current secret and checks the receiver address again.',
      'At least once: receivers must be idempotent.',
    ],
  },
  shareLinks: {
    mint: 'POST /api/v1/share {projectId, expiresInDays?, settings?:{includedGoalIds?}} → 201 {token, url, expiresAt, _meta}',
    list: 'GET /api/v1/share?projectId → {tokens:[{token,url,settings,createdAt,expiresAt,revokedAt,active}]} newest first',
    revoke: 'DELETE /api/v1/share?projectId&token → {success:true, revoked:<token or null>}; effective at once',
    view: 'GET <url> (HTML page) or GET /api/v1/public/share/<token> → {project:{name}, nodes:[{id,type,parentId,data}]}; no key; notes are never shown; 404 once revoked or expired',
    rules: [
      'Only a positive expiresInDays sets an expiry; anything else means never.',
      'includedGoalIds shares those goals and everything beneath them; if none is a goal the view is empty and _meta._tip says so.',
      'Owners and members may mint, list and revoke; without has_share_management a user lists and revokes only the links they minted (docs/api-guide.md, Share links).',
    ],
  },
  exportOkf: {
    request: 'GET /api/v1/export-okf?projectId',
    response: "{okf_version:'0.1', project:{id,name}, file_count, files:{<path>: <markdown>}}",
    notes: [
      'index.md declares okf_version 0.1 and lists every concept by type; one file per node under goals/, needs/, approaches/, jobs/, tasks/.',
      'YAML frontmatter: type, title, description, timestamp, and status, maturity, kano, size, approachStatus, goalStatus, iteration, measure, kind, urgent where present.',
      'Parent, blockedBy, serves and children are relative markdown links.',
    ],
  },
}
