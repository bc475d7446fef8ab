import { newId } from '../accounts/keys'
import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { RefusalError } from '../errors'
import { checkInput } from '../http/action-schema'
import { requireProject } from '../projects/access'
import { FeedbackInput } from './model'
import * as q from './queries'

const PER_DAY = 20

/**
 * Store one feedback item as written (docs/reference/account.md). It is not added to the plan
 * and not sent to a model. projectId is kept only when the key can reach that project.
 */
export async function submitFeedback(deps: Deps, user: User, agentId: string | undefined, body: unknown) {
  const { kind, summary, details, context, projectId } = checkInput('body', FeedbackInput, body)

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
