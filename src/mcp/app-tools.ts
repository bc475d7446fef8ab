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
/** what a batch of the view may hold (a batch entry cannot restore) */
const EDIT_ENTRIES = ['add', 'update', 'delete'] as const

/**
 * plan_edit does only what it declares (issue 50, 6): an action outside EDIT_ACTIONS, or a batch
 * entry outside EDIT_ENTRIES, is a tool error before any request; POST /mutate would have run
 * revert, addProject, claim, renameProject or classify with the same key.
 */
export function editMistake(args: Record<string, unknown>): Record<string, unknown> | undefined {
  const allowed = (list: readonly string[], action: unknown) => typeof action === 'string' && list.includes(action)
  if (!allowed(EDIT_ACTIONS, args.action))
    return {
      error: 'action_not_allowed',
      message: `plan_edit does only ${EDIT_ACTIONS.join(', ')}; ${JSON.stringify(args.action ?? null)} is not one of them (the mutate tool does the rest)`,
    }
  if (args.action !== 'batch') return undefined
  if (!Array.isArray(args.mutations)) return undefined // the route says what a batch needs
  const i = args.mutations.findIndex((m) => !allowed(EDIT_ENTRIES, (m as { action?: unknown } | null)?.action))
  if (i === -1) return undefined
  const action = (args.mutations[i] as { action?: unknown } | null)?.action
  return {
    error: 'action_not_allowed',
    message: `plan_edit's batch holds only ${EDIT_ENTRIES.join(', ')}; mutations[${i}].action ${JSON.stringify(action ?? null)} is not one of them`,
  }
}
export const EditArgs = Type.Object(
  {
    projectId: Type.String(),
    action: Type.Union(EDIT_ACTIONS.map((a) => Type.Literal(a))),
    idempotencyKey: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
)
