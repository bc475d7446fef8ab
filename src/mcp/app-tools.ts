/**
 * Arguments of the plan view's tools (MCP Apps, issue 44): open_plan for the model, and the
 * app-only tools its view calls. Written compactly like work.ts: the routes check every call
 * with their own schemas and answer a mistake with their message.
 */
import { Type } from '@sinclair/typebox'

export const OpenPlanArgs = Type.Object({
  projectId: Type.String(),
  nodeId: Type.Optional(Type.String({ description: 'show this subtree; default the whole project' })),
})

export const ReadPlanArgs = Type.Object({ projectId: Type.String() })

export const FollowArgs = Type.Object({
  projectId: Type.String(),
  after: Type.Optional(Type.String({ description: 'the id of the last command applied' })),
  wait: Type.Optional(Type.String({ description: 'milliseconds to wait, 0 to 15000' })),
  revision: Type.Optional(Type.String({ description: 'the revision of the previous answer' })),
})

export const ReportArgs = Type.Object(
  {
    projectId: Type.String(),
    applied: Type.Optional(Type.Object({ id: Type.Integer(), type: Type.String() })),
    state: Type.Object({}, { additionalProperties: true, description: 'view_mode, selected_iteration, expanded_nodes, …' }),
  },
  { additionalProperties: false },
)

/** The writes a person makes in the view; the route checks each body with the action's own schema. */
export const EDIT_ACTIONS = ['add', 'update', 'delete', 'restore', 'batch'] as const
export const EditArgs = Type.Object(
  {
    projectId: Type.String(),
    action: Type.Union(EDIT_ACTIONS.map((a) => Type.Literal(a))),
    idempotencyKey: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
)
