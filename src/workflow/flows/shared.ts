import { LIMITS, MAX_HISTORY, type RunState, type Turn } from '../model'
import type { Answer } from './types'

export type { Answer, Flow, FlowCtx, Plan, StepResult } from './types'

const clip = (s: string) => (s.length > LIMITS.turnChars ? `${s.slice(0, LIMITS.turnChars - 1)}…` : s)

/** The run with the model's answer (and the user's reply, when given) appended to its history. */
export function withTurns(run: RunState, answer: Answer, nextInput: string | undefined, context?: Record<string, unknown>): RunState {
  const turns: Turn[] = [{ by: 'model', signal: answer.signal, text: clip(answer.message), ...(context ? { context } : {}) }]
  if (nextInput !== undefined && nextInput.trim() !== '') turns.push({ by: 'user', text: clip(nextInput.trim()) })
  return { ...run, history: [...run.history, ...turns].slice(-MAX_HISTORY) }
}
