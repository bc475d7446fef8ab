import { an, isNodeType, NODE_TYPES, PARENT_TYPE } from '../../nodes/model'
import { BadResponse, LIMITS, type RunState } from '../model'
import { treeText } from '../project'
import { conversation, FIELD_RULES, fill, introFor, TEMPLATES, userSaid } from '../prompts'
import { checkDrafts } from './drafts'
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

function checkPlacement(ctx: FlowCtx, context: unknown): { type: string; parentId: string | null } {
  if (!context || typeof context !== 'object' || Array.isArray(context))
    throw new BadResponse('context is required: {type, parentId}, e.g. {"type":"job","parentId":"approach-3"}')
  const { type, parentId } = context as Record<string, unknown>
  if (!isNodeType(type)) throw new BadResponse(`context.type must be one of: ${NODE_TYPES.join(', ')}`)
  const parentType = PARENT_TYPE[type]
  if (parentType === null) {
    if (parentId !== undefined && parentId !== null) throw new BadResponse(`context.parentId must be null: ${an(type)} has no parent`)
    return { type, parentId: null }
  }
  if (typeof parentId !== 'string' || !parentId)
    throw new BadResponse(`context.parentId is required: ${an(type)} sits under ${an(parentType)}; give the id of one shown in the prompt`)
  const parent = ctx.snap.byId.get(parentId)
  if (!parent) throw new BadResponse(`context.parentId ${parentId} is not a node of this project`)
  if (parent.type !== parentType) throw new BadResponse(`${an(type)}'s parent must be ${an(parentType)}; ${parentId} is ${an(parent.type)}`)
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

  start(_ctx, input, run) {
    if (typeof input !== 'string' || input.trim() === '')
      throw new BadResponse('input is required for add: a short description of the idea, as a string')
    return { kind: 'next', run: { ...run, step: 'classify', input: input.trim() } }
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
        if (!answer.message.trim()) throw new BadResponse('needs_clarification needs message: the question for the user')
        return turned(run.step)
      case 'classified': {
        // also at the draft step: the user may still move the idea, which then needs a new confirmation
        const placement = checkPlacement(ctx, answer.body.context)
        return turned('confirm', { placement }, placement)
      }
      default: {
        // confirmed
        if (run.step === 'draft') throw new BadResponse('The placement is already confirmed: answer draft_ready with draftNodes')
        const given = answer.body.context
        if (given === undefined && !run.placement)
          throw new BadResponse('Nothing to confirm yet: answer classified with context {type, parentId} first')
        const placement = given === undefined ? run.placement! : checkPlacement(ctx, given)
        return turned('draft', { placement }, placement)
      }
    }
  },
}

function draftPlan(answer: Answer) {
  const drafts = checkDrafts(answer.body.draftNodes, 'draftNodes', LIMITS.drafts)
  return {
    mutations: drafts.map((d) => ({ action: 'add', node: d })),
    source: drafts.map((_, i) => `draftNodes[${i}]`),
    focusDraft: drafts[0]!.id as string,
    message: (n: number) => `Added ${n} node(s) to the plan.`,
  }
}
