import { BadResponse, isNoValuePhase, LIMITS, NO_VALUE_PHASES } from '../model'
import { isOpen, pathOf, treeText, unplannedJobs } from '../project'
import { conversation, fill, introFor, TEMPLATES } from '../prompts'
import { type Flow, type FlowCtx, overNodes, type Plan } from './shared'

/**
 * phase-assign: one step over the open jobs in Later. The answer groups them into themed
 * phases; a name equal to an active iteration (letter case aside) reuses it, any other name
 * creates one. Applied as one batch: addIteration entries, then one update per job.
 */
const later = overNodes({
  flow: 'phase-assign',
  list: unplannedJobs,
  step: 'assign',
  limit: LIMITS.laterJobs,
  none: 'No open job waits in Later: nothing to plan.',
  field: 'phases',
  drafted: (ctx, ids, phases) => ({ kind: 'apply', plan: phasePlan(ctx, ids, phases) }),
})

export const phaseAssignFlow: Flow = {
  name: 'phase-assign',

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

function phasePlan(ctx: FlowCtx, ids: string[], phases: unknown): Plan {
  if (!Array.isArray(phases) || phases.length === 0) throw new BadResponse('phases is required: a non-empty array of {name, jobIds:[…]}')
  if (phases.length > LIMITS.phases) throw new BadResponse(`phases has ${phases.length} entries; at most ${LIMITS.phases} are allowed`)
  const total = phases.reduce((n, p) => n + (Array.isArray(p?.jobIds) ? p.jobIds.length : 0), 0)
  if (total > LIMITS.assignments) throw new BadResponse(`phases assign ${total} job ids; at most ${LIMITS.assignments} are allowed`)
  const inRun = new Set(ids)
  const active = new Map(ctx.snap.iterations.filter((i) => i.status === 'active').map((i) => [i.name.toLowerCase(), i.name]))
  const done = new Set(ctx.snap.iterations.filter((i) => i.status === 'done').map((i) => i.name.toLowerCase()))
  const names = new Set<string>()
  const assigned = new Set<string>()
  const creates: Record<string, unknown>[] = []
  const createSource: string[] = []
  const updates: Record<string, unknown>[] = []
  const updateSource: string[] = []
  phases.forEach((p, i) => {
    const at = `phases[${i}]`
    if (!p || typeof p !== 'object' || Array.isArray(p)) throw new BadResponse(`${at} must be an object {name, jobIds}`)
    const raw = (p as Record<string, unknown>).name
    if (typeof raw !== 'string' || !raw.trim()) throw new BadResponse(`${at}.name is required: a non-empty string`)
    const name = raw.trim()
    if (name.length > LIMITS.phaseName) throw new BadResponse(`${at}.name must be at most ${LIMITS.phaseName} characters`)
    if (isNoValuePhase(name))
      throw new BadResponse(
        `${at}.name "${name}" describes no user value (refused: ${NO_VALUE_PHASES.join(', ')} and their variants); name the phase after what users get`,
      )
    const key = name.toLowerCase()
    if (names.has(key)) throw new BadResponse(`${at}.name "${name}" is used by another phase of this answer`)
    names.add(key)
    if (done.has(key)) throw new BadResponse(`${at}.name "${name}" is a done iteration; choose another name`)
    const existing = active.get(key)
    const iteration = existing ?? name
    if (!existing) {
      creates.push({ action: 'addIteration', iteration: { name } })
      createSource.push(at)
    }
    const jobIds = (p as Record<string, unknown>).jobIds
    if (!Array.isArray(jobIds) || jobIds.length === 0) throw new BadResponse(`${at}.jobIds is required: a non-empty array of job ids`)
    jobIds.forEach((id, k) => {
      if (typeof id !== 'string' || !inRun.has(id)) throw new BadResponse(`${at}.jobIds[${k}] must be a job id from the list in the prompt`)
      if (assigned.has(id)) throw new BadResponse(`${at}.jobIds[${k}]: ${id} is assigned twice`)
      assigned.add(id)
      const job = ctx.snap.byId.get(id)
      if (!job || !isOpen(job) || (job.data?.iteration ?? 'Later') !== 'Later')
        throw new BadResponse(`${at}.jobIds[${k}]: ${id} is no longer an open job in Later; leave it out`)
      updates.push({ action: 'update', nodeId: id, data: { iteration } })
      updateSource.push(`${at}.jobIds[${k}]`)
    })
  })
  return {
    mutations: [...creates, ...updates],
    source: [...createSource, ...updateSource],
    focusDraft: updates[0]?.nodeId as string | undefined,
    message: (n) => `Planned ${assigned.size} job(s) in ${phases.length} phase(s): ${n} change(s) applied.`,
  }
}
