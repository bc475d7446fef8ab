import { randomBytes } from 'node:crypto'
import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { ErrorListError, RefusalError } from '../errors'
import { checkInput, JsonObject, parseInput } from '../http/action-schema'
import { badString } from '../http/input-guard'
import { type Access, requireProject, tierRequired } from '../projects/access'
import { hasApiAccess } from '../tiers/service'
import { applyPlan, finishedEmpty, refuseRepeat } from './apply'
import { addFlow } from './flows/add'
import { phaseAssignFlow } from './flows/phase-assign'
import { CURATE_TIP, taskCurateFlow } from './flows/task-curate'
import type { Answer, Flow, FlowCtx } from './flows/types'
import { ActionPart, AdvanceBody, AdvanceState, AnswerBase, StartPart } from './input'
import { type FlowName, type RunState, STATE_LIFETIME_MS, STATE_VERSION } from './model'
import { loadSnapshot } from './project'
import { refuseSpent } from './spent'
import type { StateCodec } from './state'

const FLOWS = new Map<FlowName, Flow>([
  ['add', addFlow],
  ['task-curate', taskCurateFlow],
  ['phase-assign', phaseAssignFlow],
])

export { ADVANCE_REQUIRES } from './input'

const refuse = (error: string, tip?: string) => new RefusalError(400, error, tip ? { _meta: { _tip: tip } } : {})

/**
 * `work()`, with a refusal of the input (the checker's, or a rule a flow checks against the
 * project or the run: both an ErrorListError of 400) drawn by `draw`, as this endpoint answers it.
 */
function drawn<T>(draw: (error: string, tip?: string) => Error, work: () => T): T {
  const redraw = (err: unknown): never => {
    if (err instanceof ErrorListError && err.status === 400)
      throw draw(err.errors.join('; '), typeof err.meta._tip === 'string' ? err.meta._tip : undefined)
    throw err
  }
  try {
    const result = work()
    return (result instanceof Promise ? result.catch(redraw) : result) as T
  } catch (err) {
    return redraw(err)
  }
}

/** The tip of every mid-flow answer of a flow. */
const tipOf = (flow: FlowName) => (flow === 'task-curate' ? CURATE_TIP : undefined)

/** POST /workflow: start or advance a run (docs/reference/workflow.md). */
export async function postWorkflow(deps: Deps, codec: StateCodec, user: User, raw: unknown) {
  // the body's fields are checked below, with the run's state its refusals carry (docs/validation.md)
  const body = checkInput('body', JsonObject, raw)
  // the project the body names, before anything about the body: 403 before 400 (docs/validation.md);
  // a key without API access hears the tier refusal instead, unless it may use this very project
  const named = !hasApiAccess(user)
    ? await requireProject(deps, user, body.projectId).catch(() => Promise.reject(tierRequired()))
    : typeof body.projectId === 'string'
      ? await requireProject(deps, user, body.projectId)
      : undefined
  // a NUL or lone surrogate in the run's answer is a bad response (the run is kept); anywhere else, a plain 400
  const bad = badString(body)
  if (bad && !(body.action === 'advance' && /^(response|nextInput)\b/.test(bad.path))) throw refuse(bad.message)
  drawn(refuse, () => parseInput(ActionPart, body))
  const access = named ?? (await requireProject(deps, user, body.projectId))
  return body.action === 'start' ? start(deps, codec, user, access.project.id, body) : advance(deps, codec, user, access, body)
}

async function start(deps: Deps, codec: StateCodec, user: User, projectId: string, body: Record<string, unknown>) {
  // the one check of a start: the flow, then its input (src/workflow/input.ts, each flow's `input`)
  const flow = drawn(refuse, () => {
    const named = FLOWS.get(parseInput(StartPart, body).flow)!
    parseInput(named.input, body)
    return named
  })
  const flowName = flow.name
  const now = deps.now().getTime()
  const fresh: RunState = {
    v: STATE_VERSION,
    runId: randomBytes(9).toString('base64url'),
    flow: flowName,
    projectId,
    userId: user.id,
    step: '',
    input: '',
    history: [],
    issuedAt: now,
    expiresAt: now + STATE_LIFETIME_MS,
  }
  const ctx: FlowCtx = { deps, user, projectId, snap: await loadSnapshot(deps.db, projectId) }
  const begun = flow.start(ctx, body.input, fresh)
  if (begun.kind === 'done') return finishedEmpty(begun.message, tipOf(flowName))
  return midFlow(codec, ctx, flow, begun.run)
}

async function midFlow(codec: StateCodec, ctx: FlowCtx, flow: Flow, run: RunState) {
  const prompt = flow.prompt(ctx, run)
  const tip = tipOf(run.flow)
  return {
    done: false,
    prompt,
    state: await codec.seal(run),
    _meta: { flow: run.flow, step: run.step, ...(tip ? { _tip: tip } : {}) },
  }
}

/**
 * The one check of an advance's answer, in this order: the envelope (a response object with a
 * string signal, its size, nextInput), what every answer holds (the signal, the message), then
 * what the flow takes for that signal (each flow's `answers`). What is left to the flow is only
 * what reads the project or the run.
 */
function checkAnswer(flow: Flow, body: Record<string, unknown>): { answer: Answer; nextInput: string | undefined } {
  const { response, nextInput } = parseInput(AdvanceBody, body)
  const { signal, message } = parseInput(AnswerBase, response)
  parseInput(flow.answers[signal], response)
  return { answer: { signal, message: message ?? '', body: response }, nextInput: nextInput ?? undefined }
}

async function advance(deps: Deps, codec: StateCodec, user: User, access: Access, body: Record<string, unknown>) {
  const projectId = access.project.id
  const { state } = drawn(refuse, () => parseInput(AdvanceState, body))
  const run = await codec.open(state, { projectId, userId: user.id })
  // from here on, every refusal keeps the run: the same state comes back with retry:true
  const retry = (error: string) =>
    new RefusalError(400, error, {
      retry: true,
      state,
      _meta: { _tip: 'Nothing was written. Give the error to your model and advance again with this same state and a corrected response.' },
    })
  const bad = badString(body)
  if (bad) throw retry(bad.message)
  const flow = FLOWS.get(run.flow)!
  const { answer, nextInput } = drawn(retry, () => checkAnswer(flow, body))

  await refuseRepeat(deps, user, state, answer.body)
  // a state whose terminal step applied is spent, whatever the response (src/workflow/spent.ts)
  await refuseSpent(deps.db, state)
  const ctx: FlowCtx = { deps, user, projectId, snap: await loadSnapshot(deps.db, projectId) }
  const step = drawn(retry, () => flow.advance(ctx, run, answer, nextInput))
  if (step.kind === 'next') {
    const next = deps.now().getTime()
    return midFlow(codec, ctx, flow, { ...step.run, issuedAt: next, expiresAt: next + STATE_LIFETIME_MS })
  }
  if (step.kind === 'done') return finishedEmpty(step.message)
  // a batch entry that breaks a mutate rule is a bad answer too (applyError)
  return drawn(retry, () => applyPlan(deps, user, access, run, state, answer.body, step.plan))
}
