import { Type } from '@sinclair/typebox'
import { RefusalError } from '../errors'
import { discriminated, IntegerText, ruled } from '../http/action-schema'
import { literals } from '../ports/schema-rules'

/** The commands of docs/reference/view.md's POST /view-command, and what each needs. */
export const VIEW_COMMAND_TYPES = [
  'setViewMode',
  'selectIteration',
  'zoomToNode',
  'selectNode',
  'expandNode',
  'expandAll',
  'collapseNode',
  'focusGoals',
] as const
export type ViewCommandType = (typeof VIEW_COMMAND_TYPES)[number]
export const VIEW_MODES = ['tree', 'matrix'] as const

/**
 * A command of POST /view-command, typed, as OpenAPI and the MCP tool set_view publish it. What
 * is checked is CommandBody: the command's type, then (in the service) its target, which answers
 * 200 success:false when it does not resolve (docs/reference/view.md).
 */
export const ViewCommand = Type.Object(
  {
    type: literals(VIEW_COMMAND_TYPES),
    mode: Type.Optional(literals(VIEW_MODES, { description: 'setViewMode' })),
    iterationName: Type.Optional(Type.String({ description: 'selectIteration (GET /iterations)' })),
    nodeId: Type.Optional(Type.String({ description: 'the node commands (selectNode without it deselects)' })),
    goalIds: Type.Optional(Type.Array(Type.String(), { description: 'focusGoals: a non-empty array of at most 1000 goal ids' })),
    autoSwitch: Type.Optional(Type.Boolean({ description: 'false: stay in the current mode on a job or task' })),
  },
  { additionalProperties: true },
)

/**
 * The views of a project, each with its own command queue and state: `app`, the canvas at /app,
 * and `chat`, the plan an MCP host shows inside a conversation (the MCP tool open_plan).
 */
export const VIEW_NAMES = ['app', 'chat'] as const
export type ViewName = (typeof VIEW_NAMES)[number]
// no description: set_view and read_view say it in their own, and the tool list is held to its tokens
export const ViewParam = Type.Optional(literals(VIEW_NAMES))

/** GET /view-state parameters. */
export const ViewStateParams = Type.Object({ projectId: Type.String(), view: ViewParam })
/** GET /view-state's query string as checked (checkInput): ViewStateParams, no other name. */
export const ViewStateQuery = Type.Object(ViewStateParams.properties, { additionalProperties: false })

/** POST /view/report's body (the app's own call), checked after the canvas access (checkInput). */
export const ReportBody = Type.Object(
  {
    projectId: Type.String(),
    view: ViewParam,
    applied: Type.Optional(
      Type.Union([Type.Object({ id: Type.Integer({ minimum: 1 }), type: Type.String({ maxLength: 40 }) }), Type.Null()]),
    ),
    state: Type.Object({
      view_mode: literals(VIEW_MODES),
      selected_iteration: Type.Union([Type.String({ maxLength: 200 }), Type.Null()]),
      expanded_nodes: Type.Array(Type.String({ maxLength: 40 }), { maxItems: 100_000 }),
      focused_goals: Type.Array(Type.String({ maxLength: 40 }), { maxItems: 10_000 }),
      selected_node: Type.Union([Type.String({ maxLength: 40 }), Type.Null()]),
    }),
  },
  { additionalProperties: false },
)

/** POST /view-command body, typed. */
export const ViewCommandBody = Type.Object({ projectId: Type.String(), view: ViewParam, command: ViewCommand })

/** docs/reference/view.md's 400 for a command it does not know: `{error:'Invalid command', validTypes}`. */
export const invalidCommand = (message?: string) =>
  new RefusalError(400, 'Invalid command', { ...(message ? { message } : {}), validTypes: [...VIEW_COMMAND_TYPES] })

/**
 * POST /view-command's body as checked after the access check (checkInput): a command of a known
 * type, and setViewMode's mode. A command's target is the service's: one that does not resolve
 * answers 200 success:false (docs/reference/view.md).
 */
export const CommandBody = Type.Object(
  {
    projectId: Type.String(),
    view: ViewParam,
    command: discriminated(
      ruled(
        Type.Union(
          VIEW_COMMAND_TYPES.map((type) =>
            Type.Object(
              {
                type: Type.Literal(type),
                ...(type === 'setViewMode'
                  ? { mode: ruled(literals(VIEW_MODES), () => invalidCommand(`setViewMode needs mode: ${VIEW_MODES.join(' or ')}`)) }
                  : {}),
              },
              { additionalProperties: true },
            ),
          ),
        ),
        () => invalidCommand(),
      ),
      'type',
    ),
  },
  { additionalProperties: false },
)

/** A command as it is queued for the app: the client's fields, checked, plus what the server decided. */
export interface QueuedCommand {
  type: ViewCommandType
  mode?: 'tree' | 'matrix'
  iterationName?: string
  nodeId?: string
  goalIds?: string[]
  autoSwitch?: boolean
  /** selectNode / zoomToNode on a job or task: the view switches to this mode first */
  switchTo?: 'matrix'
}

/** A client counts as connected while its last heartbeat is at most this old (docs/reference/limits.md). */
export const CONNECTED_MS = 30_000
/** The longest a client's poll for commands may wait before answering with none (main.ts sets Bun's idle timeout past it). */
export const POLL_WAIT_MS = 15_000

/** GET /view/commands' query string, checked in this order after the access check (checkInput). */
export const CommandsQuery = Type.Object(
  {
    projectId: Type.String(),
    view: ViewParam,
    after: Type.Optional(
      IntegerText(
        0,
        Number.MAX_SAFE_INTEGER,
        'after must be a command id (a non-negative integer)',
        'the id of the last command this client applied',
      ),
    ),
    wait: Type.Optional(
      IntegerText(
        0,
        POLL_WAIT_MS,
        `wait must be 0 to ${POLL_WAIT_MS} milliseconds`,
        `milliseconds to wait for a command, 0 to ${POLL_WAIT_MS} (default 0: answer at once)`,
      ),
    ),
    revision: Type.Optional(
      Type.String({ description: 'the revision of the previous answer: answer as soon as the tree or its iterations change' }),
    ),
  },
  { additionalProperties: false },
)
