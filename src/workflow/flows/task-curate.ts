import { type Static, Type } from '@sinclair/typebox'
import { invalid } from '../../errors'
import type { Node } from '../../nodes/model'
import { discriminated, refined, ruled } from '../../ports/schema-rules'
import { NoInput } from '../input'
import { LIMITS } from '../model'
import { inbox, treeText } from '../project'
import { conversation, FIELD_RULES, fill, introFor, TEMPLATES } from '../prompts'
import { asNodes, type Draft, Drafts, repeatedDraft } from './drafts'
import { type Flow, type FlowCtx, overNodes, type Plan } from './shared'

/**
 * task-curate: one step over the open tasks (the inbox). The answer proposes skip, discard,
 * merge or promote per task; the caller shows promotions and discards to the user and sends
 * only the confirmed ones. Applied as one batch: promoted nodes are added, merge targets get
 * the merged text, then merged, promoted and discarded tasks are deleted.
 */
export const CURATE_TIP =
  'Promotions and discards are proposals: show them to the user first and submit only the choices they confirm; set the rest to skip.'
const ACTIONS = ['skip', 'discard', 'merge', 'promote'] as const
const DONE_TO = new Map([
  ['discard', 'discarded'],
  ['merge', 'merged'],
  ['promote', 'promoted'],
])

function taskLine(t: Node): string {
  const d = t.data ?? {}
  const facts = [d.kind, d.urgent ? 'urgent' : undefined, d.iteration ? `iteration: ${d.iteration}` : undefined].filter(Boolean)
  const desc =
    typeof d.description === 'string' && d.description
      ? ` — ${d.description.length > 300 ? `${d.description.slice(0, 299)}…` : d.description}`
      : ''
  return `- ${t.id} ${JSON.stringify(String(d.label ?? ''))}${facts.length ? ` [${facts.join(', ')}]` : ''}${desc}`
}

/** One action per task: merge names the task it goes into, promote the nodes it becomes. */
const curateAction = (action: (typeof ACTIONS)[number], more = {}) =>
  Type.Object({
    taskId: ruled(Type.String(), (_, at) => `${at} must be a task id of the inbox in the prompt`),
    action: Type.Literal(action),
    ...more,
  })
const CurateAction = ruled(
  discriminated(
    Type.Union([
      curateAction('skip'),
      curateAction('discard'),
      curateAction('merge', { intoTaskId: ruled(Type.String(), (_, at) => `${at} must be another task id of the inbox in the prompt`) }),
      curateAction('promote', { nodes: Drafts(LIMITS.nodesPerAction) }),
    ]),
    'action',
  ),
  (v, at) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? `${at}.action must be one of: ${ACTIONS.join(', ')}`
      : `${at} must be an object {taskId, action}`,
)
type CurateAction = { taskId: string; action: (typeof ACTIONS)[number]; intoTaskId?: string; nodes?: Draft[] } & Record<string, unknown>

/** The answer's own contradictions: a task with two actions, a draft id taken twice (over every promote). */
function repeatedIn(actions: CurateAction[]): string | null {
  const tasks = new Set<string>()
  for (const [i, a] of actions.entries()) {
    if (tasks.has(a.taskId)) return `actions[${i}]: ${a.taskId} has more than one action`
    tasks.add(a.taskId)
  }
  return repeatedDraft(actions.flatMap((a, i) => (a.action === 'promote' ? [{ at: `actions[${i}].nodes`, drafts: a.nodes! }] : [])))
}
const Actions = refined(
  ruled(Type.Array(CurateAction, { maxItems: LIMITS.actions }), (v) => {
    if (!Array.isArray(v)) return 'actions is required: an array of {taskId, action} (an empty array skips every task)'
    if (v.length > LIMITS.actions) return `actions has ${v.length} entries; at most ${LIMITS.actions} are allowed`
    return repeatedIn(v) ?? 'actions must be an array of {taskId, action}'
  }),
  (list) => !repeatedIn(list as CurateAction[]),
)

const inboxTasks = overNodes({
  flow: 'task-curate',
  list: inbox,
  step: 'curate',
  limit: LIMITS.inboxTasks,
  none: 'The task inbox is empty: nothing to curate.',
  field: 'actions',
  schema: Actions,
  drafted(ctx, ids, actions) {
    const plan = curatePlan(ctx, ids, actions)
    if (!plan.mutations.length) return { kind: 'done', message: 'Nothing to change: every task stays as it is.' }
    return { kind: 'apply', plan }
  },
})

