/**
 * The input of the node writes (POST /mutate add, update, delete, restore, classify) as TypeBox
 * schemas, with docs/reference/resources.md's refusal messages (src/http/action-schema.ts). A node's `data` is
 * documented here as a deferred part, and checked with the rest of the body once the action's
 * schema has typed it (src/mutate/check.ts `checkedBody`), against its type's schema
 * (dataSchema, src/ports/node-data.ts): the type is in the body. What needs the database is
 * rules.ts's.
 */
import { type Static, Type } from '@sinclair/typebox'
import { action, deferred, discriminated, IntegerText, NodeId, ProjectId, refined, ruled } from '../http/action-schema'
import { typedParams } from '../http/typed-params'
import { CLAIM_TOKEN_MAX } from '../ports/claim-token'
import { dataSchema, NodeDataPatch as NodeFieldsPatch } from '../ports/node-data'
import { IfRev } from '../ports/rev'
import { NODE_TYPES, type NodeType } from './model'

/** The `data` of an update, documented for every type; checked by the node's type (dataSchema.update, src/mutate/check.ts `updateData`). */
export const NodeDataPatch = deferred(NodeFieldsPatch)

const NODE_TYPE_RULE = `node.type must be one of: ${NODE_TYPES.join(', ')}`
const parentIdFor = (type: NodeType) =>
  deferred(
    type === 'goal' || type === 'task'
      ? Type.Optional(Type.Null({ description: `${type === 'goal' ? 'a goal' : 'a task'} has no parent` }))
      : Type.String({ minLength: 1, description: `the id of the parent (${{ need: 'goal', approach: 'need', job: 'approach' }[type]})` }),
  )

/** `node` of an add: one variant per type, so each documents its parent and its fields. */
export const nodeFor = (inBatch: boolean) =>
  discriminated(
    ruled(
      Type.Union(
        NODE_TYPES.map((type) =>
          Type.Object({
            type: Type.Literal(type),
            ...(inBatch
              ? {
                  // a string here; which strings are ids is the node rules' to say
                  id: Type.Optional(
                    ruled(
                      deferred(Type.String({ description: 'a draft- id that later entries may use as parentId, or a real <type>-<n> id' })),
                      'node.id must be a string: a draft- id, or a <type>-<n> id',
                    ),
                  ),
                }
              : {}),
            parentId: parentIdFor(type),
            data: ruled(deferred(dataSchema.add[type]), 'node.data is required: an object with at least a label'),
          }),
        ),
      ),
      (node) =>
        node && typeof node === 'object' && !Array.isArray(node)
          ? NODE_TYPE_RULE
          : {
              message: 'node is required: {type, parentId?, data:{label, ...}}',
              tip: 'Send {action:"add", projectId, node:{type:"goal", data:{label:"…"}}}',
            },
    ),
    'type',
  )

// ---- the actions ----

/** A write's claim (docs/agents.md): refused with 409 claim_lost when the claim is no longer this token's. */
const ClaimToken = ruled(
  Type.String({
    minLength: 1,
    maxLength: CLAIM_TOKEN_MAX,
    description: 'the claimToken of your claim on this node: the write fails with 409 claim_lost once the claim is not yours',
  }),
  'claimToken must be the claimToken string of a claim',
)

/** live.md, 4: write a field another actor is editing (409 being_edited without it). */
const Force = ruled(
  Type.Boolean({
    description: 'true: write even a field another actor is editing now (an edit intent); without it such a write answers 409 being_edited',
  }),
  'force must be true or false',
)

export const AddBody = action('add', { projectId: ProjectId, node: nodeFor(false) }, 'Add one node.')
export const UpdateBody = action(
  'update',
  {
    projectId: ProjectId,
    nodeId: NodeId(),
    data: Type.Optional(ruled(Type.Union([NodeDataPatch, Type.Null()]), 'data must be an object of the fields to change')),
    parentId: Type.Optional(deferred(Type.Union([Type.String({ minLength: 1 }), Type.Null()], { description: 'reparent' }))),
    claimToken: Type.Optional(ClaimToken),
    ifRev: Type.Optional(IfRev),
    force: Type.Optional(Force),
  },
  'Change the sent fields of a node (PATCH), and/or reparent it; send data and/or parentId.',
)
export const DeleteBody = action(
  'delete',
  { projectId: ProjectId, nodeId: NodeId(), claimToken: Type.Optional(ClaimToken), ifRev: Type.Optional(IfRev) },
  'Delete a node and everything beneath it.',
)
const RESTORE_NEEDS = 'nodeId or changelogId is required'
/** restore: by nodeId or by changelogId (changelogId wins when both are sent); neither is refused here. */
export const RestoreBody = refined(
  ruled(
    action(
      'restore',
      {
        projectId: ProjectId,
        nodeId: Type.Optional(NodeId(RESTORE_NEEDS)),
        changelogId: Type.Optional(
          ruled(
            Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^[1-9][0-9]{0,14}$' })]),
            'changelogId must be a positive integer',
          ),
        ),
      },
      'Bring back a deleted node: its latest deletion by nodeId, or one changelog entry by changelogId.',
    ),
    RESTORE_NEEDS,
  ),
  (body) => body.nodeId !== undefined || body.changelogId !== undefined,
)

export const ClassifyBody = action(
  'classify',
  {
    projectId: ruled(Type.String({ minLength: 1 }), 'projectId is required: node ids are unique within a project, not across projects'),
    nodeId: NodeId(),
  },
  'Classify a task as memo or do-it now.',
)
export type AddBody = Static<typeof AddBody>
export type UpdateBody = Static<typeof UpdateBody>
export type DeleteBody = Static<typeof DeleteBody>
export type RestoreBody = Static<typeof RestoreBody>
/** GET /nodes' query values (strings) with docs/reference/reads.md's messages, checked after the access check (checkInput). */
export const NodesQuery = Type.Object(
  {
    projectId: Type.String(),
    type: Type.Optional(ruled(Type.Union(NODE_TYPES.map((n) => Type.Literal(n))), `type must be one of: ${NODE_TYPES.join(', ')}`)),
    iteration: Type.Optional(Type.String({ description: 'iteration name (jobs and tasks only)' })),
  },
  { additionalProperties: false },
)
/** GET /nodes parameters, typed, as OpenAPI and the MCP tool document them. */
export const NodesParams = typedParams(NodesQuery)

/** GET /changelog's query values (strings) with docs/reference/resources.md's messages, checked after the access check (checkInput). */
export const ChangelogQuery = Type.Object(
  {
    projectId: Type.String(),
    limit: Type.Optional(IntegerText(1, 1000, 'limit must be an integer from 1 to 1000', '1 to 1000, default 100')),
  },
  { additionalProperties: false },
)

/** The node of an add, as its handler reads it (a batch's may carry an id). */
export interface NewNode {
  type: NodeType
  id?: string
  parentId?: string | null
  data: Record<string, unknown>
}
/** What the add handler reads: services and tests may call it without `action`. */
export type AddInput = { projectId: string; node: NewNode }
/** What an update names and changes, alone or in a batch. */
export type NodeUpdate = Pick<UpdateBody, 'nodeId' | 'data' | 'parentId' | 'ifRev' | 'force'>
/** A batch's entry that writes a node (src/mutate/model.ts `BatchEntry`), read, checked and stored as the single action is. */
export type NodeEntry =
  | { action: 'add'; node: NewNode }
  | ({ action: 'update' } & NodeUpdate)
  | { action: 'delete'; nodeId: string; ifRev?: string }
export type ClassifyBody = Static<typeof ClassifyBody>
