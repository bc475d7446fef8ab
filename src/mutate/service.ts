import { type Static, type TSchema, Type } from '@sinclair/typebox'
import type { User } from '../accounts/model'
import { claimAgent } from '../claims/service'
import type { Deps } from '../deps'
import { ErrorListError } from '../errors'
import { agentName, requestAuthor } from '../history/author'
import { checkInput, IdempotencyKey, parseAction, parseInput, ruled } from '../http/action-schema'
import { addIterationAction, reorderIterationsAction } from '../iterations/service'
import { type NodeType, parseNodeId } from '../nodes/model'
import { add, classify, remove, restore, update } from '../nodes/service'
import { ACTION_NAMES, type ActionName } from '../ports/actions'
import type { Author } from '../ports/actor'
import { dataSchema } from '../ports/node-data'
import type { Access } from '../projects/access'
import { addProject, renameProject } from '../projects/service'
import { claim, releaseClaim, renewClaim, workPlan } from '../work/service'
import { checkBatchCost } from './cost-limit'
import { closestName } from './hints'
import { deleteIteration, updateIteration } from './iterations'
import { ACTION_BODIES as bodies } from './model'
import { applyProposal, propose, rejectProposal, withdrawProposal } from './proposals'
import { revert } from './revert'
import { accessWrite, batchRow, nodeWrite, type Row, row, runRow, type Written } from './sequence'

/*
 * POST /mutate's table of actions (`actions`: each row's schema, work plan, handler and what the
 * edge does around it) and the run of one action inside the write's transaction (`runAction`),
 * which hands the row to the sequence of every write (./sequence.ts `runRow`). The edge around
 * it, from the request to the answer shown, is ./routes.ts.
 */

/**
 * An action: the row the sequence runs (./sequence.ts `Row`: the schema of its body,
 * ACTION_BODIES in src/mutate/model.ts, its work plan and its handler, run in that order by
 * `runRow`), what POST /mutate does around that run for this action, and where the docs list it
 * (each false or absent by default).
 */
