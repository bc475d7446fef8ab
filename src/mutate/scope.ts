import type { User } from '../accounts/model'
import { ACTION_NEEDS } from '../accounts/roles'
import { requireNeed, requireScopeProject, roleRefusal, unrestricted } from '../accounts/scope'
import { claimHeldByKey } from '../claims/service'
import type { Deps } from '../deps'
import type { ActionRequest } from './service'

/**
 * What the caller's key may do with this action (live.md §6), before it runs or is replayed: the
 * action's need (ACTION_NEEDS in src/accounts/roles.ts; an action without a row needs `write`),
 * the key's project list, and for a `work` key's `update` a live claim on the node that this key
 * took, sent as `claimToken`. Throws 403 key_scope.
 */
export async function requireActionScope(deps: Pick<Deps, 'db' | 'now'>, user: User, request: ActionRequest): Promise<void> {
  const scope = user.scope
  if (unrestricted(scope)) return
  if (typeof request.projectId === 'string') requireScopeProject(scope, request.projectId)
  const need = ACTION_NEEDS[request.action] ?? 'write'
  requireNeed(scope, need, `The action ${request.action}`)
  if (need !== 'claimed' || scope!.role === 'write') return
  const { projectId, nodeId, claimToken } = request
  if (
    typeof projectId === 'string' &&
    typeof nodeId === 'string' &&
    typeof claimToken === 'string' &&
    claimToken.length <= 200 &&
    user.keyId &&
    (await claimHeldByKey(deps.db, projectId, nodeId, claimToken, user.keyId, deps.now()))
  )
    return
  throw roleRefusal(
    scope!,
    `An update of ${typeof nodeId === 'string' ? nodeId : 'a node'} without a live claim of this key`,
    `a key with role write, or this key's live claim on the node sent as claimToken (claim it first: {action:'claim', projectId, nodeIds:['${typeof nodeId === 'string' ? nodeId : 'NODE_ID'}'], agent})`,
  )
}
