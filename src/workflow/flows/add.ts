import { type Static, Type } from '@sinclair/typebox'
import { invalid } from '../../errors'
import { an, NODE_TYPES, type NodeType, PARENT_TYPE } from '../../nodes/model'
import { discriminated, ruled } from '../../ports/schema-rules'
import { Clarify } from '../input'
import { LIMITS, type RunState } from '../model'
import { treeText } from '../project'
import { conversation, FIELD_RULES, fill, introFor, TEMPLATES, userSaid } from '../prompts'
import { AnswerDrafts, asNodes, type Draft } from './drafts'
import { type Answer, type Flow, type FlowCtx, type StepResult, withTurns } from './shared'

/**
 * add: classify an idea (`classify`), confirm its placement (`confirm`), draft its nodes
 * (`draft`). `needs_clarification` keeps the step and records the question (and the user's
 * answer, `nextInput`); a valid `draft_ready` ends the run at any step.
 */
const STEP_TEMPLATE = new Map([
  ['classify', 'add-classify'],
  ['confirm', 'add-confirm'],
  ['draft', 'add-draft'],
])

/** Where the idea goes: a type, and a parent of the type above it (none for a goal or task). */
const placementOf = (type: NodeType) => {
  const parent = PARENT_TYPE[type]
  return Type.Object({
    type: Type.Literal(type),
    parentId:
      parent === null
        ? Type.Optional(ruled(Type.Null(), `context.parentId must be null: ${an(type)} has no parent`))
        : ruled(
            Type.String({ minLength: 1 }),
            `context.parentId is required: ${an(type)} sits under ${an(parent)}; give the id of one shown in the prompt`,
          ),
  })
}
const Placement = ruled(discriminated(Type.Union(NODE_TYPES.map(placementOf)), 'type'), (v) =>
  v && typeof v === 'object' && !Array.isArray(v)
    ? `context.type must be one of: ${NODE_TYPES.join(', ')}`
    : 'context is required: {type, parentId}, e.g. {"type":"job","parentId":"approach-3"}',
)
type Placed = { type: string; parentId: string | null }

/** The placement's parent, as the project has it now. */
function checkPlacement(ctx: FlowCtx, context: unknown): Placed {
  const { type, parentId } = context as Static<typeof Placement>
  const parentType = PARENT_TYPE[type]
  if (parentType === null || typeof parentId !== 'string') return { type, parentId: null }
  const parent = ctx.snap.byId.get(parentId)
  if (!parent) throw invalid(`context.parentId ${parentId} is not a node of this project`)
  if (parent.type !== parentType) throw invalid(`${an(type)}'s parent must be ${an(parentType)}; ${parentId} is ${an(parent.type)}`)
  return { type, parentId }
}

const describePlacement = (ctx: FlowCtx, p: { type: string; parentId: string | null }) => {
  if (!p.parentId) return `${an(p.type)} with no parent`
  const parent = ctx.snap.byId.get(p.parentId)
  return `${an(p.type)} under ${p.parentId}${parent ? ` ${JSON.stringify(String(parent.data?.label ?? ''))}` : ' (no longer in the project: propose a new place)'}`
}

function iterationNames(ctx: FlowCtx): string {
  return ctx.snap.iterations
    .filter((i) => i.status === 'active')
    .map((i) => JSON.stringify(i.name))
    .join(', ')
}

export const addFlow: Flow = {
  name: 'add',

  input: Type.Object({
    input: ruled(Type.String({ pattern: '\\S', maxLength: LIMITS.inputChars }), (v) =>
      typeof v === 'string' && v.length > LIMITS.inputChars
        ? `input is ${v.length} characters; at most ${LIMITS.inputChars} are allowed`
        : 'input is required for add: a short description of the idea, as a string',
    ),
  }),

  answers: {
    classified: Type.Object({ context: Placement }),
    confirmed: Type.Object({ context: Type.Optional(Placement) }),
    draft_ready: Type.Object({ draftNodes: AnswerDrafts(LIMITS.drafts) }),
    needs_clarification: Clarify,
  },

  start(_ctx, input, run) {
    return { kind: 'next', run: { ...run, step: 'classify', input: String(input).trim() } }
  },

  prompt(ctx, run) {
    const placement = run.placement ?? { type: 'job', parentId: null }
    const common = fill(
      TEMPLATES.get('add-common')!,
      new Map([
        ['input', run.input],
        ['conversation', conversation(run.history)],
        ['maxDrafts', String(LIMITS.drafts)],
        ['iterations', iterationNames(ctx)],
      ]),
    )
    return fill(
      TEMPLATES.get(STEP_TEMPLATE.get(run.step)!)!,
      new Map([
        ['intro', introFor(ctx.projectId)],
        ['tree', treeText(ctx.snap, ctx.projectId, { tasks: false })],
        ['common', common],
        ['fieldRules', FIELD_RULES],
        ['placement', describePlacement(ctx, placement)],
        ['userSaid', userSaid(run.history)],
        ['type', placement.type],
        ['parentJson', JSON.stringify(placement.parentId)],
        ['parentText', placement.parentId ?? 'no parent (a root node)'],
      ]),
    )
  },

  advance(ctx, run, answer, nextInput): StepResult {
    const turned = (step: string, extra: Partial<RunState> = {}, context?: Record<string, unknown>) => ({
      kind: 'next' as const,
      run: withTurns({ ...run, ...extra, step }, answer, nextInput, context),
    })
    switch (answer.signal) {
      case 'draft_ready':
        return { kind: 'apply', plan: draftPlan(answer) }
      case 'needs_clarification':
        return turned(run.step)
      case 'classified': {
        // also at the draft step: the user may still move the idea, which then needs a new confirmation
        const placement = checkPlacement(ctx, answer.body.context)
        return turned('confirm', { placement }, placement)
      }
      default: {
        // confirmed
        if (run.step === 'draft') throw invalid('The placement is already confirmed: answer draft_ready with draftNodes')
        const given = answer.body.context
        if (given === undefined && !run.placement)
          throw invalid('Nothing to confirm yet: answer classified with context {type, parentId} first')
        const placement = given === undefined ? run.placement! : checkPlacement(ctx, given)
        return turned('draft', { placement }, placement)
      }
    }
  },
}

function draftPlan(answer: Answer) {
  const drafts = answer.body.draftNodes as Draft[]
  return {
    mutations: asNodes(drafts).map((node) => ({ action: 'add', node })),
    source: drafts.map((_, i) => `draftNodes[${i}]`),
    focusDraft: drafts[0]!.id as string,
    message: (n: number) => `Added ${n} node(s) to the plan.`,
  }
}
