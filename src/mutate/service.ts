import { type Static, type TSchema, Type } from '@sinclair/typebox'
import type { User } from '../accounts/model'
import { claimAgent } from '../claims/service'
import type { Deps } from '../deps'
import { invalid } from '../errors'
import { agentName, requestAuthor } from '../history/author'
import { checkInput, IdempotencyKey, parseAction, ruled } from '../http/action-schema'
import { isJsonType, notReadAsJson } from '../http/json-body'
import {
  addIterationAction,
  deleteIterationAction,
  type MoveNodes,
  reorderIterationsAction,
  updateIterationAction,
} from '../iterations/service'
import type { Node } from '../nodes/model'
import { add, classify, moveIterationNodes, remove, restore, update } from '../nodes/service'
import type { Author } from '../ports/actor'
import { addProject, renameProject } from '../projects/service'
import { possibleDuplicate } from '../search/service'
import { aroundWrite, claim, releaseClaim, renewClaim } from '../work/service'
import { batch } from './batch'
import { closestName } from './hints'
import { ACTION_BODIES as bodies } from './model'
import { applyProposal, propose, rejectProposal, withdrawProposal } from './proposals'
import { revert } from './revert'

export type ActionHandler<B> = (deps: Deps, user: User, body: B) => Promise<Record<string, unknown>>

/** An action: the schema of its body (ACTION_BODIES, src/mutate/model.ts) and the run of its handler. */
export interface Action {
  schema: TSchema
  /** Check `body` against `schema` (docs/reference/mutate.md's messages, thrown), then run the handler with the body typed. */
  run(deps: Deps, user: User, body: Record<string, unknown>): Promise<Record<string, unknown>>
}
/** The jobs and tasks an iteration's rename or deletion moves, as nodes (iterations does not import nodes). */
const moveNodes: MoveNodes = moveIterationNodes

const action = <S extends TSchema>(schema: S, handler: ActionHandler<Static<S>>): Action => ({
  schema,
  run: (deps, user, body) => {
    const typed = parseAction(schema, body) // the same object, now known to match the schema
    // claim tokens, claims ended by done work, and _meta.unblocked (src/work) wrap the node writes
    return aroundWrite(deps, user, String(body.action), body, () => handler(deps, user, typed))
  },
})

/**
 * Every write of the API goes through POST /mutate and one of these actions. A Map, not an
 * object: the action name is the client's, and `constructor` or `__proto__` must find nothing.
 */
export const actions = new Map<string, Action>([
  ['add', action(bodies.add, add)],
  ['update', action(bodies.update, update)],
  ['delete', action(bodies.delete, remove)],
  ['restore', action(bodies.restore, restore)],
  ['batch', action(bodies.batch, batch)],
  ['classify', action(bodies.classify, classify)],
  ['addIteration', action(bodies.addIteration, addIterationAction)],
  ['updateIteration', action(bodies.updateIteration, (deps, user, body) => updateIterationAction(deps, user, body, moveNodes))],
  ['deleteIteration', action(bodies.deleteIteration, (deps, user, body) => deleteIterationAction(deps, user, body, moveNodes))],
  ['reorderIterations', action(bodies.reorderIterations, reorderIterationsAction)],
  ['addProject', action(bodies.addProject, addProject)],
  ['renameProject', action(bodies.renameProject, renameProject)],
  ['claim', action(bodies.claim, claim)],
  ['renewClaim', action(bodies.renewClaim, renewClaim)],
  ['releaseClaim', action(bodies.releaseClaim, releaseClaim)],
  ['revert', action(bodies.revert, revert)],
  ['propose', action(bodies.propose, propose)],
  ['applyProposal', action(bodies.applyProposal, applyProposal)],
  ['rejectProposal', action(bodies.rejectProposal, rejectProposal)],
  ['withdrawProposal', action(bodies.withdrawProposal, withdrawProposal)],
])

/** The actions of docs/agents.md (claims), beside docs/reference/mutate.md's. */
const CLAIM_ACTIONS = new Set(['claim', 'renewClaim', 'releaseClaim'])
/** The proposal actions of live.md §5. */
const PROPOSAL_ACTIONS = ['propose', 'applyProposal', 'rejectProposal', 'withdrawProposal']
/** Actions beside docs/reference/mutate.md's, left out of its list of actions (the guide describes them). */
const LATER_ACTIONS = new Set([...CLAIM_ACTIONS, 'revert', ...PROPOSAL_ACTIONS])

