import { type TSchema, Type } from '@sinclair/typebox'
import { prefixed } from '../errors'
import { checkInput, IdempotencyKey, parseAction, parseInput, ruled } from '../http/action-schema'
import { type NodeType, parseNodeId } from '../nodes/model'
import { ACTION_NAMES, type ActionName } from '../ports/actions'
import { dataSchema } from '../ports/node-data'
import { closestName } from './hints'
import { BatchBody, type BatchEntry } from './model'

/*
 * The one check of a write's body (docs/validation.md), step 2 of the write's sequence
 * (./sequence.ts `runWrite`): the envelope every POST /mutate body shares (`checkedAction`), then
 * the body as its action's row checks it (`checkedBody`: the action's schema, then the node data
 * it carries, `addData`, `updateData`, `entriesData`, the rows' `nodeData`, ./service.ts `actions`). A
 * batch's entries' data by an exhaustive `switch` on their action: a new kind fails tsc here.
 */

/**
 * The actions docs/reference/mutate.md leaves out of its list, which the answer to an unknown
 * action repeats: `claim`, an agent's action of docs/agents.md, named in that answer's tip
 * instead; `later`, described by the guide alone (revert, live.md §5's proposal actions).
 */
const UNLISTED: { readonly [A in ActionName]?: 'claim' | 'later' } = {
  claim: 'claim',
  renewClaim: 'claim',
  releaseClaim: 'claim',
  revert: 'later',
  propose: 'later',
  applyProposal: 'later',
  rejectProposal: 'later',
  withdrawProposal: 'later',
}

/** docs/reference/mutate.md's actions, and the claim actions the tip names beside them, in ACTION_NAMES's order. */
const LISTED_ACTIONS = ACTION_NAMES.filter((name) => !UNLISTED[name])
const CLAIM_ACTIONS = ACTION_NAMES.filter((name) => UNLISTED[name] === 'claim')

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

/** What the check reads of an action's row (./sequence.ts `Row`): its body's schema, and the node data that body carries. */
export interface CheckedRow {
  schema: TSchema
  nodeData?: (body: Record<string, unknown>) => void
}

/**
 * The one check of a POST /mutate body, at one point: inside the write's idempotent run, so that a
 * refusal is stored and replayed like an answer, and after the edge's access check (403 before
 * any 400). The envelope (a JSON object naming one of the actions, its `idempotencyKey`), then the
 * rest as its row checks it (`checkedBody`), each with docs/reference/mutate.md's messages.
 * `found` is the row of the action the body names, as the edge found it before the check
 * (src/mutate/routes.ts `actionNamed`): none when it names no action, which the envelope refuses.
 * Returns that row and the body without its `idempotencyKey`, typed by the row's schema, its node
 * data checked.
 */
export function checkedAction<R extends CheckedRow>(found: R | undefined, body: unknown): { row: R; request: Record<string, unknown> } {
  const { idempotencyKey: _, ...request } = checkInput('body', Envelope, body) as Record<string, unknown>
  // the envelope let by only a JSON object naming one of ACTION_NAMES: the edge found its row
  const row = found!
  return { row, request: checkedBody(row, request) }
}

/**
 * A body of the action of `found`, checked: against the action's schema (ACTION_BODIES,
 * src/mutate/model.ts), then the node data it carries against its type's schema (`nodeData`).
 * `checkedAction`'s, and an import's project's (src/mutate/import-okf.ts); a batch another route
 * runs is checked by `checkedBatch`, below.
 */
export function checkedBody(found: CheckedRow, body: unknown): Record<string, unknown> {
  const request = parseAction(found.schema, body) as Record<string, unknown>
  found.nodeData?.(request)
  return request
}

/**
 * A batch's body checked as POST /mutate's batch checks it (./sequence.ts `batchRow`: its schema,
 * then its entries' node data, `entriesData`), typed: the body of a batch another route runs
 * through the sequence (`runBatch`: an import's chunks, src/mutate/import-okf.ts; a workflow's
 * plan, src/workflow/apply.ts).
 */
export function checkedBatch(body: { action: 'batch'; projectId: string; mutations: unknown[] }): BatchBody {
  const request = parseAction(BatchBody, body)
  entriesData(request)
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
export function addData(body: { node: { type: NodeType; data: unknown } }): void {
  parseInput(dataSchema.add[body.node.type], body.node.data)
}

/** An update's `data` against the schema of the type its `nodeId` names (dataSchema.update). */
export function updateData(body: { nodeId: string; data?: unknown }): void {
  checkUpdateData(typeNamed(body.nodeId), body.data)
}

/**
 * The data of a batch's entries (a proposal's too), in their order, each as the single action's
 * (`addData`, `updateData`); an update of a draft- id as the type of the add before it that sent
 * that id (the first, when two did: the batch's rules refuse the second). A refused entry's
 * messages are prefixed with its index, `mutations[i]: `, as the batch's own rules prefix theirs
 * (src/nodes/batch.ts).
 */
export function entriesData(body: { mutations: readonly BatchEntry[] }): void {
  const drafts = new Map<string, NodeType>()
  body.mutations.forEach((e, i) => {
    try {
      switch (e.action) {
        case 'add': {
          addData(e)
          const sent = e.node.id
          if (sent?.startsWith('draft-') && !drafts.has(sent)) drafts.set(sent, e.node.type)
          break
        }
        case 'update':
          checkUpdateData(typeNamed(e.nodeId, drafts), e.data)
          break
        case 'delete':
        case 'addIteration':
          break // no node data
        default:
          e satisfies never // an entry of a new action fails tsc here until it says what node data it carries
      }
    } catch (err) {
      throw prefixed(`mutations[${i}]`, err)
    }
  })
}
