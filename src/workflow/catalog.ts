import { ENUMS, NODE_TYPES } from '../nodes/model'
import { CURATE_TIP } from './flows/task-curate'
import { LIMITS, MAX_HISTORY, NO_VALUE_PHASES, SIGNALS, STATE_LIFETIME_MS } from './model'

/**
 * GET /workflow: everything an agent needs to run every flow without reading anything else —
 * the protocol, each flow's input and the JSON Schema of the answers `advance` accepts at each
 * step, the limits, and what to show the user before submitting.
 */
const message = { type: 'string', maxLength: LIMITS.messageChars, description: 'one or two sentences for the user' }
const draftNode = (description: string) => ({
  type: 'object',
  required: ['id', 'type', 'data'],
  properties: {
    id: { type: 'string', pattern: '^draft-', description: 'your own id, unique in the answer; later drafts may use it as parentId' },
    type: { enum: [...NODE_TYPES] },
    parentId: {
      type: ['string', 'null'],
      description:
        'an existing node id or an earlier draft id, of the parent type: need→goal, approach→need, job→approach; null for goal and task',
    },
    data: {
      type: 'object',
      required: ['label'],
      description: 'the node fields of the guide (GET /api/v1/guide, nodes.fields); kind, urgent and completedAt are never sent',
      properties: {
        label: { type: 'string', minLength: 1, maxLength: 500 },
        description: { type: 'string' },
        notes: { type: 'string', description: 'approach, job' },
        iteration: { type: 'string', description: 'job, task: an existing iteration name' },
        maturity: { enum: [...ENUMS.maturity] },
        measure: { type: 'string', description: 'approach' },
        kano: { enum: [...ENUMS.kano] },
        size: { enum: [...ENUMS.size] },
        approachStatus: { enum: [...ENUMS.approachStatus] },
        goalStatus: { enum: [...ENUMS.goalStatus] },
      },
    },
  },
  description,
})
const clarify = {
  type: 'object',
  required: ['signal', 'message'],
  properties: { signal: { const: 'needs_clarification' }, message: { ...message, description: 'the question for the user' } },
}
const placement = {
  type: 'object',
  required: ['type'],
  properties: { type: { enum: [...NODE_TYPES] }, parentId: { type: ['string', 'null'] } },
  description: 'where the idea goes: {type:"job", parentId:"approach-3"}; parentId null for a goal or task',
}
const addSchemas = {
  classified: {
    type: 'object',
    required: ['signal', 'context'],
    properties: { signal: { const: 'classified' }, message, context: placement },
  },
  confirmed: {
    type: 'object',
    required: ['signal'],
    properties: {
      signal: { const: 'confirmed' },
      message,
      context: { ...placement, description: 'optional: the placement, if it changed' },
    },
  },
  draft_ready: {
    type: 'object',
    required: ['signal', 'draftNodes'],
    properties: {
      signal: { const: 'draft_ready' },
      message,
      draftNodes: { type: 'array', minItems: 1, maxItems: LIMITS.drafts, items: draftNode('a node to add') },
    },
  },
  needs_clarification: clarify,
}
const curateAction = {
  type: 'object',
  required: ['taskId', 'action'],
  properties: {
    taskId: { type: 'string', description: 'a task of the inbox in the prompt; at most one action per task' },
    action: { enum: ['skip', 'discard', 'merge', 'promote'] },
    intoTaskId: { type: 'string', description: 'merge only: another inbox task that is skipped in this answer' },
    nodes: {
      type: 'array',
      minItems: 1,
      maxItems: LIMITS.nodesPerAction,
      items: draftNode("promote only: the first node's label defaults to the task's label"),
    },
  },
}
const curateReady = {
  type: 'object',
  required: ['signal', 'actions'],
  properties: { signal: { const: 'draft_ready' }, message, actions: { type: 'array', maxItems: LIMITS.actions, items: curateAction } },
}
const phaseReady = {
  type: 'object',
  required: ['signal', 'phases'],
  properties: {
    signal: { const: 'draft_ready' },
    message,
    phases: {
      type: 'array',
      minItems: 1,
      maxItems: LIMITS.phases,
      items: {
        type: 'object',
        required: ['name', 'jobIds'],
        properties: {
          name: {
            type: 'string',
            minLength: 1,
            maxLength: LIMITS.phaseName,
            description: `the value users get; an active iteration's name reuses it; refused: ${NO_VALUE_PHASES.join(', ')} in any letter case`,
          },
          jobIds: {
            type: 'array',
            minItems: 1,
            items: { type: 'string' },
            description: `open jobs in Later from the prompt; ${LIMITS.assignments} in all at most`,
          },
        },
      },
    },
  },
}

const step = (name: string, description: string, accepts: Record<string, unknown>) => ({
  name,
  description,
  signals: Object.keys(accepts),
  response: { oneOf: Object.values(accepts) },
})