/** Actions that ignore Idempotency-Key (docs/reference/mutate.md). */
export const NOT_IDEMPOTENT = new Set(['addProject'])

/** A body `actionOf` accepted: a JSON object with a string `action` and, when sent, a valid `idempotencyKey`. */
export type ActionRequest = Record<string, unknown> & { action: string; idempotencyKey?: string }

/**
 * The envelope every POST /mutate body shares, with docs/reference/mutate.md's messages: a JSON object naming
 * one of the actions, with a valid `idempotencyKey` when sent; the rest is the action's own schema.
 */
const Envelope = Type.Object(
  {
    action: ruled(Type.Union([...actions.keys()].map((name) => Type.Literal(name))), (name) =>
      name === undefined
        ? 'action is required'
        : typeof name !== 'string'
          ? 'action: Expected string'
          : // the message lists docs/reference/mutate.md's actions as it always has; the claim actions (docs/agents.md) are named in the tip
            {
              message: `action must be one of: ${[...actions.keys()].filter((a) => !LATER_ACTIONS.has(a)).join(', ')}`,
              tip: `${didYouMean(name)}Send {action, projectId, ...}; the guide lists the body of every action. Agents also have ${[...CLAIM_ACTIONS].join(', ')}.`,
            },
    ),
    idempotencyKey: IdempotencyKey,
  },
  { additionalProperties: true },
)

/** The action a body names (its envelope checked by checkInput), or the 400 of docs/reference/mutate.md. */
export function actionOf(body: unknown, contentType?: string): { found: Action; request: ActionRequest } {
  // a body sent as a form or text is not ours to guess at: say how it was read
  if (contentType === undefined ? typeof body === 'string' && body !== '' : !isJsonType(contentType))
    throw invalid(notReadAsJson(contentType))
  const request = checkInput('body', Envelope, body) as ActionRequest
  return { found: actions.get(request.action)!, request }
}

function didYouMean(name: string): string {
  const close = closestName(name, actions.keys())
  return close ? `Did you mean \`${close}\`? ` : ''
}

/** Check `body` against the action's schema (docs/reference/mutate.md's messages), then run its handler with the typed body. */
export function runAction(found: Action, deps: Deps, user: User, body: Record<string, unknown>) {
  return found.run(deps, user, body)
}

/**
 * Who makes this write (history.md, 1): the claim's `agent` when the action claims or carries a
 * claim token (the first one of a batch), else X-Agent-Id; `via` from X-Arbor-Via.
 */
export async function authorOfRequest(
  deps: Deps,
  user: User,
  headers: Record<string, string | undefined>,
  request: ActionRequest,
): Promise<Author> {
  let agent: string | null = request.action === 'claim' ? (agentName(request.agent) ?? null) : null
  if (!agent && typeof request.projectId === 'string') {
    const entries = request.action === 'batch' && Array.isArray(request.mutations) ? request.mutations : [request]
    const token = entries.map((e) => (e as { claimToken?: unknown })?.claimToken).find((t) => typeof t === 'string' && t.length <= 200)
    if (typeof token === 'string') agent = await claimAgent(deps.db, request.projectId, token)
  }
  return requestAuthor(user, headers, { agent })
}

/** Work that follows a committed write and must stay outside its transaction. */
export async function afterCommit(
  deps: Deps,
  request: Record<string, unknown>,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  if (request.action === 'add' && typeof request.projectId === 'string') return afterAdd(deps, request.projectId, body)
  return body
}

/**
 * After an `add` has committed: the near-duplicate advisory of search, added to its `_meta`.
 * Never inside the write's transaction (an embedding there would hold every other writer on
 * PGlite); advisory only, so a replayed answer carries what the first one stored.
 */
export async function afterAdd(deps: Deps, projectId: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  // the answer of a fresh `add` (src/nodes/service.ts): its node and its _meta
  const added = body as { success?: unknown; node?: Node; _meta?: Record<string, unknown> }
  if (added.success !== true || !added.node) return body
  const duplicate = await possibleDuplicate(deps, projectId, added.node)
  if (!duplicate) return body
  const meta: Record<string, unknown> = { ...(added._meta ?? {}) }
  if (!meta.advisory) meta.advisory = duplicate
  else meta.advisories = [...((meta.advisories as unknown[] | undefined) ?? [meta.advisory]), duplicate]
  return { ...body, _meta: meta }
}
