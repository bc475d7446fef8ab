/**
 * Argument schemas of the two tools whose routes have no importable typed schema yet:
 * `mutate` (one body per action) and `set_view` (POST /view-command). They follow api.md
 * (POST /mutate, POST /view-command) and are to be replaced by the routes' own schemas
 * when those exist as model files.
 */
import { Type } from '@sinclair/typebox'

export const MUTATE_ACTIONS = [
  'add',
  'update',
  'delete',
  'restore',
  'batch',
  'classify',
  'addIteration',
  'updateIteration',
  'deleteIteration',
  'reorderIterations',
  'addProject',
  'renameProject',
] as const

export const MutateArgs = Type.Object(
  {
    projectId: Type.String(),
    action: Type.Union(
      MUTATE_ACTIONS.map((a) => Type.Literal(a)),
      {
        description:
          'add {node:{type,parentId?,data:{label,…}}}; update {nodeId,data,parentId?}; delete|restore|classify {nodeId}; batch {mutations:[add|update|delete|addIteration entries; draft- ids link them]}; addIteration {iteration:{name}}; updateIteration {iterationName,data}; deleteIteration {iterationName}; reorderIterations {order}; addProject {project:{name,id?}}; renameProject {name}',
      },
    ),
    idempotencyKey: Type.Optional(Type.String({ description: 'sent as Idempotency-Key: a retry with the same key is not applied twice' })),
  },
  { additionalProperties: true },
)

export const VIEW_COMMANDS = [
  'setViewMode',
  'selectIteration',
  'zoomToNode',
  'selectNode',
  'expandNode',
  'expandAll',
  'collapseNode',
  'focusGoals',
] as const

export const SetViewArgs = Type.Object({
  projectId: Type.String(),
  command: Type.Object(
    {
      type: Type.Union(VIEW_COMMANDS.map((c) => Type.Literal(c))),
      mode: Type.Optional(Type.Union([Type.Literal('tree'), Type.Literal('matrix')], { description: 'setViewMode' })),
      iterationName: Type.Optional(Type.String({ description: 'selectIteration' })),
      nodeId: Type.Optional(Type.String()),
      goalIds: Type.Optional(Type.Array(Type.String(), { description: 'focusGoals' })),
      autoSwitch: Type.Optional(Type.Boolean({ description: 'false: stay in tree view for a job or task' })),
    },
    { additionalProperties: true },
  ),
})
