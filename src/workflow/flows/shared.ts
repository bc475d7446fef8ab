import type { Node } from '../../nodes/model'
import { LIMITS, MAX_HISTORY, type RunState, type Turn } from '../model'
import type { Answer, Flow, FlowCtx } from './types'

export type { Answer, Flow, FlowCtx, Plan, StepResult } from './types'

const clip = (s: string) => (s.length > LIMITS.turnChars ? `${s.slice(0, LIMITS.turnChars - 1)}…` : s)

/** The run with the model's answer (and the user's reply, when given) appended to its history. */
export function withTurns(run: RunState, answer: Answer, nextInput: string | undefined, context?: Record<string, unknown>): RunState {
  const turns: Turn[] = [{ by: 'model', signal: answer.signal, text: clip(answer.message), ...(context ? { context } : {}) }]
  if (nextInput !== undefined && nextInput.trim() !== '') turns.push({ by: 'user', text: clip(nextInput.trim()) })
  return { ...run, history: [...run.history, ...turns].slice(-MAX_HISTORY) }
}

/** A flow over a list of nodes (the task inbox, the open jobs in Later): the run takes the first `limit`, or is done at once when there is none. */
export function takeNodes(run: RunState, step: string, nodes: Node[], limit: number, none: string): ReturnType<Flow['start']> {
  if (!nodes.length) return { kind: 'done', message: none }
  return { kind: 'next', run: { ...run, step, ids: nodes.slice(0, limit).map((n) => n.id) } }
}

/** The nodes the run took at its start (takeNodes), as they are now; one deleted since is left out. */
export const takenNodes = (ctx: FlowCtx, run: RunState): Node[] =>
  (run.ids ?? []).map((id) => ctx.snap.byId.get(id)).filter((n): n is Node => !!n)
