import type { TSchema } from '@sinclair/typebox'
import type { User } from '../../accounts/model'
import type { Deps } from '../../deps'
import type { FlowName, RunState, Signal } from '../model'
import type { Snapshot } from '../project'

/** What a flow sees of one call. */
export interface FlowCtx {
  deps: Deps
  user: User
  projectId: string
  snap: Snapshot
}

/** A checked answer of the caller's model: `body` holds what the flow's schema for `signal` says. */
export interface Answer {
  signal: Signal
  message: string
  body: Record<string, unknown>
}

/** The writes of a terminal step, as batch entries, and how to talk about them. */
export interface Plan {
  mutations: Record<string, unknown>[]
  /** the field of the answer that produced mutations[i], e.g. `draftNodes[2]` */
  source: string[]
  /** the node to focus after the apply (a draft id is mapped to its real id) */
  focusDraft?: string
  message: (changes: number) => string
}

export type StepResult =
  | { kind: 'next'; run: RunState }
  | { kind: 'apply'; plan: Plan }
  /** finished without writing (an empty inbox, every task skipped) */
  | { kind: 'done'; message: string }

export interface Flow {
  name: FlowName
  /** start's body: its `input`, checked before `start` (src/workflow/input.ts) */
  input: TSchema
  /** advance: the answer each signal takes, checked before `advance`, which keeps only the rules of the project and the run */
  answers: Record<Signal, TSchema>
  /** a new run, or done at once when there is nothing to do */
  start(ctx: FlowCtx, input: unknown, run: RunState): { kind: 'next'; run: RunState } | { kind: 'done'; message: string }
  prompt(ctx: FlowCtx, run: RunState): string
  advance(ctx: FlowCtx, run: RunState, answer: Answer, nextInput: string | undefined): StepResult
}