export interface Action extends Row {
  /**
   * The node data the body carries (an add's `node.data`, an update's `data`, a batch's or a
   * proposal's entries'), checked against its node type's schema once `schema` has typed the
   * body, the type being in the body (`addData`, `updateData`, `entriesData`, below `checkedBody`).
   * Run by `checkedBody`, with the body's check; absent for a body that carries none.
   */
  nodeData?(body: Record<string, unknown>): void
  /** Where the body names the write's agent or claim (history.md, 1); `byClaimToken` when absent. */
  author?: AuthorRule
  /** The action ignores Idempotency-Key (docs/reference/mutate.md): every request runs. */
  notIdempotent?: true
  /** The answer holds a secret (claim tokens): stored sealed (http/seal.ts), never readable at rest. */
  secretAnswer?: true
  /**
   * The answer's `changeIds` are its result (a revert's): in its answer once it saved, even when
   * none (`runAction`), and shown whatever `Prefer` says.
   */
  changeIdsAreResult?: true
  /**
   * Its `mutations` are weighed against PGlite's write budget before it runs (src/mutate/cost-limit.ts:
   * 413 over it); the word is what the refusal calls the request.
   */
  costLimited?: 'batch' | 'proposal'
  /**
   * After the commit, outside the transaction, a fresh 200 answer (never a replay) gains
   * search's near-duplicate advisory (src/mutate/routes.ts `withNearDuplicate`).
   */
  nearDuplicate?: true
  /**
   * Left out of docs/reference/mutate.md's list of actions, which the answer to an unknown action
   * repeats: `claim`, an agent's action of docs/agents.md, named in that answer's tip instead;
   * `later`, described by the guide alone (revert, live.md §5's proposal actions).
   */
  unlisted?: 'claim' | 'later'
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
/** An `accessWrite` that writes no node: nothing of the work state before or after it, its answer its handler's. */
const action = <S extends TSchema>(
  schema: S,
  handler: (deps: Deps, access: Access, body: Static<S>, user: User) => Promise<Written>,
): Row => accessWrite(schema, workPlan.none, handler)

/**
 * Every write of the API goes through POST /mutate and one of these actions: the name a body
 * sends → its schema (ACTION_BODIES, src/mutate/model.ts), its work plan and its handler (the
 * arguments of ./sequence.ts's row builders, `nodeWrite`, `accessWrite` and `row`, in the order
 * `runRow` uses them). A client's name is looked up only when it is one of ACTION_NAMES (src/ports/actions.ts `isActionName`; `actionNamed`,
 * src/mutate/routes.ts), so `constructor` or `__proto__` finds nothing. Keyed by ActionName: a
 * missing or misspelt row fails `tsc`.
 */
export const actions: { readonly [A in ActionName]: Action } = {
  add: { ...nodeWrite(bodies.add, workPlan.add, add), nodeData: addData, nearDuplicate: true },
  update: { ...nodeWrite(bodies.update, workPlan.update, update), nodeData: updateData },
  delete: nodeWrite(bodies.delete, workPlan.delete, remove),
  restore: nodeWrite(bodies.restore, workPlan.lockOnly, restore),
  // the row ./sequence.ts `runBatch` runs for a batch inside another write too
  batch: { ...batchRow, nodeData: entriesData, author: byEntryClaimTokens, costLimited: 'batch' },
  classify: nodeWrite(bodies.classify, workPlan.lockOnly, classify),
  addIteration: action(bodies.addIteration, addIterationAction),
  updateIteration: accessWrite(bodies.updateIteration, workPlan.lockOnly, updateIteration),
  deleteIteration: accessWrite(bodies.deleteIteration, workPlan.lockOnly, deleteIteration),
  reorderIterations: action(bodies.reorderIterations, reorderIterationsAction),
  // names no project yet: the edge asked no access, its handler takes the caller
  addProject: { ...row(bodies.addProject, workPlan.none, addProject), notIdempotent: true },
  renameProject: action(bodies.renameProject, renameProject),
  // the actions of docs/agents.md
  claim: { ...action(bodies.claim, claim), author: byClaimAgent, secretAnswer: true, unlisted: 'claim' },
  renewClaim: { ...action(bodies.renewClaim, renewClaim), secretAnswer: true, unlisted: 'claim' },
  releaseClaim: { ...action(bodies.releaseClaim, releaseClaim), unlisted: 'claim' },
  revert: { ...nodeWrite(bodies.revert, workPlan.revert, revert), changeIdsAreResult: true, unlisted: 'later' },
  // the proposal actions of live.md §5
  propose: { ...action(bodies.propose, propose), nodeData: entriesData, costLimited: 'proposal', unlisted: 'later' },
  applyProposal: { ...action(bodies.applyProposal, applyProposal), unlisted: 'later' },
  rejectProposal: { ...action(bodies.rejectProposal, rejectProposal), unlisted: 'later' },
  withdrawProposal: { ...action(bodies.withdrawProposal, withdrawProposal), unlisted: 'later' },
}

/** docs/reference/mutate.md's actions, and the claim actions the tip names beside them, in ACTION_NAMES's order. */
const LISTED_ACTIONS = ACTION_NAMES.filter((name) => !actions[name].unlisted)
const CLAIM_ACTIONS = ACTION_NAMES.filter((name) => actions[name].unlisted === 'claim')

function didYouMean(name: string): string {
  const close = closestName(name, ACTION_NAMES)
  return close ? `Did you mean \`${close}\`? ` : ''
}

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
              message: `action must be one of: ${LISTED_ACTIONS.join(', ')}`,
              tip: `${didYouMean(name)}Send {action, projectId, ...}; the guide lists the body of every action. Agents also have ${CLAIM_ACTIONS.join(', ')}.`,
            },
    ),
    idempotencyKey: IdempotencyKey,
  },
  { additionalProperties: true },
)

/**
 * The one check of a POST /mutate body (docs/validation.md), at one point, inside the write's
 * idempotent run so that a refusal is stored and replayed like an answer, and after the edge's
 * access check (403 before any 400): the envelope (a JSON object naming one of the actions, its
 * `idempotencyKey`), then the rest as its row checks it (`checkedBody`), each with
 * docs/reference/mutate.md's messages. Returns the action's row and the body without its
 * `idempotencyKey`, typed by the row's schema, its node data checked.
 */
export function checkedAction(body: unknown): { found: Action; request: Record<string, unknown> } {
  const { idempotencyKey: _, ...request } = checkInput('body', Envelope, body) as Record<string, unknown>
  const found = actions[request.action as ActionName]
  return { found, request: checkedBody(found, request) }
}

/**
 * A body of the action of `found`, checked: against the action's schema (ACTION_BODIES,
 * src/mutate/model.ts), then the node data it carries against its type's schema (`nodeData`).
 * `checkedAction`'s, and that of a batch another route writes through the row (an import's
 * chunks, src/mutate/import-okf.ts; a workflow's plan, src/workflow/apply.ts).
 */
