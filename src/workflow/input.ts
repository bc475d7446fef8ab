import { Type } from '@sinclair/typebox'
import { literals, nullable, refined, ruled } from '../ports/schema-rules'
import { FLOW_NAMES, LIMITS, SIGNALS } from './model'

/**
 * The input of POST /workflow as schemas with docs/reference/workflow.md's messages, checked by the
 * one checker of the API (`parseInput`, src/http/action-schema.ts) at one point of
 * src/workflow/service.ts: the envelope here, each flow's start input and each signal's answer in
 * its flow (src/workflow/flows/*). A refusal is drawn as the endpoint draws it: `{error}` before a
 * run exists, `{error, retry:true, state}` once it does (docs/validation.md).
 */

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

/** `name is N characters; at most max are allowed`, or `name must be a string`. */
const textRule = (name: string, max: number) => (v: unknown) =>
  typeof v === 'string' ? `${name} is ${v.length} characters; at most ${max} are allowed` : `${name} must be a string`

export const ADVANCE_REQUIRES =
  'advance requires state and a structured response: response is the parsed JSON object of your model ({message, signal, ...}), with signal a string'

/** Every call names its action; checked after the project's access (403 before 400). */
export const ActionPart = Type.Object({
  action: ruled(literals(['start', 'advance']), {
    message: 'action must be start or advance',
    tip: 'Send {projectId, action:"start", flow, input} first; see GET /api/v1/workflow.',
  }),
})

/** start: the flow; its `input` is the flow's own schema (`Flow.input`). */
export const StartPart = Type.Object({
  flow: ruled(literals(FLOW_NAMES), {
    message: `flow must be one of: ${FLOW_NAMES.join(', ')}`,
    tip: 'GET /api/v1/workflow describes each flow.',
  }),
})

/** A flow that reads no input: any value, but a string over the limit is refused as it always was. */
export const NoInput = Type.Object({
  input: Type.Optional(
    refined(ruled(Type.Unknown(), textRule('input', LIMITS.inputChars)), (v) => typeof v !== 'string' || v.length <= LIMITS.inputChars),
  ),
})

/** advance: the state, before it is opened (no run yet, so its refusal carries none). */
export const AdvanceState = Type.Object({ state: ruled(Type.String({ minLength: 1 }), ADVANCE_REQUIRES) })

/** advance, once the run is open: the answer as an object with a string signal, its size, the user's reply. */
export const AdvanceBody = Type.Object({
  response: refined(
    ruled(Type.Object({ signal: Type.String() }), (v) =>
      isObject(v) && typeof v.signal === 'string'
        ? `response is ${JSON.stringify(v).length} characters of JSON; at most ${LIMITS.responseChars} are allowed`
        : ADVANCE_REQUIRES,
    ),
    (v) => JSON.stringify(v).length <= LIMITS.responseChars,
  ),
  nextInput: Type.Optional(nullable(ruled(Type.String({ maxLength: LIMITS.inputChars }), textRule('nextInput', LIMITS.inputChars)))),
})

/** What every answer holds, whatever the flow: one of the signals, and a message for the user. */
export const AnswerBase = Type.Object({
  signal: ruled(literals(SIGNALS), `signal must be one of: ${SIGNALS.join(', ')}`),
  message: Type.Optional(ruled(Type.String({ maxLength: LIMITS.messageChars }), textRule('message', LIMITS.messageChars))),
})

/** needs_clarification, in every flow: the question for the user. */
export const Clarify = Type.Object({
  message: ruled(Type.String({ pattern: '\\S' }), 'needs_clarification needs message: the question for the user'),
})

/** A signal the flow does not take: every such answer is refused with `message`. */
export const Refused = (message: string) => ruled(Type.Never(), message)
