/** The commands of api.md's POST /view-command, and what each needs. */
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

export const isCommandType = (t: unknown): t is ViewCommandType =>
  typeof t === 'string' && (VIEW_COMMAND_TYPES as readonly string[]).includes(t)

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

/** A client counts as connected while its last heartbeat is at most this old (api.md, Limits). */
export const CONNECTED_MS = 30_000
/** How long a client's poll for commands waits before answering with none. */
export const POLL_WAIT_MS = 20_000
/** How often a waiting poll looks for commands another replica enqueued. */
export const POLL_EVERY_MS = 200
