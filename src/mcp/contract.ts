/**
 * The `set_view` tool's arguments, following api.md (POST /view-command) until the canvas
 * module's own typed schema exists as a model file; then the tool takes that one.
 */
import { Type } from '@sinclair/typebox'

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
