import { type Static, Type } from '@sinclair/typebox'
import { invalid } from '../../errors'
import { refined, ruled } from '../../ports/schema-rules'
import { NoInput } from '../input'
import { isNoValuePhase, LIMITS, NO_VALUE_PHASES } from '../model'
import { isOpen, pathOf, treeText, unplannedJobs } from '../project'
import { conversation, fill, introFor, TEMPLATES } from '../prompts'
import { type Flow, type FlowCtx, overNodes, type Plan } from './shared'

/**
 * phase-assign: one step over the open jobs in Later. The answer groups them into themed
 * phases; a name equal to an active iteration (letter case aside) reuses it, any other name
 * creates one. Applied as one batch: addIteration entries, then one update per job.
 */
/** A phase: a name that says what users get, and the jobs it takes. */
const Phase = ruled(
  Type.Object({
    name: refined(
      ruled(Type.String({ pattern: '\\S' }), (v, at) => {
        const name = typeof v === 'string' ? v.trim() : ''
        if (!name) return `${at} is required: a non-empty string`
        if (name.length > LIMITS.phaseName) return `${at} must be at most ${LIMITS.phaseName} characters`
        return `${at} "${name}" describes no user value (refused: ${NO_VALUE_PHASES.join(', ')} and their variants); name the phase after what users get`
      }),
      (name) => name.trim().length <= LIMITS.phaseName && !isNoValuePhase(name.trim()),
    ),
    jobIds: ruled(
      Type.Array(
        ruled(Type.String(), (_, at) => `${at} must be a job id from the list in the prompt`),
        { minItems: 1 },
      ),
      (_, at) => `${at} is required: a non-empty array of job ids`,
    ),
  }),
  (_, at) => `${at} must be an object {name, jobIds}`,
)
type Phase = Static<typeof Phase>

/** The answer's own contradictions: too many job ids in all, a name used twice (letter case aside), a job in two phases. */
function overOrRepeated(phases: Phase[]): string | null {
  const total = phases.reduce((n, p) => n + p.jobIds.length, 0)
  if (total > LIMITS.assignments) return `phases assign ${total} job ids; at most ${LIMITS.assignments} are allowed`
  const names = new Set<string>()
  const assigned = new Set<string>()
  for (const [i, p] of phases.entries()) {
    const name = p.name.trim()
    if (names.has(name.toLowerCase())) return `phases[${i}].name "${name}" is used by another phase of this answer`
    names.add(name.toLowerCase())
    for (const [k, id] of p.jobIds.entries()) {
      if (assigned.has(id)) return `phases[${i}].jobIds[${k}]: ${id} is assigned twice`
      assigned.add(id)
    }
  }
  return null
}
const Phases = refined(
  ruled(Type.Array(Phase, { minItems: 1, maxItems: LIMITS.phases }), (v) =>
    Array.isArray(v) && v.length > LIMITS.phases
      ? `phases has ${v.length} entries; at most ${LIMITS.phases} are allowed`
      : (Array.isArray(v) && v.length && overOrRepeated(v)) || 'phases is required: a non-empty array of {name, jobIds:[…]}',
  ),
  (list) => !overOrRepeated(list),
)

const later = overNodes({
  flow: 'phase-assign',
  list: unplannedJobs,
  step: 'assign',
  limit: LIMITS.laterJobs,
  none: 'No open job waits in Later: nothing to plan.',
  field: 'phases',
  schema: Phases,
  drafted: (ctx, ids, phases) => ({ kind: 'apply', plan: phasePlan(ctx, ids, phases) }),
})

export const phaseAssignFlow: Flow = {
  name: 'phase-assign',
  input: NoInput,
  answers: later.answers,
  start: later.start,

  prompt(ctx, run) {
    const { nodes: jobs, all } = later.taken(ctx, run)
    const counts = new Map<string, number>()
    for (const n of ctx.snap.nodes)
      if ((n.type === 'job' || n.type === 'task') && n.data?.iteration)
        counts.set(n.data.iteration, (counts.get(n.data.iteration) ?? 0) + 1)
    const iterations = ctx.snap.iterations
      .map(
        (i) =>
          `- ${JSON.stringify(i.name)}: ${i.status}${i.system ? ', system (not a phase)' : ''}, ${counts.get(i.name) ?? 0} jobs and tasks`,
      )
      .join('\n')
    const done = ctx.snap.iterations.filter((i) => i.status === 'done').map((i) => JSON.stringify(i.name))
    return fill(
      TEMPLATES.get('phase-assign')!,
      new Map([
        ['intro', introFor(ctx.projectId)],
        ['tree', treeText(ctx.snap, ctx.projectId, { tasks: false })],
        ['iterations', iterations],
        ['jobCount', String(jobs.length)],
        ['more', all > jobs.length ? `; ${all - jobs.length} more wait for a later run` : ''],
        ['jobs', jobs.map((j) => `- ${j.id} ${JSON.stringify(String(j.data?.label ?? ''))} — ${pathOf(ctx.snap, j)}`).join('\n')],
        ['conversation', conversation(run.history)],
        ['nameChars', String(LIMITS.phaseName)],
        ['doneIterations', done.length ? `done: ${done.join(', ')}` : 'none is done yet'],
        ['maxPhases', String(LIMITS.phases)],
        ['maxAssignments', String(LIMITS.assignments)],
      ]),
    )
  },

  advance: later.advance,
}

function phasePlan(ctx: FlowCtx, ids: string[], phases: Phase[]): Plan {
  const inRun = new Set(ids)
  const active = new Map(ctx.snap.iterations.filter((i) => i.status === 'active').map((i) => [i.name.toLowerCase(), i.name]))
  const done = new Set(ctx.snap.iterations.filter((i) => i.status === 'done').map((i) => i.name.toLowerCase()))
  const creates: Record<string, unknown>[] = []
  const createSource: string[] = []
  const updates: Record<string, unknown>[] = []
  const updateSource: string[] = []
  phases.forEach((p, i) => {
    const at = `phases[${i}]`
    const name = p.name.trim()
    if (done.has(name.toLowerCase())) throw invalid(`${at}.name "${name}" is a done iteration; choose another name`)
    const existing = active.get(name.toLowerCase())
    const iteration = existing ?? name
    if (!existing) {
      creates.push({ action: 'addIteration', iteration: { name } })
      createSource.push(at)
    }
    p.jobIds.forEach((id, k) => {
      if (!inRun.has(id)) throw invalid(`${at}.jobIds[${k}] must be a job id from the list in the prompt`)
      const job = ctx.snap.byId.get(id)
      if (!job || !isOpen(job) || (job.data?.iteration ?? 'Later') !== 'Later')
        throw invalid(`${at}.jobIds[${k}]: ${id} is no longer an open job in Later; leave it out`)
      updates.push({ action: 'update', nodeId: id, data: { iteration } })
      updateSource.push(`${at}.jobIds[${k}]`)
    })
  })
  return {
    mutations: [...creates, ...updates],
    source: [...createSource, ...updateSource],
    focusDraft: updates[0]?.nodeId as string | undefined,
    message: (n) => `Planned ${updates.length} job(s) in ${phases.length} phase(s): ${n} change(s) applied.`,
  }
}
