import type { Static, TSchema } from '@sinclair/typebox'
import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { addIterationAction, reorderIterationsAction } from '../iterations/service'
import { add, classify, remove, restore, update } from '../nodes/service'
import type { ActionName } from '../ports/actions'
import type { Access } from '../projects/access'
import { addProject, renameProject } from '../projects/service'
import type { ClaimBody } from '../work/model'
import { claim, releaseClaim, renewClaim, workPlan } from '../work/service'
import { addData, entriesData, updateData } from './check'
import { weighEntries } from './cost-limit'
import { deleteIteration, updateIteration } from './iterations'
import { ACTION_BODIES as bodies } from './model'
import { applyProposal, propose, rejectProposal, withdrawProposal } from './proposals'
import { revert } from './revert'
import { selectChanges } from './revert-select'
import {
  type AuthorRule,
  accessWrite,
  batchRow,
  nodeWrite,
  preparedNodeWrite,
  type Row,
  type RowOptions,
  row,
  type Written,
} from './sequence'

/*
 * POST /mutate's table of actions (`actions`): each row's schema, node data, author rule,
 * `prepare` (what its handler takes, with its cost), work plan and handler, which the sequence of
 * every write runs in that order (./sequence.ts `runWrite`), and what the edge does around it
 * (./routes.ts).
 */

/**
 * An action: the row the sequence runs (./sequence.ts `Row`: the schema of its body,
 * ACTION_BODIES in src/mutate/model.ts, the node data it carries, its author rule, its
 * `prepare`, its work plan and its handler, run in that order by `runWrite`), and what POST /mutate's edge does
 * around that run for this action (each false or absent by default).
 */
export interface Action extends Row {
  /** The action ignores Idempotency-Key (docs/reference/mutate.md): every request runs. */
  notIdempotent?: true
  /** The answer holds a secret (claim tokens): stored sealed (http/seal.ts), never readable at rest. */
  secretAnswer?: true
  /**
   * After the commit, outside the transaction, a fresh 200 answer (never a replay) gains
   * search's near-duplicate advisory (src/mutate/routes.ts `mutate`, with `possibleDuplicate` of src/search/service.ts).
   */
  nearDuplicate?: true
}

/** A claim names its agent (`agent`, which its schema requires: the author whatever else it sends). */
const byClaimAgent: AuthorRule<ClaimBody> = (body) => ({ agent: body.agent, claimTokens: [] })
/** An `accessWrite` that writes no node: nothing of the work state before or after it, its answer its handler's. */
const action = <S extends TSchema>(
  schema: S,
  handler: (deps: Deps, access: Access, body: Static<S>, user: User) => Promise<Written>,
  options?: RowOptions<Static<S>>,
): Row => accessWrite(schema, workPlan.none, handler, options)

/**
 * Every write of the API goes through POST /mutate and one of these actions: the name a body
 * sends → its schema (ACTION_BODIES, src/mutate/model.ts), its work plan and its handler (the
 * arguments of ./sequence.ts's row builders, `nodeWrite`, `accessWrite`, `row` and
 * `preparedNodeWrite`), with what else of the row the action has (`nodeData`, `author`, `prepare`:
 * the builder's options, typed by the same schema, so a part written for another action's body
 * fails `tsc`; the batch's, ./sequence.ts `batchRow`). A client's name is looked up only when it is one of ACTION_NAMES (src/ports/actions.ts `isActionName`; `actionNamed`,
 * src/mutate/routes.ts), so `constructor` or `__proto__` finds nothing. Keyed by ActionName: a
 * missing or misspelt row fails `tsc`.
 */
export const actions: { readonly [A in ActionName]: Action } = {
  add: { ...nodeWrite(bodies.add, workPlan.add, add, { nodeData: addData }), nearDuplicate: true },
  update: nodeWrite(bodies.update, workPlan.update, update, { nodeData: updateData }),
  delete: nodeWrite(bodies.delete, workPlan.delete, remove),
  restore: nodeWrite(bodies.restore, workPlan.lockOnly, restore),
  // the row ./sequence.ts `runBatch` runs for a batch inside another write too
  batch: batchRow,
  classify: nodeWrite(bodies.classify, workPlan.lockOnly, classify),
  addIteration: action(bodies.addIteration, addIterationAction),
  updateIteration: accessWrite(bodies.updateIteration, workPlan.lockOnly, updateIteration),
  deleteIteration: accessWrite(bodies.deleteIteration, workPlan.lockOnly, deleteIteration),
  reorderIterations: action(bodies.reorderIterations, reorderIterationsAction),
  // names no project yet: the edge asked no access, its handler takes the caller
  addProject: { ...row(bodies.addProject, workPlan.none, addProject), notIdempotent: true },
  renameProject: action(bodies.renameProject, renameProject),
  // the actions of docs/agents.md
  claim: { ...action(bodies.claim, claim, { author: byClaimAgent }), secretAnswer: true },
  renewClaim: { ...action(bodies.renewClaim, renewClaim), secretAnswer: true },
  releaseClaim: action(bodies.releaseClaim, releaseClaim),
  // its changes selected, and weighed, before the work state: what its handler takes (./revert-select.ts `selectChanges`)
  revert: { ...preparedNodeWrite(bodies.revert, workPlan.revert, selectChanges, revert), changeIdsAreResult: true },
  // the proposal actions of live.md §5
  propose: action(bodies.propose, propose, { nodeData: entriesData, prepare: weighEntries('proposal') }),
  applyProposal: action(bodies.applyProposal, applyProposal),
  rejectProposal: action(bodies.rejectProposal, rejectProposal),
  withdrawProposal: action(bodies.withdrawProposal, withdrawProposal),
}
