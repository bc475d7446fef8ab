import { ErrorListError, PROJECT_ACCESS_DENIED, RefusalError } from '../errors'
import { closestName } from '../http/closest-name'

export { closestName }

/**
 * What a refused mutate adds to docs/reference/mutate.md's fixed bodies so a person can fix the call (issue 47):
 * the closest action to a misspelt one, and why a projectId was refused. Only `_meta._tip`
 * grows; status, `error` and `message` stay what the contract says.
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
  const _tip =
    projectId === undefined || projectId === null || projectId === ''
      ? `projectId is missing: ${misspeltTip(body, 'projectId')}send the id of one of your projects in the body; GET /api/v1/projects lists them.`
      : `projectId ${JSON.stringify(String(projectId).slice(0, 100))} names no project this key can see (a typo, or a project it is not a member of); GET /api/v1/projects lists the ids this key can use.`
  const meta = (err.extra._meta ?? {}) as Record<string, unknown>
  const tipped = new RefusalError(403, err.error, { ...err.extra, _meta: { ...meta, _tip } })
  tipped.replayed = err.replayed
  return tipped
}

/** The body's top-level key that looks like a misspelt `expected` (`projectID`, `porjectId`), or null. */
function misspeltKey(body: unknown, expected: string): string | null {
  if (!body || typeof body !== 'object' || Array.isArray(body) || Object.hasOwn(body, expected)) return null
  for (const key of Object.keys(body).slice(0, 50)) if (closestName(key, [expected]) === expected) return key
  return null
}

/** "the body has `projectID`: did you mean `projectId`? " when it has such a key, else ''. */
function misspeltTip(body: unknown, expected: string): string {
  const key = misspeltKey(body, expected)
  return key === null ? '' : `the body has \`${key.slice(0, 100)}\`: did you mean \`${expected}\`? `
}

/**
 * A 400 whose first error says a top-level field is required (`node is required: …`) while the
 * body has a key that looks like it misspelt (`nod`) gets a `_tip` that names that key (issue 55).
 */
export function withKeyTip(err: unknown, body: unknown): unknown {
  if (!(err instanceof ErrorListError) || err.status !== 400) return err
  const field = /^(\w+) is required\b/.exec(err.errors[0] ?? '')?.[1]
  const tip = field ? misspeltTip(body, field) : ''
  if (!tip) return err
  const old = typeof err.meta._tip === 'string' ? ` ${err.meta._tip}` : ''
  const tipped = new ErrorListError(
    err.errors,
    { ...err.meta, _tip: `${tip[0]?.toUpperCase()}${tip.slice(1).trim()}${old}` },
    err.status,
    err.retryAfter,
  )
  tipped.replayed = err.replayed
  return tipped
}
