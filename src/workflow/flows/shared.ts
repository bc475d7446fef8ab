import { type Static, type TSchema, Type } from '@sinclair/typebox'
import type { Node } from '../../nodes/model'
import { Clarify, Refused } from '../input'
import { LIMITS, MAX_HISTORY, type RunState, type Signal, type Turn } from '../model'
import type { Snapshot } from '../project'
import type { Answer, Flow, FlowCtx, StepResult } from './types'

export type { Answer, Flow, FlowCtx, Plan, StepResult } from './types'

const clip = (s: string) => (s.length > LIMITS.turnChars ? `${s.slice(0, LIMITS.turnChars - 1)}…` : s)

/** The run with the model's answer (and the user's reply, when given) appended to its history. */
export function withTurns(run: RunState, answer: Answer, nextInput: string | undefined, context?: Record<string, unknown>): RunState {
  const turns: Turn[] = [{ by: 'model', signal: answer.signal, text: clip(answer.message), ...(context ? { context } : {}) }]
  if (nextInput !== undefined && nextInput.trim() !== '') turns.push({ by: 'user', text: clip(nextInput.trim()) })
  return { ...run, history: [...run.history, ...turns].slice(-MAX_HISTORY) }
}

/**
 * A flow of one step over a list of nodes (task-curate over the task inbox, phase-assign over the
 * open jobs in Later): `start` takes the first `limit` (done at once when there is none); `taken`
 * reads them back as they are now (one deleted since is left out), with how many the list holds
 * now; `answers` takes the model's question to the user (needs_clarification) or its draft
 * (draft_ready, with `field` as `schema` says), which `advance` turns into a step's result by
 * `drafted`.
 */
export function overNodes<S extends TSchema>(o: {
  flow: string
  list: (snap: Snapshot) => Node[]
  step: string
  limit: number
  none: string
  field: string
  schema: S
  drafted: (ctx: FlowCtx, ids: string[], value: Static<S>) => StepResult
}) {
  const other = Refused(`${o.flow} answers with signal "draft_ready" and ${o.field} (or needs_clarification)`)
  const answers: Record<Signal, TSchema> = {
    draft_ready: Type.Object({ [o.field]: o.schema }),
    needs_clarification: Clarify,
    classified: other,
    confirmed: other,
  }
  return {
    answers,
    start(ctx: FlowCtx, _input: unknown, run: RunState): ReturnType<Flow['start']> {
      const nodes = o.list(ctx.snap)
      if (!nodes.length) return { kind: 'done', message: o.none }
      return { kind: 'next', run: { ...run, step: o.step, ids: nodes.slice(0, o.limit).map((n) => n.id) } }
    },
    taken: (ctx: FlowCtx, run: RunState) => ({
      nodes: (run.ids ?? []).map((id) => ctx.snap.byId.get(id)).filter((n): n is Node => !!n),
      all: o.list(ctx.snap).length,
    }),
    advance(ctx: FlowCtx, run: RunState, answer: Answer, nextInput: string | undefined): StepResult {
      if (answer.signal === 'needs_clarification') return { kind: 'next', run: withTurns(run, answer, nextInput) }
      return o.drafted(ctx, run.ids ?? [], answer.body[o.field] as Static<S>)
    },
  }
}
