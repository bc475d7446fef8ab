import { newId } from '../accounts/keys'
import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { RefusalError } from '../errors'
import { requireProject } from '../projects/access'
import * as q from './queries'

export const FEEDBACK_KINDS = ['feature_request', 'friction', 'bug', 'note'] as const
const PER_DAY = 20
const MAX_CONTEXT_BYTES = 4096

const bad = (code: string, message: string) => new RefusalError(400, code, { message })

/**
 * Store one feedback item as written (api.md, POST /feedback). It is not added to the plan
 * and not sent to a model. projectId is kept only when the key can reach that project.
 */
export async function submitFeedback(deps: Deps, user: User, agentId: string | undefined, body: Record<string, unknown>) {
  const { kind, summary, details, context, projectId } = body
  if (typeof kind !== 'string' || !(FEEDBACK_KINDS as readonly string[]).includes(kind))
    throw bad('invalid_kind', `kind must be one of: ${FEEDBACK_KINDS.join(', ')}`)
  if (typeof summary !== 'string' || summary.trim().length < 1 || summary.length > 200)
    throw bad('invalid_summary', 'summary must be a string of 1 to 200 characters')
  if (details !== undefined && details !== null && (typeof details !== 'string' || details.length > 5000))
    throw bad('invalid_details', 'details must be a string of at most 5000 characters')
  if (context !== undefined && context !== null) {
    if (typeof context !== 'object' || Array.isArray(context)) throw bad('invalid_context', 'context must be a JSON object')
    if (new TextEncoder().encode(JSON.stringify(context)).length > MAX_CONTEXT_BYTES)
      throw bad('invalid_context', 'context must be at most 4 KB of JSON')
  }
  if (projectId !== undefined && projectId !== null && typeof projectId !== 'string')
    throw bad('invalid_projectId', 'projectId must be a string')

  let recordedProject: string | null = null
  let tip = 'Thanks: the item is stored as written. It is not added to your plan.'
  if (typeof projectId === 'string' && projectId) {
    // "can reach" is what every project endpoint checks, tier rules included
    const reachable = await requireProject(deps, user, projectId).then(
      () => true,
      (err) => {
        if (err instanceof RefusalError) return false
        throw err
      },
    )
    if (reachable) recordedProject = projectId
    else tip = `projectId ${projectId} was dropped: this key cannot reach that project. The item itself is stored.`
  }
  const since = new Date(deps.now().getTime() - 24 * 3600_000)
  return deps.db.tx(async (tx) => {
    // serialise one account's submissions so two at once cannot both pass the daily limit
    await tx.query('select pg_advisory_xact_lock(hashtext($1))', [`feedback:${user.id}`])
    const recent = await q.countRecent(tx, user.id, since)
    if (recent >= PER_DAY)
      throw new RefusalError(429, 'rate_limited', { message: `At most ${PER_DAY} feedback items per account in 24 hours` })
    const row = (await q.insert(tx, [
      newId('fb'),
      user.id,
      agentId?.slice(0, 200) ?? null,
      kind,
      summary,
      details ?? null,
      context ? JSON.stringify(context) : null,
      recordedProject,
    ]))!
    return { success: true as const, id: row.id, createdAt: new Date(row.created_at).toISOString(), _meta: { _tip: tip } }
  })
}
