import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { invalid } from '../http/errors'
import { addIterationAction, deleteIterationAction, reorderIterationsAction, updateIterationAction } from '../iterations/service'
import { batch } from '../nodes/batch'
import { add, afterAdd, classify, remove, restore, update } from '../nodes/service'
import { addProject, renameProject } from '../projects/service'

export type ActionHandler = (deps: Deps, user: User, body: Record<string, any>) => Promise<Record<string, unknown>>

/**
 * Every write of the API goes through POST /mutate and one of these actions. A Map, not an
 * object: the action name is the client's, and `constructor` or `__proto__` must find nothing.
 */
export const actions = new Map<string, ActionHandler>([
  ['add', add],
  ['update', update],
  ['delete', remove],
  ['restore', restore],
  ['batch', batch],
  ['classify', classify],
  ['addIteration', addIterationAction],
  ['updateIteration', updateIterationAction],
  ['deleteIteration', deleteIterationAction],
  ['reorderIterations', reorderIterationsAction],
  ['addProject', addProject],
  ['renameProject', renameProject],
])

/** Actions that ignore Idempotency-Key (api.md, Idempotency 5). */
export const NOT_IDEMPOTENT = new Set(['addProject'])

export function actionOf(body: Record<string, any>): ActionHandler {
  const handler = typeof body.action === 'string' ? actions.get(body.action) : undefined
  if (!handler)
    throw invalid(`action must be one of: ${[...actions.keys()].join(', ')}`, {
      _tip: 'Send {action, projectId, ...}; the guide lists the body of every action.',
    })
  return handler
}

/** Work that follows a committed write and must stay outside its transaction. */
export async function afterCommit(deps: Deps, request: Record<string, any>, body: Record<string, any>): Promise<Record<string, any>> {
  if (request.action === 'add' && typeof request.projectId === 'string') return afterAdd(deps, request.projectId, body)
  return body
}
