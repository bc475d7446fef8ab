import { randomBytes } from 'node:crypto'
import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { RefusalError } from '../errors'
import { checkInput, JsonObject } from '../http/action-schema'
import { badString } from '../http/input-guard'
import { requireProject, tierRequired } from '../projects/access'
import { hasApiAccess } from '../tiers/service'
import { applyPlan, finishedEmpty, refuseRepeat } from './apply'
import { addFlow } from './flows/add'
import { phaseAssignFlow } from './flows/phase-assign'
import { CURATE_TIP, taskCurateFlow } from './flows/task-curate'
import type { Flow, FlowCtx } from './flows/types'
import {
  BadResponse,
  FLOW_NAMES,
  type FlowName,
  isFlowName,
  LIMITS,
  type RunState,
  SIGNALS,
  type Signal,
  STATE_LIFETIME_MS,
  STATE_VERSION,
} from './model'
import { loadSnapshot } from './project'
import { refuseSpent } from './spent'
import type { StateCodec } from './state'

const FLOWS = new Map<FlowName, Flow>([
  ['add', addFlow],
  ['task-curate', taskCurateFlow],
  ['phase-assign', phaseAssignFlow],
])

export const ADVANCE_REQUIRES =
  'advance requires state and a structured response: response is the parsed JSON object of your model ({message, signal, ...}), with signal a string'

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

const refuse = (error: string, tip?: string) => new RefusalError(400, error, tip ? { _meta: { _tip: tip } } : {})

/** The tip of every mid-flow answer of a flow. */
const tipOf = (flow: FlowName) => (flow === 'task-curate' ? CURATE_TIP : undefined)

/** POST /workflow: start or advance a run (docs/reference/workflow.md). */
export async function postWorkflow(deps: Deps, codec: StateCodec, user: User, raw: unknown) {
  // the body's fields are checked below, with the run's state its refusals carry (docs/validation.md)
  const body = checkInput('body', JsonObject, raw)
  // a key without API access hears the tier refusal first, unless it may use this very project
  if (!hasApiAccess(user)) await requireProject(deps, user, body.projectId).catch(() => Promise.reject(tierRequired()))
  // a NUL or lone surrogate in the run's answer is a bad response (the run is kept); anywhere else, a plain 400
  const bad = badString(body)
  if (bad && !(body.action === 'advance' && /^(response|nextInput)\b/.test(bad.path))) throw refuse(bad.message)
  if (body.action !== 'start' && body.action !== 'advance')
    throw refuse('action must be start or advance', 'Send {projectId, action:"start", flow, input} first; see GET /api/v1/workflow.')
  const { project } = await requireProject(deps, user, body.projectId)
  return body.action === 'start' ? start(deps, codec, user, project.id, body) : advance(deps, codec, user, project.id, body)
}

async function start(deps: Deps, codec: StateCodec, user: User, projectId: string, body: Record<string, unknown>) {
  if (!isFlowName(body.flow)) throw refuse(`flow must be one of: ${FLOW_NAMES.join(', ')}`, 'GET /api/v1/workflow describes each flow.')
  if (typeof body.input === 'string' && body.input.length > LIMITS.inputChars)
    throw refuse(`input is ${body.input.length} characters; at most ${LIMITS.inputChars} are allowed`)
  const flow = FLOWS.get(body.flow)!
  const now = deps.now().getTime()
  const fresh: RunState = {
    v: STATE_VERSION,
    runId: randomBytes(9).toString('base64url'),
    flow: body.flow,
    projectId,
    userId: user.id,
    step: '',
    input: '',
    history: [],
    issuedAt: now,
    expiresAt: now + STATE_LIFETIME_MS,
  }
  const ctx: FlowCtx = { deps, user, projectId, snap: await loadSnapshot(deps.db, projectId) }
  let begun: ReturnType<Flow['start']>
  try {
    begun = flow.start(ctx, body.input, fresh)
  } catch (err) {
    if (err instanceof BadResponse) throw refuse(err.message)
    throw err
  }
  if (begun.kind === 'done') return finishedEmpty(begun.message, tipOf(body.flow))
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

async function advance(deps: Deps, codec: StateCodec, user: User, projectId: string, body: Record<string, unknown>) {
  if (typeof body.state !== 'string' || body.state === '') throw refuse(ADVANCE_REQUIRES)
  const state: string = body.state
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
  const response = body.response
  if (!isObject(response) || typeof response.signal !== 'string') throw retry(ADVANCE_REQUIRES)
  const size = JSON.stringify(response).length
  if (size > LIMITS.responseChars) throw retry(`response is ${size} characters of JSON; at most ${LIMITS.responseChars} are allowed`)
  const nextInput = body.nextInput
  if (nextInput !== undefined && nextInput !== null && typeof nextInput !== 'string') throw retry('nextInput must be a string')
  if (typeof nextInput === 'string' && nextInput.length > LIMITS.inputChars)
    throw retry(`nextInput is ${nextInput.length} characters; at most ${LIMITS.inputChars} are allowed`)
  if (!(SIGNALS as readonly string[]).includes(response.signal)) throw retry(`signal must be one of: ${SIGNALS.join(', ')}`)
  if (response.message !== undefined && typeof response.message !== 'string') throw retry('message must be a string')
  if (typeof response.message === 'string' && response.message.length > LIMITS.messageChars)
    throw retry(`message is ${response.message.length} characters; at most ${LIMITS.messageChars} are allowed`)

  await refuseRepeat(deps, user, state, response)
  // a state whose terminal step applied is spent, whatever the response (src/workflow/spent.ts)
  await refuseSpent(deps.db, state)
  const flow = FLOWS.get(run.flow)!
  const ctx: FlowCtx = { deps, user, projectId, snap: await loadSnapshot(deps.db, projectId) }
  const answer = { signal: response.signal as Signal, message: response.message ?? '', body: response as Record<string, unknown> }
  try {
    const step = flow.advance(ctx, run, answer, nextInput ?? undefined)
    if (step.kind === 'next') {
      const next = deps.now().getTime()
      return await midFlow(codec, ctx, flow, { ...step.run, issuedAt: next, expiresAt: next + STATE_LIFETIME_MS })
    }
    if (step.kind === 'done') return finishedEmpty(step.message)
    return await applyPlan(deps, user, run, state, response, step.plan)
  } catch (err) {
    if (err instanceof BadResponse) throw retry(err.message)
    throw err
  }
}
