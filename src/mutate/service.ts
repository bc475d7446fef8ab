import type { Static, TSchema } from '@sinclair/typebox'
import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { invalid } from '../errors'
import { addIterationAction, deleteIterationAction, reorderIterationsAction, updateIterationAction } from '../iterations/service'
import { batch } from '../nodes/batch'
import { add, afterAdd, classify, nodeRows, remove, restore, update } from '../nodes/service'
import { addProject, renameProject } from '../projects/service'
import { aroundWrite, claim, releaseClaim, renewClaim } from '../work/service'
import * as m from './model'
import { parseAction } from './model'

export type ActionHandler<B = any> = (deps: Deps, user: User, body: B) => Promise<Record<string, unknown>>

/** An action: the schema of its body (src/mutate/model.ts) and the handler that receives it typed. */
export interface Action<S extends TSchema = TSchema> {
  schema: S
  handler: ActionHandler<Static<S>>
}
const action = <S extends TSchema>(schema: S, handler: ActionHandler<Static<S>>): Action<S> => ({ schema, handler })

/**
 * Every write of the API goes through POST /mutate and one of these actions. A Map, not an
 * object: the action name is the client's, and `constructor` or `__proto__` must find nothing.
 */
export const actions = new Map<string, Action<any>>([
  ['add', action(m.AddBody, add)],
  ['update', action(m.UpdateBody, update)],
  ['delete', action(m.DeleteBody, remove)],
  ['restore', action(m.RestoreBody, restore)],
  ['batch', action(m.BatchBody, batch)],
  ['classify', action(m.ClassifyBody, classify)],
  ['addIteration', action(m.AddIterationBody, addIterationAction)],
  // the node rows an iteration's rename or deletion moves, passed in (iterations does not import nodes)
  ['updateIteration', action(m.UpdateIterationBody, (deps, user, body) => updateIterationAction(deps, user, body, nodeRows.moveIteration))],
  ['deleteIteration', action(m.DeleteIterationBody, (deps, user, body) => deleteIterationAction(deps, user, body, nodeRows.moveIteration))],
  ['reorderIterations', action(m.ReorderIterationsBody, reorderIterationsAction)],
  ['addProject', action(m.AddProjectBody, addProject)],
  ['renameProject', action(m.RenameProjectBody, renameProject)],
  ['claim', action(m.ClaimBody, claim)],
  ['renewClaim', action(m.RenewClaimBody, renewClaim)],
  ['releaseClaim', action(m.ReleaseClaimBody, releaseClaim)],
])

/** The actions of agents-and-app.md, 2 (claims), beside api.md's. */
const CLAIM_ACTIONS = new Set(['claim', 'renewClaim', 'releaseClaim'])

/** Actions that ignore Idempotency-Key (api.md, Idempotency 5). */
export const NOT_IDEMPOTENT = new Set(['addProject'])

/**
 * The action a body names, or the 400 of api.md. The body must be a JSON object with a string
 * `action` (and, when sent, a valid `idempotencyKey`); the rest is the action's own schema.
 */
export function actionOf(body: unknown): Action {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw invalid('Request body must be a JSON object (Content-Type: application/json)')
  const name = (body as Record<string, unknown>).action
  if (name === undefined) throw invalid('action is required')
  if (typeof name !== 'string') throw invalid('action: Expected string')
  const found = actions.get(name)
  if (!found)
    // the message lists api.md's actions as it always has; the claim actions (agents-and-app.md) are named in the tip
    throw invalid(`action must be one of: ${[...actions.keys()].filter((a) => !CLAIM_ACTIONS.has(a)).join(', ')}`, {
      _tip: `Send {action, projectId, ...}; the guide lists the body of every action. Agents also have ${[...CLAIM_ACTIONS].join(', ')}.`,
    })
  const key = (body as Record<string, unknown>).idempotencyKey
  if (key !== undefined && (typeof key !== 'string' || key.length < 1 || key.length > 255))
    throw invalid('Idempotency-Key must be 1 to 255 characters')
  return found
}

/** Check `body` against the action's schema (api.md's messages), then run its handler with the typed body. */
export function runAction(found: Action, deps: Deps, user: User, body: Record<string, unknown>) {
  const typed = parseAction(found.schema, body)
  // claim tokens, claims ended by done work, and _meta.unblocked (src/work) wrap the node writes
  return aroundWrite(deps, user, String(body.action), typed as Record<string, any>, () => found.handler(deps, user, typed))
}

/** Work that follows a committed write and must stay outside its transaction. */
export async function afterCommit(deps: Deps, request: Record<string, any>, body: Record<string, any>): Promise<Record<string, any>> {
  if (request.action === 'add' && typeof request.projectId === 'string') return afterAdd(deps, request.projectId, body)
  return body
}