export function checkedBody(found: Action, body: unknown): Record<string, unknown> {
  const request = parseAction(found.schema, body) as Record<string, unknown>
  found.nodeData?.(request)
  return request
}

/**
 * The type an update's `data` is checked as: the one its id names (ids are typed, `<type>-<n>`,
 * src/nodes/model.ts `parseNodeId`) or, inside a batch, the type of the earlier add whose draft- id it
 * names (`drafts`). Undefined when it names neither: no node has that id, and the update's rules
 * refuse it (`Node with id … not found`).
 */
function typeNamed(nodeId: string, drafts?: ReadonlyMap<string, NodeType>): NodeType | undefined {
  return parseNodeId(nodeId)?.type ?? drafts?.get(nodeId)
}

/** An update's `data` (an object or null, as its schema let it by) against the schema of the node's type; nothing sent, nothing to check. */
function checkUpdateData(type: NodeType | undefined, data: unknown): void {
  if (type && data !== null && data !== undefined) parseInput(dataSchema.update[type], data)
}

/**
 * An add's `node.data` against its type's schema (dataSchema.add), in the order the client sent
 * its fields: its label, each field valid on the type (so `kind` on a goal reads as a field on
 * the wrong type), each value one the field allows, the arrays within their limits.
 */
function addData(body: { node: { type: NodeType; data: unknown } }): void {
  parseInput(dataSchema.add[body.node.type], body.node.data)
}

/** An update's `data` against the schema of the type its `nodeId` names (dataSchema.update). */
function updateData(body: { nodeId: string; data?: unknown }): void {
  checkUpdateData(typeNamed(body.nodeId), body.data)
}

/** A batch's entry as `entriesData` reads it (./model.ts `BatchEntry`, once checked). */
type DataEntry =
  | { action: 'add'; node: { type: NodeType; id?: string; data: unknown } }
  | { action: 'update'; nodeId: string; data?: unknown }
  | { action: 'delete' | 'addIteration' }

/**
 * The data of a batch's entries (a proposal's too), in their order, each as the single action's
 * (`addData`, `updateData`); an update of a draft- id as the type of the add before it that sent
 * that id (the first, when two did: the batch's rules refuse the second). A refused entry's
 * messages are prefixed with its index, `mutations[i]: `, as the batch's own rules prefix theirs
 * (./batch.ts).
 */
function entriesData(body: { mutations: readonly DataEntry[] }): void {
  const drafts = new Map<string, NodeType>()
  body.mutations.forEach((e, i) => {
    try {
      if (e.action === 'add') {
        addData(e)
        const sent = e.node.id
        if (sent?.startsWith('draft-') && !drafts.has(sent)) drafts.set(sent, e.node.type)
      } else if (e.action === 'update') checkUpdateData(typeNamed(e.nodeId, drafts), e.data)
    } catch (err) {
      if (err instanceof ErrorListError)
        throw new ErrorListError(
          err.errors.map((m) => `mutations[${i}]: ${m}`),
          err.meta,
        )
      throw err
    }
  })
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
 * The one run of an action, inside its idempotent transaction (src/http/idempotency.ts): its body
 * checked (`checkedAction`), its author (`authorOfRequest`, the row's `author` rule), on PGlite a
 * `costLimited` row's entries weighed, then the sequence of every write (./sequence.ts `runRow`), whose answer
 * names the changes it saved (`changeIds`, history.md 2), so that the caller can take its own
 * write back with `revert` (the app's Ctrl+Z). Kept in the stored answer, so a replay has them
 * too; shown only to a caller that asks (`Prefer: change-ids`, src/mutate/routes.ts `shown`), so
 * every answer of docs/reference/mutate.md stays as it was. A revert's are its result
 * (`changeIdsAreResult`): in its answer whenever it saved, even none.
 */
export async function runAction(deps: Deps, user: User, headers: Record<string, string | undefined>, body: unknown, access?: Access) {
  const { found, request } = checkedAction(body)
  const author = await authorOfRequest(deps, user, headers, request, found.author)
  // on PGlite, 413 before anything is written (issue 50, item 3)
  if (found.costLimited) checkBatchCost(deps, request, found.costLimited)
  const { answer, changeIds } = await runRow({ ...deps, author }, found, { user, access }, request)
  if (changeIds === undefined || 'changeIds' in answer || (changeIds.length === 0 && !found.changeIdsAreResult)) return answer
  const { _meta, ...rest } = answer
  return { ...rest, changeIds: [...changeIds].sort((a, b) => a - b).map(String), ...(_meta === undefined ? {} : { _meta }) }
}
