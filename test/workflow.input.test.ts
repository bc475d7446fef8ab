import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startApp, type TestApp } from './helpers'
import { expectRetries, nodes, planProject, workflow } from './workflow-fixtures'

/**
 * Every shape rule of a run's input (docs/validation.md: the flow's start input and each signal's
 * answer, checked by the one checker at one point of src/workflow/service.ts) with its message,
 * and the rules that stay in the flows because they read the project or the run. Before a run
 * exists a refusal is `{error}`; after, `{error, retry:true, state}` with the same state.
 */
let app: TestApp
beforeAll(async () => {
  app = await startApp()
})
afterAll(() => app.close())

const draft = { id: 'draft-1', type: 'job', parentId: 'approach-1', data: { label: 'A manager can export the summary as CSV' } }
const node = (i: number) => ({ id: `draft-${i}`, type: 'job', parentId: 'approach-1', data: { label: `n${i}` } })

async function started(projectId: string, flow: string, input?: unknown) {
  const res = await workflow(app, { projectId, action: 'start', flow, ...(input === undefined ? {} : { input }) })
  expect(res.status).toBe(200)
  return res.body.state as string
}

describe('a start', () => {
  it('refuses an unknown flow with its tip, and each flow its own input', async () => {
    const projectId = await planProject(app, { tasks: ['one'] })
    const flow = await workflow(app, { projectId, action: 'start', flow: 7 })
    expect(flow.status).toBe(400)
    expect(flow.body).toEqual({
      error: 'flow must be one of: add, task-curate, phase-assign',
      _meta: { _tip: 'GET /api/v1/workflow describes each flow.', guide: expect.any(String) },
    })
    const cases: [Record<string, unknown>, string][] = [
      [{ flow: 'add', input: '   ' }, 'input is required for add: a short description of the idea, as a string'],
      [{ flow: 'add', input: 42 }, 'input is required for add: a short description of the idea, as a string'],
      [{ flow: 'task-curate', input: 'x'.repeat(4001) }, 'input is 4001 characters; at most 4000 are allowed'],
      [{ flow: 'phase-assign', input: 'x'.repeat(4001) }, 'input is 4001 characters; at most 4000 are allowed'],
    ]
    for (const [extra, error] of cases) {
      const res = await workflow(app, { projectId, action: 'start', ...extra })
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { error, _meta: { guide: expect.any(String) } } })
    }
    // a flow that reads no input takes any, as it always did
    for (const input of [null, 5, 'triage please', { any: 'thing' }]) {
      const res = await workflow(app, { projectId, action: 'start', flow: 'task-curate', input })
      expect(res.status).toBe(200)
    }
  })
})

