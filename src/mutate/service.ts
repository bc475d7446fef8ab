import { type Static, type TSchema, Type } from '@sinclair/typebox'
import type { User } from '../accounts/model'
import { ACTION_NEEDS } from '../accounts/roles'
import { requireNeed, requireScopeProject, roleRefusal, unrestricted } from '../accounts/scope'
import { claimAgent, claimHeldByKey } from '../claims/service'
import type { Deps } from '../deps'
import { invalid } from '../errors'
import { agentName, requestAuthor } from '../history/author'
import { checkInput, IdempotencyKey, parseAction, ruled } from '../http/action-schema'
import { isJsonType, notReadAsJson } from '../http/json-body'
import { addIterationAction, reorderIterationsAction } from '../iterations/service'
import type { Node } from '../nodes/model'
import { add, classify, remove, restore, update } from '../nodes/service'
import type { Author } from '../ports/actor'
import { addProject, renameProject } from '../projects/service'
import { possibleDuplicate } from '../search/service'
import { claim, releaseClaim, renewClaim, type WorkPlan, workPlan } from '../work/service'
import { batch, batchAnswer } from './batch'
import { closestName } from './hints'
import { deleteIteration, updateIteration } from './iterations'
import { type ActionName, ACTION_BODIES as bodies } from './model'
import { applyProposal, propose, rejectProposal, withdrawProposal } from './proposals'
import { revert, revertAnswer } from './revert'
import { type Answer, runWrite, type Written } from './sequence'

/**
 * An action: the schema of its body (ACTION_BODIES, src/mutate/model.ts), the run of its handler,
 * and what POST /mutate does around that run for this action (each false or absent by default).
 */
export interface Action {
  schema: TSchema
  /** Check `body` against `schema` (docs/reference/mutate.md's messages, thrown), then run the handler with the body typed. */
  run(deps: Deps, user: User, body: Record<string, unknown>): Promise<Record<string, unknown>>
  /** Where the body names the write's agent or claim (history.md, 1); `byClaimToken` when absent. */
  author?: AuthorRule
  /** The action ignores Idempotency-Key (docs/reference/mutate.md): every request runs. */
  notIdempotent?: true
  /** The answer holds a secret (claim tokens): stored sealed (http/seal.ts), never readable at rest. */
  secretAnswer?: true
  /** The answer's `changeIds` are its result (a revert's), shown whatever `Prefer` says. */
  changeIdsAreResult?: true
  /**
   * Its `mutations` are weighed against PGlite's write budget before it runs (src/mutate/cost-limit.ts:
   * 413 over it); the word is what the refusal calls the request.
   */
  costLimited?: 'batch' | 'proposal'
  /** Work after the commit, outside the transaction, on a fresh 200 answer (never a replay). */
  afterCommit?: (deps: Deps, request: ActionRequest, answer: Record<string, unknown>) => Promise<Record<string, unknown>>
}

/** What a body says of its author before it is checked: an agent it names, the claim tokens it carries. */
export type AuthorRule = (request: Record<string, unknown>) => { agent?: unknown; claimTokens: unknown[] }
/** The author rule of most actions: the body's own claimToken. */
const byClaimToken: AuthorRule = (request) => ({ claimTokens: [request.claimToken] })
/** A claim names its agent (`agent`). */
const byClaimAgent: AuthorRule = (request) => ({ agent: request.agent, claimTokens: [request.claimToken] })
/** A batch: the claim token of its first entry that carries one. */
const byEntryClaimTokens: AuthorRule = (request) => ({
  claimTokens: Array.isArray(request.mutations) ? request.mutations.map((e) => (e as { claimToken?: unknown } | null)?.claimToken) : [],
})
/** The project a checked body names ('' for addProject's, which names a new one: its plan reads none). */
const projectOf = (body: { projectId?: unknown }) => (typeof body.projectId === 'string' ? body.projectId : '')

/**
 * An action's row: its body checked against its schema (docs/reference/mutate.md's messages),
 * then the sequence of every write (src/mutate/sequence.ts `runWrite`, steps 6 to 9 of
 * ARCHITECTURE.md's "How a write flows") with the action's parts: `work` reads from the checked
 * body what the write means to the work state (src/work `workPlan`); `handler` writes the
 * action's rows and notes its events and changes (in a WriteCtx for nodes, src/nodes/context.ts,
 * or in an outbox), saves nothing, and builds its answer where it wrote; `answer`, for a batch
 * and a revert, reads the answer from what was saved instead.
 */
const write = <S extends TSchema, W extends Written>(
  schema: S,
  work: (body: Static<S>) => WorkPlan,
  handler: (deps: Deps, user: User, body: Static<S>) => Promise<W>,
  answer?: (written: W) => Answer | Promise<Answer>,
): Action => ({
  schema,
  run: (deps, user, body) => {
    const typed = parseAction(schema, body) // the same object, now known to match the schema
    return runWrite(deps, user, projectOf(typed as { projectId?: unknown }), work(typed), () => handler(deps, user, typed), answer)
  },
})

/** An action that writes no node: nothing of the work state before or after it, its answer its handler's. */
const action = <S extends TSchema>(
  schema: S,
  handler: (deps: Deps, user: User, body: Static<S>) => Promise<Written & { answer: Answer }>,
): Action => write(schema, workPlan.none, handler)

/**
 * Every write of the API goes through POST /mutate and one of these actions: the name a body
 * sends → its schema (ACTION_BODIES, src/mutate/model.ts), its work plan, its handler and its
 * answer, in the order the sequence runs them (`write`). A client's name is
 * looked up with `Object.hasOwn` (`actionNamed`), so `constructor` or `__proto__` finds nothing.
 */
