import { Type } from '@sinclair/typebox'
import { literals } from '../ports/schema-rules'

/**
 * The workflow's vocabulary: flows, signals, the run carried inside `state`, and the limits of
 * docs/reference/limits.md (Limits, workflow rows) plus the payload caps this server sets (docs/workflow.md).
 */
export const FLOW_NAMES = ['add', 'task-curate', 'phase-assign'] as const
export type FlowName = (typeof FLOW_NAMES)[number]

export const SIGNALS = ['classified', 'confirmed', 'draft_ready', 'needs_clarification'] as const
export type Signal = (typeof SIGNALS)[number]

/** POST /workflow body, typed, as OpenAPI documents it; the service checks it part by part with the schemas of src/workflow/input.ts and of each flow. */
export const WorkflowBody = Type.Object({
  projectId: Type.String(),
  action: literals(['start', 'advance']),
  flow: Type.Optional(literals(FLOW_NAMES, { description: 'start' })),
  input: Type.Optional(Type.String({ description: 'start: the input of the flow (add: a short description)' })),
  state: Type.Optional(Type.String({ description: 'advance: the state of the previous result, verbatim' })),
  response: Type.Optional(
    Type.Object(
      { signal: Type.Optional(literals(SIGNALS)) },
      { additionalProperties: true, description: "advance: your model's answer to the prompt, a parsed JSON object" },
    ),
  ),
  nextInput: Type.Optional(Type.String({ description: "advance: the user's reply to response.message; left out, the user agrees" })),
})

export const STATE_VERSION = 1
/** a state is valid this long after it was issued (each step issues a new one) */
export const STATE_LIFETIME_MS = 24 * 3_600_000
/** only the most recent turns travel in the state and reach the prompt (docs/reference/limits.md) */
export const MAX_HISTORY = 100

export const LIMITS = {
  drafts: 50,
  actions: 200,
  nodesPerAction: 10,
  phases: 100,
  assignments: 1000,
  /** characters of `input` (start) and of `nextInput` (advance) */
  inputChars: 4000,
  /** characters of `response.message` */
  messageChars: 4000,
  /** characters of the whole `response` as JSON */
  responseChars: 500_000,
  /** characters of one turn kept in the history (longer turns are clipped) */
  turnChars: 1000,
  /** characters of the project outline in a prompt */
  treeBudget: 12_000,
  /** tasks listed in a task-curate prompt, jobs in a phase-assign prompt */
  inboxTasks: 200,
  laterJobs: 1000,
  /** phase names, like iteration names */
  phaseName: 100,
} as const

export interface Turn {
  /** who spoke: the caller's model, or the user (nextInput) */
  by: 'model' | 'user'
  text: string
  signal?: Signal
  context?: Record<string, unknown>
}

/** Everything a run needs between calls; sealed into the opaque `state`. */
export interface RunState {
  v: number
  /** random, so two runs never share a state (nor an idempotency key) */
  runId: string
  flow: FlowName
  projectId: string
  userId: string
  step: string
  /** the start input (add) */
  input: string
  /** the placement agreed so far (add) */
  placement?: { type: string; parentId: string | null }
  /** the ids the run works on: inbox tasks (task-curate) or open jobs in Later (phase-assign) */
  ids?: string[]
  history: Turn[]
  issuedAt: number
  expiresAt: number
}

/** No-value phase names (docs/reference/workflow.md): compared without case, spaces or punctuation. */
export const NO_VALUE_PHASES = ['Later', 'Backlog', 'Polish', 'Catch-all']
export const isNoValuePhase = (name: string) => {
  const key = name.toLowerCase().replace(/[^a-z0-9]/g, '')
  return NO_VALUE_PHASES.some((n) => n.toLowerCase().replace(/[^a-z0-9]/g, '') === key)
}

/** Terminal apply failures (docs/reference/workflow.md): a 500 with one of four bodies. */
export class ApplyFailed extends Error {
  constructor(
    readonly body: { retry: boolean; partialApply: boolean; alreadyApplied?: boolean },
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message)
  }
}