describe('an advance of add', () => {
  it('refuses each wrong shape of context, message and draftNodes with retry:true and the same state', async () => {
    const projectId = await planProject(app)
    const state = await started(projectId, 'add', 'Export the weekly summary as CSV')
    const cases: [unknown, string][] = [
      [{ signal: 'classified', context: 'job' }, 'context is required: {type, parentId}, e.g. {"type":"job","parentId":"approach-3"}'],
      [
        { signal: 'classified', context: { type: 'epic', parentId: 'approach-1' } },
        'context.type must be one of: goal, need, approach, job, task',
      ],
      [{ signal: 'classified', context: { parentId: 'approach-1' } }, 'context.type must be one of: goal, need, approach, job, task'],
      [{ signal: 'classified', context: { type: 'goal', parentId: 'goal-1' } }, 'context.parentId must be null: a goal has no parent'],
      [{ signal: 'classified', context: { type: 'task', parentId: 3 } }, 'context.parentId must be null: a task has no parent'],
      [
        { signal: 'classified', context: { type: 'job' } },
        'context.parentId is required: a job sits under an approach; give the id of one shown in the prompt',
      ],
      [
        { signal: 'classified', context: { type: 'approach', parentId: '' } },
        'context.parentId is required: an approach sits under a need; give the id of one shown in the prompt',
      ],
      [{ signal: 'confirmed', context: null }, 'context is required: {type, parentId}, e.g. {"type":"job","parentId":"approach-3"}'],
      [
        { signal: 'confirmed', context: { type: 'need', parentId: 'approach-1' } },
        "a need's parent must be a goal; approach-1 is an approach",
      ],
      [{ signal: 'needs_clarification', message: '  \n ' }, 'needs_clarification needs message: the question for the user'],
      [{ signal: 'needs_clarification', message: 7 }, 'message must be a string'],
      [{ signal: 'classified', message: null, context: { type: 'goal' } }, 'message must be a string'],
      [
        { signal: 'draft_ready', draftNodes: { 0: draft } },
        'draftNodes is required: a non-empty array of {id:"draft-…", type, parentId, data:{label}}',
      ],
      [{ signal: 'draft_ready', draftNodes: [draft, null] }, 'draftNodes[1] must be an object {id, type, parentId, data}'],
      [
        { signal: 'draft_ready', draftNodes: [draft, { ...draft, id: 7 }] },
        'draftNodes[1].id must be your own id starting with "draft-", e.g. "draft-2"',
      ],
      [
        { signal: 'draft_ready', draftNodes: [draft, { ...draft, id: 'draft-' }] },
        'draftNodes[1].id must be your own id starting with "draft-", e.g. "draft-2"',
      ],
      [
        { signal: 'draft_ready', draftNodes: [draft, node(2), draft] },
        'draftNodes[2].id draft-1 is used twice; every draft id must be unique',
      ],
    ]
    await expectRetries(app, projectId, state, cases)
    const nextInput = await workflow(app, {
      projectId,
      action: 'advance',
      state,
      response: { signal: 'needs_clarification', message: 'Which one?' },
      nextInput: 5,
    })
    expect({ status: nextInput.status, error: nextInput.body.error, retry: nextInput.body.retry }).toEqual({
      status: 400,
      error: 'nextInput must be a string',
      retry: true,
    })
    expect(await nodes(app, projectId)).toHaveLength(6)
  })

  it('takes a goal without parent, a null nextInput and extra fields, and keeps the rules of the run in the flow', async () => {
    const projectId = await planProject(app)
    const state = await started(projectId, 'add', 'A second product line')
    const classified = await workflow(app, {
      projectId,
      action: 'advance',
      state,
      response: { signal: 'classified', message: 'A goal.', context: { type: 'goal', parentId: null, why: 'new line' }, extra: 1 },
      nextInput: null,
    })
    expect(classified.status).toBe(200)
    expect(classified.body.prompt).toContain('a goal with no parent')
    const confirmed = await workflow(app, { projectId, action: 'advance', state: classified.body.state, response: { signal: 'confirmed' } })
    expect(confirmed.body._meta.step).toBe('draft')
    // the run's step: nothing left to confirm at the draft step
    await expectRetries(app, projectId, confirmed.body.state, [
      [{ signal: 'confirmed' }, 'The placement is already confirmed: answer draft_ready with draftNodes'],
    ])
  })
})