export const taskCurateFlow: Flow = {
  name: 'task-curate',
  input: NoInput,
  answers: inboxTasks.answers,
  start: inboxTasks.start,

  prompt(ctx, run) {
    const { nodes: tasks, all } = inboxTasks.taken(ctx, run)
    return fill(
      TEMPLATES.get('task-curate')!,
      new Map([
        ['intro', introFor(ctx.projectId)],
        ['tree', treeText(ctx.snap, ctx.projectId, { tasks: false })],
        ['taskCount', String(tasks.length)],
        ['more', all > tasks.length ? `; ${all - tasks.length} more wait for a later run` : ''],
        ['tasks', tasks.map(taskLine).join('\n') || '(every task of this run is gone)'],
        ['conversation', conversation(run.history)],
        ['nodesPerAction', String(LIMITS.nodesPerAction)],
        ['maxActions', String(LIMITS.actions)],
        ['fieldRules', FIELD_RULES],
      ]),
    )
  },

  advance: inboxTasks.advance,
}

function curatePlan(ctx: FlowCtx, ids: string[], checked: Static<typeof Actions>): Plan {
  const actions = checked as CurateAction[]
  const inRun = new Set(ids)
  const byTask = new Map<string, CurateAction & { index: number }>()
  actions.forEach((a, i) => {
    if (!inRun.has(a.taskId)) throw invalid(`actions[${i}].taskId must be a task id of the inbox in the prompt`)
    if (!ctx.snap.byId.get(a.taskId)) throw invalid(`actions[${i}]: ${a.taskId} no longer exists; leave it out`)
    byTask.set(a.taskId, { ...a, index: i })
  })

  const mutations: Record<string, unknown>[] = []
  const source: string[] = []
  const push = (m: Record<string, unknown>, from: string) => {
    mutations.push(m)
    source.push(from)
  }
  const merged = new Map<string, string>() // target → its description so far
  let focusDraft: string | undefined
  for (const [taskId, a] of byTask) {
    const at = `actions[${a.index}]`
    const task = ctx.snap.byId.get(taskId)!
    if (a.action === 'promote') {
      const nodes = asNodes(a.nodes!)
      const first = nodes[0]!
      if (
        first.data &&
        typeof first.data === 'object' &&
        !Array.isArray(first.data) &&
        (first.data as { label?: unknown }).label === undefined
      )
        first.data = { label: task.data?.label, ...(first.data as object) }
      else if (first.data === undefined) first.data = { label: task.data?.label }
      for (const [k, n] of nodes.entries()) push({ action: 'add', node: n }, `${at}.nodes[${k}]`)
      focusDraft ??= first.id as string
    } else if (a.action === 'merge') {
      const into = a.intoTaskId!
      if (!inRun.has(into) || into === taskId) throw invalid(`${at}.intoTaskId must be another task id of the inbox in the prompt`)
      const targetAction = byTask.get(into)?.action ?? 'skip'
      if (targetAction !== 'skip')
        throw invalid(`${at}: ${into} is itself ${DONE_TO.get(targetAction)} in this answer; merge into a task that stays`)
      const target = ctx.snap.byId.get(into)
      if (!target) throw invalid(`${at}: ${into} no longer exists`)
      const before = merged.get(into) ?? String(target.data?.description ?? '')
      const text = [task.data?.label, task.data?.description].filter((s) => typeof s === 'string' && s.trim()).join('\n')
      const description = before ? `${before}\n\n${text}` : text
      merged.set(into, description)
      push({ action: 'update', nodeId: into, data: { description } }, at)
    }
    if (a.action !== 'skip') push({ action: 'delete', nodeId: taskId }, at)
  }
  // the deletes of merged tasks after every update, so a merge chain reads whole texts
  const order = [...mutations.keys()].sort((x, y) => Number(mutations[x]!.action === 'delete') - Number(mutations[y]!.action === 'delete'))
  return {
    mutations: order.map((i) => mutations[i]!),
    source: order.map((i) => source[i]!),
    focusDraft,
    message: (n) => `Curated the inbox: ${n} change(s) applied.`,
  }
}
