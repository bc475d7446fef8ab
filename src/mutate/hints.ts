import { ErrorListError, PROJECT_ACCESS_DENIED, RefusalError } from '../errors'
import { closestName, misspeltKeyTip } from '../http/closest-name'

export { closestName }

/**
 * What a refused mutate adds to docs/reference/mutate.md's fixed bodies so a person can fix the call (issue 47):
 * why a projectId was refused, and the misspelt-key tip of a 400 (the closest action to a misspelt
 * one is the envelope's own rule, src/mutate/check.ts). Only `_meta._tip` grows; status, `error`
 * and `message` stay what the contract says. Both read the body as sent and are owed to refusals
 * of the edge's access check and of the handlers, not only to the checker's: so the route adds them
 * (src/mutate/routes.ts), the one place that holds the body and sees every refusal of the write.
 */

/**
 * A mutate refused because of its projectId gets a `_tip` that says whether it was missing or
 * names no project this key can see (the same words for an unknown project and another user's:
 * the answer never tells whether a project exists). Any other error passes through unchanged.
 */
export function withProjectTip(err: unknown, body: unknown): unknown {
  if (
    !(err instanceof RefusalError) ||
    err.status !== 403 ||
    err.error !== 'project_access_denied' ||
    err.message !== PROJECT_ACCESS_DENIED
  )
    return err
  const projectId = body && typeof body === 'object' ? (body as Record<string, unknown>).projectId : undefined
  const keyTip = misspeltKeyTip('body', body, ['projectId is required'])
  const _tip =
    projectId === undefined || projectId === null || projectId === ''
      ? `projectId is missing: ${keyTip ? `${keyTip[0]?.toLowerCase()}${keyTip.slice(1)} ` : ''}send the id of one of your projects in the body; GET /api/v1/projects lists them.`
      : `projectId ${JSON.stringify(String(projectId).slice(0, 100))} names no project this key can see (a typo, or a project it is not a member of); GET /api/v1/projects lists the ids this key can use.`
  const meta = (err.extra._meta ?? {}) as Record<string, unknown>
  const tipped = new RefusalError(403, err.error, { ...err.extra, _meta: { ...meta, _tip } })
  tipped.replayed = err.replayed
  return tipped
}

/**
 * A 400 that says a top-level field is required (`node is required: …`) while the body has a key
 * that looks like it misspelt (`nod`) gets the misspelt-key tip (src/http/closest-name.ts), the
 * one the checker gives a query string or a body checked by `checkInput`, before its own. Added
 * here, where the route holds the body as sent, because it is owed to the handlers' refusals too
 * (a node rule's `parentId is required: …`), not only to the checker's.
 */
export function withKeyTip(err: unknown, body: unknown): unknown {
  if (!(err instanceof ErrorListError) || err.status !== 400) return err
  const tip = misspeltKeyTip('body', body, err.errors)
  if (!tip) return err
  const old = typeof err.meta._tip === 'string' ? ` ${err.meta._tip}` : ''
  const tipped = new ErrorListError(err.errors, { ...err.meta, _tip: `${tip}${old}` }, err.status, err.retryAfter)
  tipped.replayed = err.replayed
  return tipped
}