describe('an advance of task-curate', () => {
  it('refuses each wrong shape of actions with retry:true and the same state', async () => {
    const projectId = await planProject(app, { tasks: ['A', 'B', 'C'] })
    const state = await started(projectId, 'task-curate')
    const cases: [unknown, string][] = [
      [
        { signal: 'draft_ready', actions: { taskId: 'task-1' } },
        'actions is required: an array of {taskId, action} (an empty array skips every task)',
      ],
      [{ signal: 'draft_ready' }, 'actions is required: an array of {taskId, action} (an empty array skips every task)'],
      [{ signal: 'draft_ready', actions: ['skip'] }, 'actions[0] must be an object {taskId, action}'],
      [
        { signal: 'draft_ready', actions: [{ taskId: 3, action: 'skip' }] },
        'actions[0].taskId must be a task id of the inbox in the prompt',
      ],
      [{ signal: 'draft_ready', actions: [{ taskId: 'task-1' }] }, 'actions[0].action must be one of: skip, discard, merge, promote'],
      [
        {
          signal: 'draft_ready',
          actions: [
            { taskId: 'task-1', action: 'skip' },
            { taskId: 'task-1', action: 'discard' },
          ],
        },
        'actions[1]: task-1 has more than one action',
      ],
      [
        { signal: 'draft_ready', actions: [{ taskId: 'task-1', action: 'merge' }] },
        'actions[0].intoTaskId must be another task id of the inbox in the prompt',
      ],
      [
        { signal: 'draft_ready', actions: [{ taskId: 'task-1', action: 'merge', intoTaskId: 'task-1' }] },
        'actions[0].intoTaskId must be another task id of the inbox in the prompt',
      ],
      [
        { signal: 'draft_ready', actions: [{ taskId: 'task-1', action: 'promote' }] },
        'actions[0].nodes is required: a non-empty array of {id:"draft-…", type, parentId, data:{label}}',
      ],
      [
        { signal: 'draft_ready', actions: [{ taskId: 'task-1', action: 'promote', nodes: [{ ...node(1), id: 'job-1' }] }] },
        'actions[0].nodes[0].id must be your own id starting with "draft-", e.g. "draft-1"',
      ],
      [
        {
          signal: 'draft_ready',
          actions: [
            { taskId: 'task-1', action: 'promote', nodes: [node(1)] },
            { taskId: 'task-2', action: 'promote', nodes: [node(2), node(1)] },
          ],
        },
        'actions[1].nodes[1].id draft-1 is used twice; every draft id must be unique',
      ],
      [{ signal: 'needs_clarification', message: '' }, 'needs_clarification needs message: the question for the user'],
      [{ signal: 'confirmed' }, 'task-curate answers with signal "draft_ready" and actions (or needs_clarification)'],
    ]
    await expectRetries(app, projectId, state, cases)
    // the project as it is now: a task deleted since the prompt
    await app.call('POST', '/api/v1/mutate', { body: { action: 'delete', projectId, nodeId: 'task-3' } })
    await expectRetries(app, projectId, state, [
      [{ signal: 'draft_ready', actions: [{ taskId: 'task-3', action: 'discard' }] }, 'actions[0]: task-3 no longer exists; leave it out'],
    ])
    // what an action does not take is not read: a skip's nodes
    const skipped = await workflow(app, {
      projectId,
      action: 'advance',
      state,
      response: { signal: 'draft_ready', actions: [{ taskId: 'task-1', action: 'skip', nodes: 'none' }] },
    })
    expect(skipped.status).toBe(200)
    expect(skipped.body.message).toBe('Nothing to change: every task stays as it is.')
    expect((await nodes(app, projectId)).filter((n) => n.type === 'task')).toHaveLength(2)
  })
})

describe('an advance of phase-assign', () => {
  it('refuses each wrong shape of phases with retry:true and the same state', async () => {
    const projectId = await planProject(app)
    const state = await started(projectId, 'phase-assign')
    const cases: [unknown, string][] = [
      [{ signal: 'draft_ready', phases: [] }, 'phases is required: a non-empty array of {name, jobIds:[…]}'],
      [{ signal: 'draft_ready', phases: ['Reports'] }, 'phases[0] must be an object {name, jobIds}'],
      [{ signal: 'draft_ready', phases: [{ name: ' ', jobIds: ['job-1'] }] }, 'phases[0].name is required: a non-empty string'],
      [{ signal: 'draft_ready', phases: [{ name: 5, jobIds: ['job-1'] }] }, 'phases[0].name is required: a non-empty string'],
      [{ signal: 'draft_ready', phases: [{ name: 'x'.repeat(101), jobIds: ['job-1'] }] }, 'phases[0].name must be at most 100 characters'],
      [
        { signal: 'draft_ready', phases: [{ name: ' Backlog ', jobIds: ['job-1'] }] },
        'phases[0].name "Backlog" describes no user value (refused: Later, Backlog, Polish, Catch-all and their variants); name the phase after what users get',
      ],
      [{ signal: 'draft_ready', phases: [{ name: 'Reports' }] }, 'phases[0].jobIds is required: a non-empty array of job ids'],
      [
        { signal: 'draft_ready', phases: [{ name: 'Reports', jobIds: [1] }] },
        'phases[0].jobIds[0] must be a job id from the list in the prompt',
      ],
      [
        {
          signal: 'draft_ready',
          phases: [
            { name: 'Reports', jobIds: ['job-1'] },
            { name: 'Sharing', jobIds: ['job-2', 'job-1'] },
          ],
        },
        'phases[1].jobIds[1]: job-1 is assigned twice',
      ],
      [{ signal: 'needs_clarification' }, 'needs_clarification needs message: the question for the user'],
      [{ signal: 'classified', context: {} }, 'phase-assign answers with signal "draft_ready" and phases (or needs_clarification)'],
    ]
    await expectRetries(app, projectId, state, cases)
    const iterations = await app.call('GET', `/api/v1/iterations?projectId=${projectId}`)
    expect(iterations.body.iterations.map((i: { name: string }) => i.name)).toEqual(['Later'])
  })
})