export function catalog(guide: string) {
  return {
    protocol: {
      start: {
        request: 'POST /api/v1/workflow {projectId, action:"start", flow, input}',
        result: '{done:false, prompt, state, _meta:{flow, step, _tip?}}; or {done:true, changeset:[], …} when there is nothing to do',
      },
      advance: {
        request: 'POST /api/v1/workflow {projectId, action:"advance", state, response, nextInput?}',
        result:
          '{done:false, prompt, state, _meta:{flow, step}} mid-flow; {done:true, changeset:[{action,nodeId,type,before,after}], focus, message, _meta:{viewCommand, focus}} at the end',
      },
      loop: [
        'Start a flow; send `prompt` to your model as the user message and ask for one JSON object.',
        "Parse the model's JSON and send it as `response` with the `state` of the last result, unchanged.",
        'Show `response.message` to the user; pass their reply as `nextInput` in the same advance (left out: the user agrees).',
        'Repeat until done:true. A 400 with retry:true means the answer broke a rule: give the model `error` and advance again with the same state.',
      ],
      signals: SIGNALS,
      state: `opaque and signed; bound to the project and the key's user; valid ${STATE_LIFETIME_MS / 3_600_000} hours after it was issued; carries the last ${MAX_HISTORY} turns of the conversation`,
      idempotency:
        'The terminal apply runs once per (state, response): a repeat answers 500 {retry:false, partialApply:false, alreadyApplied:true}.',
      errors: [
        '400 {error:"action must be start or advance"}',
        '400 {error:"advance requires state and a structured response …"}: no state, or response is not an object with a string signal',
        '400 {error, retry:true, state}: the answer broke a rule; the state is unchanged — correct the answer and advance again',
        '400 {error}: a state that was altered, expired, or issued for another project or user; start again',
        '400 {error}: input, nextInput, response or the body over the limits below',
        '500 {retry:true, partialApply:false}: the apply was refused before writing (node cap, tier); fix the cause, advance again with the same state',
        '500 {retry:false, partialApply:false, alreadyApplied:true}: an earlier attempt already applied it; read GET /nodes, do not retry',
        '500 {retry:true, partialApply:false} with "still running" in _meta._tip: an identical apply is in flight; wait and advance again',
        '500 {retry:false, partialApply:true}: the outcome is unknown; read GET /nodes and reconcile first',
      ],
      limits: {
        inputChars: LIMITS.inputChars,
        nextInputChars: LIMITS.inputChars,
        messageChars: LIMITS.messageChars,
        responseChars: LIMITS.responseChars,
        historyTurns: MAX_HISTORY,
        draftNodes: LIMITS.drafts,
        actions: LIMITS.actions,
        nodesPerAction: LIMITS.nodesPerAction,
        phases: LIMITS.phases,
        assignments: LIMITS.assignments,
      },
      treeInPrompt: `each prompt shows the project as GET /api/v1/tree?format=outline&budget=${LIMITS.treeBudget} renders it`,
    },
    flows: [
      {
        name: 'add',
        description: 'Classifies a feature or idea, confirms its placement in the tree, and drafts the nodes to add.',
        input: { type: 'string', minLength: 1, maxLength: LIMITS.inputChars, description: 'a short description of the idea' },
        response: { oneOf: Object.values(addSchemas) },
        steps: [
          step('classify', 'Decide the type and parent of the idea.', {
            classified: addSchemas.classified,
            needs_clarification: clarify,
            draft_ready: addSchemas.draft_ready,
          }),
          step('confirm', 'Confirm the placement (or propose another).', addSchemas),
          step('draft', 'Draft the nodes under the agreed placement (classified goes back to confirm a new one).', {
            draft_ready: addSchemas.draft_ready,
            needs_clarification: clarify,
            classified: addSchemas.classified,
          }),
        ],
        advisory: 'draft_ready writes at once: show the drafts to the user before submitting them.',
        notes: [
          'classified → confirmed → draft_ready; needs_clarification keeps the step; a valid draft_ready ends the run at any step.',
          `At most ${LIMITS.drafts} draft nodes, checked with the rules of POST /mutate (parent types, fields per type, enums, limits).`,
          'Each draft has its own id starting with draft-; a later draft may use it as parentId.',
        ],
      },
      {
        name: 'task-curate',
        description: 'Triages the task inbox (open tasks): merge duplicates, promote tasks into the plan, discard noise, skip the rest.',
        input: { type: 'null', description: 'none: the flow reads the inbox' },
        response: { oneOf: [curateReady, clarify] },
        steps: [step('curate', 'Propose one action per inbox task.', { draft_ready: curateReady, needs_clarification: clarify })],
        advisory: CURATE_TIP,
        suggestedBy: 'the inbox_overflow advisory of a write (_meta.advisory.suggestedFlow)',
        notes: [
          `At most ${LIMITS.actions} actions, each promote creating at most ${LIMITS.nodesPerAction} nodes.`,
          "merge appends the task's label and description to the description of intoTaskId, then deletes the task (an update and a delete).",
          'promote adds the nodes, then deletes the task. discard deletes it. A task left out is skipped.',
          'An empty inbox, or an answer that skips every task, ends done:true with an empty changeset.',
        ],
      },
      {
        name: 'phase-assign',
        description:
          'Fits the open jobs in Later into themed iterations, reusing active iterations and creating new ones only when needed.',
        input: { type: 'null', description: 'none: the flow reads the open jobs in Later' },
        response: { oneOf: [phaseReady, clarify] },
        steps: [step('assign', 'Group the jobs into phases.', { draft_ready: phaseReady, needs_clarification: clarify })],
        advisory: 'New iterations are created when the answer is applied: show the plan to the user before submitting it.',
        notes: [
          `At most ${LIMITS.phases} phases and ${LIMITS.assignments} job ids; only open jobs in Later.`,
          `Names that describe no user value (${NO_VALUE_PHASES.join(', ')}, any letter case) are refused with retry:true.`,
          "A name equal to an active iteration (letter case aside) reuses it; a done iteration's name is refused.",
        ],
      },
    ],
    notes: [
      'No authentication for this catalog; POST /workflow takes the API key like every other call.',
      'The service runs no model and spends no credits: your own model answers each prompt.',
      'signal is required in every answer; task-curate and phase-assign finish with signal "draft_ready".',
      'Use /api/v1/workflow; the unversioned /api/workflow answers the same, without Deprecation headers.',
    ],
    _meta: { guide, _tip: 'Start with POST /api/v1/workflow {projectId, action:"start", flow:"add", input:"<idea>"}.' },
  }
}