export const actions: { readonly [A in ActionName]: Action } = {
  add: { ...write(bodies.add, workPlan.add, add), afterCommit: afterAdd },
  update: write(bodies.update, workPlan.update, update),
  delete: write(bodies.delete, workPlan.delete, remove),
  restore: write(bodies.restore, workPlan.lockOnly, restore),
  batch: { ...write(bodies.batch, workPlan.batch, batch, batchAnswer), author: byEntryClaimTokens, costLimited: 'batch' },
  classify: write(bodies.classify, workPlan.none, classify),
  addIteration: action(bodies.addIteration, addIterationAction),
  updateIteration: write(bodies.updateIteration, workPlan.lockOnly, updateIteration),
  deleteIteration: write(bodies.deleteIteration, workPlan.lockOnly, deleteIteration),
  reorderIterations: action(bodies.reorderIterations, reorderIterationsAction),
  addProject: { ...action(bodies.addProject, addProject), notIdempotent: true },
  renameProject: action(bodies.renameProject, renameProject),
  claim: { ...action(bodies.claim, claim), author: byClaimAgent, secretAnswer: true },
  renewClaim: { ...action(bodies.renewClaim, renewClaim), secretAnswer: true },
  releaseClaim: action(bodies.releaseClaim, releaseClaim),
  revert: { ...write(bodies.revert, workPlan.revert, revert, revertAnswer), changeIdsAreResult: true },
  propose: { ...action(bodies.propose, propose), costLimited: 'proposal' },
  applyProposal: action(bodies.applyProposal, applyProposal),
  rejectProposal: action(bodies.rejectProposal, rejectProposal),
  withdrawProposal: action(bodies.withdrawProposal, withdrawProposal),
}

const ACTION_NAMES = Object.keys(actions)
/** The action a client names, or undefined (a name of Object.prototype is no action). */
const actionNamed = (name: string): Action | undefined => (Object.hasOwn(actions, name) ? actions[name as ActionName] : undefined)

/** The actions of docs/agents.md (claims), beside docs/reference/mutate.md's. */
const CLAIM_ACTIONS = new Set(['claim', 'renewClaim', 'releaseClaim'])
/** The proposal actions of live.md §5. */
const PROPOSAL_ACTIONS = ['propose', 'applyProposal', 'rejectProposal', 'withdrawProposal']
/** Actions beside docs/reference/mutate.md's, left out of its list of actions (the guide describes them). */
const LATER_ACTIONS = new Set([...CLAIM_ACTIONS, 'revert', ...PROPOSAL_ACTIONS])

/** A body `actionOf` accepted: a JSON object with a string `action` and, when sent, a valid `idempotencyKey`. */
export type ActionRequest = Record<string, unknown> & { action: string; idempotencyKey?: string }

/**
 * The envelope every POST /mutate body shares, with docs/reference/mutate.md's messages: a JSON object naming
 * one of the actions, with a valid `idempotencyKey` when sent; the rest is the action's own schema.
 */
const Envelope = Type.Object(
  {
    action: ruled(Type.Union(ACTION_NAMES.map((name) => Type.Literal(name))), (name) =>
      name === undefined
        ? 'action is required'
        : typeof name !== 'string'
          ? 'action: Expected string'
          : // the message lists docs/reference/mutate.md's actions as it always has; the claim actions (docs/agents.md) are named in the tip
            {
              message: `action must be one of: ${ACTION_NAMES.filter((a) => !LATER_ACTIONS.has(a)).join(', ')}`,
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
  return { found: actionNamed(request.action)!, request }
}

function didYouMean(name: string): string {
  const close = closestName(name, ACTION_NAMES)
  return close ? `Did you mean \`${close}\`? ` : ''
}

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

/**
 * Who makes this write (history.md, 1): the agent the body names (a claim's `agent`), else the
 * claim's agent of the first claim token it carries (`rule`: the action's row), else X-Agent-Id;
 * `via` from X-Arbor-Via.
 */
export async function authorOfRequest(
  deps: Deps,
  user: User,
  headers: Record<string, string | undefined>,
  request: Record<string, unknown>,
  rule: AuthorRule = byClaimToken,
): Promise<Author> {
  const { agent: named, claimTokens } = rule(request)
  let agent: string | null = agentName(named) ?? null
  if (!agent && typeof request.projectId === 'string') {
    const token = claimTokens.find((t) => typeof t === 'string' && t.length <= 200)
    if (typeof token === 'string') agent = await claimAgent(deps.db, request.projectId, token)
  }
  return requestAuthor(user, headers, { agent })
}

/**
 * After an `add` has committed: the near-duplicate advisory of search, added to its `_meta`.
 * Never inside the write's transaction (an embedding there would hold every other writer on
 * PGlite); advisory only, so a replayed answer carries what the first one stored.
 */
async function afterAdd(deps: Deps, request: ActionRequest, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  // the answer of a fresh `add` (src/nodes/service.ts): its node and its _meta
  const added = body as { success?: unknown; node?: Node; _meta?: Record<string, unknown> }
  const projectId = request.projectId
  if (added.success !== true || !added.node || typeof projectId !== 'string') return body
  const duplicate = await possibleDuplicate(deps, projectId, added.node)
  if (!duplicate) return body
  const meta: Record<string, unknown> = { ...(added._meta ?? {}) }
  if (!meta.advisory) meta.advisory = duplicate
  else meta.advisories = [...((meta.advisories as unknown[] | undefined) ?? [meta.advisory]), duplicate]
  return { ...body, _meta: meta }
}
