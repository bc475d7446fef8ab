import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startApp, type TestApp } from './helpers'
import { expectRetries, nodes, planProject, workflow } from './workflow-fixtures'

let app: TestApp
beforeAll(async () => {
  app = await startApp()
})
afterAll(() => app.close())

const TIP =
  'Promotions and discards are proposals: show them to the user first and submit only the choices they confirm; set the rest to skip.'

async function startCurate(projectId: string) {
  const res = await workflow(app, { projectId, action: 'start', flow: 'task-curate' })
  expect(res.status).toBe(200)
  return res.body
}

describe('task-curate flow', () => {
  it('ends at once with done:true and an empty changeset when the inbox is empty', async () => {
    const projectId = await planProject(app)
    expect(await startCurate(projectId)).toEqual({
      done: true,
      changeset: [],
      focus: null,
      message: 'The task inbox is empty: nothing to curate.',
      _meta: { viewCommand: null, _tip: TIP },
    })
  })

  it('starts with the inbox in the prompt and the confirm-first tip in _meta._tip', async () => {
    const projectId = await planProject(app, { tasks: ['Call the printer vendor', 'Fix typo on pricing page'] })
    const started = await startCurate(projectId)
    expect(started).toEqual({
      done: false,
      prompt: expect.any(String),
      state: expect.any(String),
      _meta: { flow: 'task-curate', step: 'curate', _tip: TIP },
    })
    expect(started.prompt).toContain('- task-1 "Call the printer vendor"')
    expect(started.prompt).toContain('- task-2 "Fix typo on pricing page"')
    expect(started.prompt).toContain('At most 200 actions')
  })

  it('applies merge, promote, discard and skip in one batch, with a changeset that can revert each', async () => {
    const projectId = await planProject(app, {
      tasks: ['Export to CSV', 'CSV export please', 'Weekly digest by Slack', 'Old idea', 'Keep me'],
    })
    const { state } = await startCurate(projectId)
    const before = new Map((await nodes(app, projectId)).map((n) => [n.id, n]))
    const res = await workflow(app, {
      projectId,
      action: 'advance',
      state,
      response: {
        signal: 'draft_ready',
        message: 'Merged the CSV duplicates, promoted the digest, discarded the old idea.',
        actions: [
          { taskId: 'task-2', action: 'merge', intoTaskId: 'task-1' },
          { taskId: 'task-3', action: 'promote', nodes: [{ id: 'draft-1', type: 'job', parentId: 'approach-2', data: {} }] },
          { taskId: 'task-4', action: 'discard' },
          { taskId: 'task-5', action: 'skip' },
        ],
      },
    })
    expect(res.status).toBe(200)
    const t1 = before.get('task-1')!
    const merged = { ...t1.data, description: 'CSV export please' }
    const view = { projectId, command: { type: 'selectNode', nodeId: 'job-3' } }
    expect(res.body).toEqual({
      done: true,
      changeset: [
        { action: 'update', nodeId: 'task-1', type: 'task', before: t1, after: { ...t1, rev: expect.any(String), data: merged } },
        {
          action: 'add',
          nodeId: 'job-3',
          type: 'job',
          before: null,
          after: {
            id: 'job-3',
            rev: expect.any(String),
            type: 'job',
            parentId: 'approach-2',
            data: { label: 'Weekly digest by Slack', iteration: 'Later' },
          },
        },
        { action: 'delete', nodeId: 'task-2', type: 'task', before: before.get('task-2'), after: null },
        { action: 'delete', nodeId: 'task-3', type: 'task', before: before.get('task-3'), after: null },
        { action: 'delete', nodeId: 'task-4', type: 'task', before: before.get('task-4'), after: null },
      ],
      focus: 'job-3',
      message: 'Curated the inbox: 5 change(s) applied.',
      _meta: { viewCommand: view, focus: { nodeId: 'job-3', viewCommand: view }, _tip: expect.any(String) },
    })
    const ids = (await nodes(app, projectId)).map((n) => n.id)
    expect(ids.filter((id) => id.startsWith('task-'))).toEqual(['task-1', 'task-5'])
  })

  it('ends done:true with an empty changeset when every task is skipped', async () => {
    const projectId = await planProject(app, { tasks: ['A', 'B'] })
    const { state } = await startCurate(projectId)
    const res = await workflow(app, {
      projectId,
      action: 'advance',
      state,
      response: { signal: 'draft_ready', actions: [{ taskId: 'task-1', action: 'skip' }] },
    })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      done: true,
      changeset: [],
      focus: null,
      message: 'Nothing to change: every task stays as it is.',
      _meta: { viewCommand: null },
    })
  })

  it('refuses out-of-limit and inconsistent proposals with 400 retry:true and the state unchanged', async () => {
    const projectId = await planProject(app, { tasks: ['A', 'B', 'C'] })
    const { state } = await startCurate(projectId)
    const node = (i: number) => ({ id: `draft-${i}`, type: 'job', parentId: 'approach-1', data: { label: `n${i}` } })
    const cases: [unknown, string][] = [
      [
        { signal: 'draft_ready', actions: Array.from({ length: 201 }, () => ({ taskId: 'task-1', action: 'skip' })) },
        'actions has 201 entries; at most 200 are allowed',
      ],
      [
        { signal: 'draft_ready', actions: [{ taskId: 'task-1', action: 'promote', nodes: Array.from({ length: 11 }, (_, i) => node(i)) }] },
        'actions[0].nodes has 11 nodes; at most 10 are allowed',
      ],
      [
        { signal: 'draft_ready', actions: [{ taskId: 'task-9', action: 'discard' }] },
        'actions[0].taskId must be a task id of the inbox in the prompt',
      ],
      [
        { signal: 'draft_ready', actions: [{ taskId: 'task-1', action: 'archive' }] },
        'actions[0].action must be one of: skip, discard, merge, promote',
      ],
      [
        {
          signal: 'draft_ready',
          actions: [
            { taskId: 'task-1', action: 'merge', intoTaskId: 'task-2' },
            { taskId: 'task-2', action: 'discard' },
          ],
        },
        'actions[0]: task-2 is itself discarded in this answer; merge into a task that stays',
      ],
      [
        { signal: 'draft_ready', actions: [{ taskId: 'task-1', action: 'promote', nodes: [{ ...node(1), parentId: 'goal-1' }] }] },
        "actions[0].nodes[0]: A job's parent must be an approach; goal-1 is a goal",
      ],
      [{ signal: 'classified' }, 'task-curate answers with signal "draft_ready" and actions (or needs_clarification)'],
    ]
    await expectRetries(app, projectId, state, cases)
    expect((await nodes(app, projectId)).filter((n) => n.type === 'task')).toHaveLength(3)
  })

  it('promotes with 10 nodes, the most one action may create, and answers alreadyApplied to a replay', async () => {
    const projectId = await planProject(app, { tasks: ['Big theme'] })
    const { state } = await startCurate(projectId)
    const promoted = [
      { id: 'draft-need', type: 'need', parentId: 'goal-1', data: {} },
      { id: 'draft-bet', type: 'approach', parentId: 'draft-need', data: { label: 'A bet' } },
      ...Array.from({ length: 8 }, (_, i) => ({ id: `draft-${i}`, type: 'job', parentId: 'draft-bet', data: { label: `Job ${i}` } })),
    ]
    const body = {
      projectId,
      action: 'advance',
      state,
      response: { signal: 'draft_ready', actions: [{ taskId: 'task-1', action: 'promote', nodes: promoted }] },
    }
    const res = await workflow(app, body)
    expect(res.status).toBe(200)
    expect(res.body.changeset.map((c: any) => `${c.action} ${c.nodeId}`)).toEqual([
      'add need-2',
      'add approach-3',
      ...Array.from({ length: 8 }, (_, i) => `add job-${3 + i}`),
      'delete task-1',
    ])
    expect(res.body.changeset[0].after.data).toEqual({ label: 'Big theme' })
    const replay = await workflow(app, body)
    expect(replay.status).toBe(500)
    expect(replay.body.alreadyApplied).toBe(true)
    expect(await nodes(app, projectId)).toHaveLength(16)
  })
})
