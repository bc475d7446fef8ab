import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { tick } from '../src/nodes/classify-loop'
import { startApp, type TestApp } from './helpers'

// self-hosting.md Task classification: a task added without kind is classified asynchronously
// within 5 s (and not lost across a restart); `classify` does it at once. The rules of the
// classifier itself are in nodes.classify.test.ts; this file checks the wiring over HTTP.
const app = await startApp()
afterAll(() => app.close())

const GUIDE = 'http://arbor.test/api/v1/guide'
const MEMO = 'Idea: a dark-mode toggle for the kitchen display'
const URGENT = 'Production is down: payments failing for all customers'
const TODO = 'Update the onboarding email copy'

const mutate = (a: TestApp, body: unknown) => a.call('POST', '/api/v1/mutate', { body })
const addTask = async (a: TestApp, projectId: string, label: string) =>
  (await mutate(a, { action: 'add', projectId, node: { type: 'task', data: { label } } })).body.node
const stored = async (a: TestApp, p: string, id: string) =>
  (await a.call('GET', `/api/v1/nodes?projectId=${p}&type=task`)).body.nodes.find((n: any) => n.id === id)

/** Poll until the task has a kind. The bound is the test's own timeout: the 5 s of the contract. */
async function classified(a: TestApp, p: string, id: string) {
  for (;;) {
    const node = await stored(a, p, id)
    if (node?.data.kind) return node
    await Bun.sleep(50)
  }
}

describe('asynchronous classification', () => {
  // servers with their loops running, started outside the timed tests
  let live: TestApp
  let restarted: { app: TestApp; projectId: string; taskId: string }
  beforeAll(async () => {
    live = await startApp({}, { loops: true })
    const first = await startApp({}, { persist: true }) // no loops: the process "dies" before classifying
    const projectId = await first.project()
    const task = await addTask(first, projectId, MEMO)
    await first.close()
    restarted = { app: await startApp({}, { reopen: first, loops: true }), projectId, taskId: task.id }
  }, 30_000)
  afterAll(async () => {
    await live?.close()
    await restarted?.app.close()
  })

  it('classifies a task added without kind within 5 s, by the running loops', async () => {
    const p = await live.project()
    const task = await addTask(live, p, URGENT)
    expect(task.data).toEqual({ label: URGENT, iteration: 'Later' })
    expect((await classified(live, p, task.id)).data).toEqual({ label: URGENT, iteration: 'Later', kind: 'do-it', urgent: true })
  }, 5000)

  it('classifies a task added just before a restart within 5 s of the server coming back', async () => {
    const { app: second, projectId, taskId } = restarted
    expect((await classified(second, projectId, taskId)).data).toEqual({ label: MEMO, iteration: 'Later', kind: 'memo' })
  }, 5000)

  it('tick classifies every pending task once, sets urgent only on a do-it, and writes node.updated', async () => {
    const p = await app.project()
    const memo = await addTask(app, p, MEMO)
    const urgent = await addTask(app, p, URGENT)
    const todo = await addTask(app, p, TODO)
    expect(await tick(app.deps, new Date())).toBe(3)
    expect((await stored(app, p, memo.id)).data).toEqual({ label: MEMO, iteration: 'Later', kind: 'memo' })
    expect((await stored(app, p, urgent.id)).data).toEqual({ label: URGENT, iteration: 'Later', kind: 'do-it', urgent: true })
    expect((await stored(app, p, todo.id)).data).toEqual({ label: TODO, iteration: 'Later', kind: 'do-it', urgent: false })
    expect(await tick(app.deps, new Date())).toBe(0)
    const events = await app.db.query<{ payload: any }>(
      "select payload from events where project_id = $1 and type = 'node.updated' order by seq",
      [p],
    )
    expect(events.map((e) => [e.payload.node.id, e.payload.node.data.kind])).toEqual([
      [memo.id, 'memo'],
      [urgent.id, 'do-it'],
      [todo.id, 'do-it'],
    ])
  })

  it('leaves alone a task whose kind was set by hand before the loop ran', async () => {
    const p = await app.project()
    const task = await addTask(app, p, URGENT)
    await mutate(app, { action: 'update', projectId: p, nodeId: task.id, data: { kind: 'memo' } })
    await tick(app.deps, new Date())
    expect((await stored(app, p, task.id)).data).toEqual({ label: URGENT, iteration: 'Later', kind: 'memo' })
  })

  it('classifies a task that was deleted before the loop reached it once it is restored', async () => {
    const p = await app.project()
    const task = await addTask(app, p, TODO)
    await mutate(app, { action: 'delete', projectId: p, nodeId: task.id })
    await mutate(app, { action: 'restore', projectId: p, nodeId: task.id })
    expect(await tick(app.deps, new Date())).toBe(1)
    expect((await stored(app, p, task.id)).data).toEqual({ label: TODO, iteration: 'Later', kind: 'do-it', urgent: false })
  })

  it('never classifies goals, needs, approaches or jobs', async () => {
    const p = await app.project()
    await mutate(app, { action: 'add', projectId: p, node: { type: 'goal', data: { label: URGENT } } })
    await tick(app.deps, new Date())
    expect((await app.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes[0].data).toEqual({ label: URGENT })
  })
})

describe('classify action', () => {
  it('classifies a task at once and answers {success, node, _meta}', async () => {
    const p = await app.project()
    const task = await addTask(app, p, URGENT)
    const res = await mutate(app, { action: 'classify', projectId: p, nodeId: task.id })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      success: true,
      node: {
        id: task.id,
        rev: expect.any(String),
        type: 'task',
        parentId: null,
        data: { label: URGENT, iteration: 'Later', kind: 'do-it', urgent: true },
      },
      _meta: {
        _tip: 'Classified as do-it, urgent. Correct it with update data:{kind}.',
        focus: { nodeId: task.id, viewCommand: { projectId: p, command: { type: 'selectNode', nodeId: task.id } } },
      },
    })
    // the background loop has nothing left to do for it
    expect(await tick(app.deps, new Date())).toBe(0)
  })

  it('classifies again on demand, replacing a kind set earlier, and drops urgent on a memo', async () => {
    const p = await app.project()
    const task = await addTask(app, p, MEMO)
    await mutate(app, { action: 'update', projectId: p, nodeId: task.id, data: { kind: 'do-it', urgent: true } })
    const res = await mutate(app, { action: 'classify', projectId: p, nodeId: task.id })
    expect(res.body.node.data).toEqual({ label: MEMO, iteration: 'Later', kind: 'memo' })
    expect(res.body._meta._tip).toBe('Classified as memo. Correct it with update data:{kind}.')
  })

  it('refuses a node that is not a task, an unknown node, and a missing nodeId', async () => {
    const p = await app.project()
    await mutate(app, { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'G' } } })
    const cases: [unknown, string][] = [
      ['goal-1', 'Only tasks are classified; goal-1 is a goal'],
      ['task-9', 'Node with id task-9 not found'],
      [undefined, 'nodeId is required'],
    ]
    for (const [nodeId, message] of cases) {
      const res = await mutate(app, { action: 'classify', projectId: p, nodeId })
      expect(res.status).toBe(400)
      expect(res.body).toEqual({ success: false, errors: [message], _meta: { guide: GUIDE } })
    }
  })

  it('requires projectId like every project-scoped action', async () => {
    // self-hosting.md's readings: 400, as for every project-scoped action (issue 10, defect 6)
    const res = await mutate(app, { action: 'classify', nodeId: 'task-1' })
    expect(res.status).toBe(400)
    expect(res.body.errors).toEqual(['projectId is required: node ids are unique within a project, not across projects'])
  })
})
