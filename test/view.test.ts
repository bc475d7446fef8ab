import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { VIEW_COMMAND_TYPES } from '../src/view/model'
import { startApp, type TestApp } from './helpers'

/** POST /view-command and GET /view-state (api.md), and the app's own queue calls. */
let app: TestApp
let p: string
let ids: Record<string, string>
beforeAll(async () => {
  app = await startApp()
  p = await app.project()
  const res = await app.call('POST', '/api/v1/mutate', {
    body: {
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'addIteration', iteration: { name: 'Sprint 1' } },
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Get paid faster' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Payers settle online' } } },
        { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Pay by link' } } },
        {
          action: 'add',
          node: { id: 'draft-j', type: 'job', parentId: 'draft-a', data: { label: 'A payer pays by card', iteration: 'Sprint 1' } },
        },
        { action: 'add', node: { id: 'draft-t', type: 'task', data: { label: 'Call the bank' } } },
      ],
    },
  })
  ids = res.body.idMap
}, 60_000)
afterAll(() => app.close())

const send = (command: unknown, projectId = p, key?: string) =>
  app.call('POST', '/api/v1/view-command', { body: { projectId, command }, key })
const queue = (after = 0) => app.call('GET', `/api/v1/view/commands?projectId=${p}&after=${after}&wait=0`)

describe('GET /view-state before any client', () => {
  it('answers the defaults', async () => {
    const q = await app.project()
    const res = await app.call('GET', `/api/v1/view-state?projectId=${q}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      view_mode: 'tree',
      selected_iteration: null,
      expanded_nodes: [],
      focused_goals: [],
      selected_node: null,
      updated_at: null,
      last_applied_command: null,
      command_seq: 0,
      clients_connected: false,
      last_client_seen: null,
      _meta: { _tip: `No app is connected: open http://arbor.test/app?projectId=${q} to apply queued commands.` },
    })
  })
})

describe('POST /view-command', () => {
  it('refuses an unknown or missing type with Invalid command and the valid types', async () => {
    for (const command of [{ type: 'spin' }, { type: 'constructor' }, undefined, 'selectNode', { nodeId: 'x' }]) {
      const res = await send(command)
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: { error: 'Invalid command', validTypes: [...VIEW_COMMAND_TYPES] },
      })
    }
  })

  it('refuses setViewMode without a valid mode', async () => {
    for (const command of [{ type: 'setViewMode', mode: 'globe' }, { type: 'setViewMode' }, { type: 'setViewMode', mode: null }]) {
      const res = await send(command)
      expect({ command, status: res.status, body: res.body }).toEqual({
        command,
        status: 400,
        body: { error: 'Invalid command', message: 'setViewMode needs mode: tree or matrix', validTypes: [...VIEW_COMMAND_TYPES] },
      })
    }
  })

  it('answers 200 success:false with a tip for a target that does not resolve, and queues nothing', async () => {
    const cases = [
      { type: 'selectNode', nodeId: 'goal-999' },
      { type: 'zoomToNode', nodeId: '' },
      { type: 'expandNode' },
      { type: 'expandAll', nodeId: 'job-999' },
      { type: 'collapseNode', nodeId: 'task-999' },
      { type: 'selectIteration', iterationName: 'Nope' },
      { type: 'selectIteration', iterationName: null },
      { type: 'selectIteration', iterationName: '' },
      { type: 'focusGoals', goalIds: [] },
      { type: 'focusGoals', goalIds: null },
      { type: 'focusGoals', goalIds: ['need-1'] },
    ]
    const before = (await queue()).body.commands.length
    for (const command of cases) {
      const res = await send(command)
      expect({ status: res.status, success: res.body.success, commandId: res.body.commandId, command: res.body.command }).toEqual({
        status: 200,
        success: false,
        commandId: null,
        command,
      })
      expect(res.body._meta._tip).toEqual(expect.any(String))
    }
    expect((await queue()).body.commands.length).toBe(before)
  })

  it('selects a done iteration too: it exists, and the matrix shows it while selected', async () => {
    const q = await app.project()
    await app.call('POST', '/api/v1/mutate', {
      body: { action: 'addIteration', projectId: q, iteration: { name: 'Sprint 0', status: 'done' } },
    })
    const res = await send({ type: 'selectIteration', iterationName: 'Sprint 0' }, q)
    expect({ status: res.status, success: res.body.success, command: res.body.command }).toEqual({
      status: 200,
      success: true,
      command: { type: 'selectIteration', iterationName: 'Sprint 0' },
    })
  })

  it('queues every command type with increasing ids, and switches to matrix for jobs and tasks unless told not to', async () => {
    const commands: [unknown, Record<string, unknown>][] = [
      [
        { type: 'setViewMode', mode: 'matrix' },
        { type: 'setViewMode', mode: 'matrix' },
      ],
      [
        { type: 'selectIteration', iterationName: 'Sprint 1' },
        { type: 'selectIteration', iterationName: 'Sprint 1' },
      ],
      [
        { type: 'zoomToNode', nodeId: ids['draft-j'] },
        { type: 'zoomToNode', nodeId: ids['draft-j'], switchTo: 'matrix' },
      ],
      [
        { type: 'selectNode', nodeId: ids['draft-t'] },
        { type: 'selectNode', nodeId: ids['draft-t'], switchTo: 'matrix' },
      ],
      [
        { type: 'selectNode', nodeId: ids['draft-j'], autoSwitch: false },
        { type: 'selectNode', nodeId: ids['draft-j'], autoSwitch: false },
      ],
      [
        { type: 'selectNode', nodeId: ids['draft-g'] },
        { type: 'selectNode', nodeId: ids['draft-g'] },
      ],
      [{ type: 'selectNode' }, { type: 'selectNode' }],
      [
        { type: 'expandNode', nodeId: ids['draft-g'] },
        { type: 'expandNode', nodeId: ids['draft-g'] },
      ],
      [
        { type: 'expandAll', nodeId: ids['draft-g'] },
        { type: 'expandAll', nodeId: ids['draft-g'] },
      ],
      [
        { type: 'collapseNode', nodeId: ids['draft-n'] },
        { type: 'collapseNode', nodeId: ids['draft-n'] },
      ],
      [
        { type: 'focusGoals', goalIds: [ids['draft-g']] },
        { type: 'focusGoals', goalIds: [ids['draft-g']] },
      ],
    ]
    let last = 0
    for (const [command, queued] of commands) {
      const res = await send(command)
      expect(res.status).toBe(200)
      expect(res.body.success).toBe(true)
      expect(res.body.command).toEqual(queued)
      expect(res.body.commandId).toBeGreaterThan(last)
      last = res.body.commandId
    }
    const pending = (await queue()).body.commands
    expect(pending.map((c: any) => c.type)).toEqual(commands.map(([c]) => (c as any).type))
    expect(pending.at(-1).id).toBe(last)
  })

  it("accepts the viewCommand of an add's _meta.focus unchanged", async () => {
    const added = await app.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Focus me' } } },
    })
    const res = await app.call('POST', '/api/v1/view-command', { body: added.body._meta.focus.viewCommand })
    expect({ status: res.status, success: res.body.success }).toEqual({ status: 200, success: true })
  })

  it('answers on the legacy path with Deprecation and a Link to /api/v1', async () => {
    const res = await app.call('POST', '/api/view-command', { body: { projectId: p, command: { type: 'setViewMode', mode: 'tree' } } })
    expect(res.status).toBe(200)
    expect(res.headers.get('deprecation')).toBe('true')
    expect(res.headers.get('link')).toBe('<http://arbor.test/api/v1/view-command>; rel="successor-version"')
    const st = await app.call('GET', `/api/view-state?projectId=${p}`)
    expect(st.status).toBe(200)
    expect(st.headers.get('deprecation')).toBe('true')
    expect(st.headers.get('link')).toBe('<http://arbor.test/api/v1/view-state>; rel="successor-version"')
    expect(st.body.command_seq).toEqual((await app.call('GET', `/api/v1/view-state?projectId=${p}`)).body.command_seq)
  })

  it('refuses a project the key cannot reach', async () => {
    const other = await app.user({ tier: 'team' })
    const res = await send({ type: 'setViewMode', mode: 'tree' }, p, other.key)
    expect({ status: res.status, error: res.body.error }).toEqual({ status: 403, error: 'project_access_denied' })
    const st = await app.call('GET', `/api/v1/view-state?projectId=${p}`, { key: other.key })
    expect(st.status).toBe(403)
  })
})

describe('a client applying the queue', () => {
  it('reads queued commands in order, reports what it shows, and GET /view-state reads it back', async () => {
    const q = await app.project()
    const goal = (
      await app.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId: q, node: { type: 'goal', data: { label: 'G' } } } })
    ).body.node.id
    const a = await app.call('POST', '/api/v1/view-command', { body: { projectId: q, command: { type: 'expandNode', nodeId: goal } } })
    const b = await app.call('POST', '/api/v1/view-command', { body: { projectId: q, command: { type: 'selectNode', nodeId: goal } } })
    expect(a.body._meta._tip).toStartWith('No app is connected')
    const polled = await app.call('GET', `/api/v1/view/commands?projectId=${q}&wait=0`)
    expect(polled.body.commands.map((c: any) => [c.id, c.type])).toEqual([
      [a.body.commandId, 'expandNode'],
      [b.body.commandId, 'selectNode'],
    ])
    const reported = await app.call('POST', '/api/v1/view/report', {
      body: {
        projectId: q,
        applied: { id: b.body.commandId, type: 'selectNode' },
        state: { view_mode: 'tree', selected_iteration: null, expanded_nodes: [goal], focused_goals: [], selected_node: goal },
      },
    })
    expect(reported.status).toBe(200)
    const st = await app.call('GET', `/api/v1/view-state?projectId=${q}`)
    expect(st.body).toEqual({
      view_mode: 'tree',
      selected_iteration: null,
      expanded_nodes: [goal],
      focused_goals: [],
      selected_node: goal,
      updated_at: expect.any(String),
      last_applied_command: { id: b.body.commandId, type: 'selectNode', at: expect.any(String) },
      command_seq: b.body.commandId,
      clients_connected: true,
      last_client_seen: expect.any(String),
      _meta: {},
    })
    // applied commands leave the queue; an older report never moves the applied id back
    expect((await app.call('GET', `/api/v1/view/commands?projectId=${q}&wait=0`)).body.commands).toEqual([])
    await app.call('POST', '/api/v1/view/report', {
      body: {
        projectId: q,
        applied: { id: a.body.commandId, type: 'expandNode' },
        state: { view_mode: 'tree', selected_iteration: null, expanded_nodes: [], focused_goals: [], selected_node: null },
      },
    })
    expect((await app.call('GET', `/api/v1/view-state?projectId=${q}`)).body.command_seq).toBe(b.body.commandId)
    const c = await app.call('POST', '/api/v1/view-command', { body: { projectId: q, command: { type: 'setViewMode', mode: 'matrix' } } })
    expect(c.body._meta._tip).toStartWith('A connected app applies it')
  })

  it('waits for a command when asked to, and answers as soon as one arrives', async () => {
    const q = await app.project()
    const waiting = app.call('GET', `/api/v1/view/commands?projectId=${q}&wait=5000`)
    // the poll is waiting once it holds a waiter
    for (const end = Date.now() + 10_000; app.deps.waiters.size() === 0 && Date.now() < end; ) await Bun.sleep(5)
    const sent = await app.call('POST', '/api/v1/view-command', {
      body: { projectId: q, command: { type: 'setViewMode', mode: 'matrix' } },
    })
    const got = await waiting
    expect(got.body.commands.map((c: any) => c.id)).toEqual([sent.body.commandId])
  })

  it('refuses a bad cursor or wait with 400', async () => {
    expect((await app.call('GET', `/api/v1/view/commands?projectId=${p}&after=-1`)).status).toBe(400)
    expect((await app.call('GET', `/api/v1/view/commands?projectId=${p}&wait=15001`)).status).toBe(400)
  })
})

describe('tiers (has_realtime of GET /tier-status)', () => {
  const calls = (projectId: string, key: string) => [
    app.call('POST', '/api/v1/view-command', { key, body: { projectId, command: { type: 'setViewMode', mode: 'matrix' } } }),
    app.call('GET', `/api/v1/view-state?projectId=${projectId}`, { key }),
    app.call('GET', `/api/v1/view/commands?projectId=${projectId}&wait=0`, { key }),
    app.call('POST', '/api/v1/view/report', {
      key,
      body: {
        projectId,
        state: { view_mode: 'tree', selected_iteration: null, expanded_nodes: [], focused_goals: [], selected_node: null },
      },
    }),
  ]

  it('refuses the canvas to a free plan on its own project with 403 realtime_unavailable', async () => {
    const free = await app.user({ tier: 'free' })
    expect((await app.call('GET', '/api/v1/tier-status', { key: free.key })).body.has_realtime).toBe(false)
    const q = await app.project(undefined, free.key)
    for (const res of await Promise.all(calls(q, free.key)))
      expect({ status: res.status, body: res.body }).toEqual({
        status: 403,
        body: {
          error: 'realtime_unavailable',
          message: 'The live canvas and view commands need the Builder or Team plan (has_realtime in GET /tier-status)',
        },
      })
    // a lapsed builder reports free, and is refused the same way
    const lapsed = await app.user({ tier: 'builder', lapsed: true })
    const r = await app.project(undefined, lapsed.key)
    expect((await Promise.all(calls(r, lapsed.key))).map((res) => res.status)).toEqual([403, 403, 403, 403])
  })

  it('gives it to builder and team plans, and to every member of a team-owned project', async () => {
    const builder = await app.user({ tier: 'builder' })
    const q = await app.project(undefined, builder.key)
    expect((await Promise.all(calls(q, builder.key))).map((res) => res.status)).toEqual([200, 200, 200, 200])
    const member = await app.user({ tier: 'free' })
    const r = await app.project()
    expect((await app.call('POST', '/api/v1/members', { body: { projectId: r, userId: member.id } })).status).toBe(201)
    expect((await Promise.all(calls(r, member.key))).map((res) => res.status)).toEqual([200, 200, 200, 200])
  })

  it('refuses a strategist key with the REST tier message, and a project the key cannot reach', async () => {
    const strategist = await app.user({ tier: 'strategist' })
    for (const res of await Promise.all(calls(p, strategist.key))) expect(res.status).toBe(403)
    const stranger = await app.user({ tier: 'team' })
    for (const res of await Promise.all(calls(p, stranger.key)))
      expect(res.body).toEqual({ error: 'project_access_denied', message: 'API key does not have access to this project' })
  })
})

describe("the app's long poll follows the tree", () => {
  it('answers with a revision, and at once when the tree changes after it', async () => {
    const q = await app.project()
    const first = await app.call('GET', `/api/v1/view/commands?projectId=${q}&wait=0`)
    expect(first.body).toEqual({ commands: [], revision: expect.any(String) })
    // nothing changed: the poll waits its whole time and answers the same revision
    const idle = await app.call('GET', `/api/v1/view/commands?projectId=${q}&wait=300&revision=${first.body.revision}`)
    expect(idle.body).toEqual({ commands: [], revision: first.body.revision })
    const started = Date.now()
    const waiting = app.call('GET', `/api/v1/view/commands?projectId=${q}&wait=8000&revision=${first.body.revision}`)
    for (const end = Date.now() + 10_000; app.deps.waiters.size() === 0 && Date.now() < end; ) await Bun.sleep(5)
    await app.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId: q, node: { type: 'goal', data: { label: 'New goal' } } } })
    const changed = await waiting
    expect(changed.body.commands).toEqual([])
    expect(changed.body.revision).not.toBe(first.body.revision)
    expect(Date.now() - started).toBeLessThan(8000) // it did not wait out its time
    // the revision is the events feed's cursor: nothing newer after it
    const events = await app.call('GET', `/api/v1/events?projectId=${q}&after=${changed.body.revision}`)
    expect(events.body.events).toEqual([])
  })
})

describe('a view per project: app (the canvas) and chat (the plan in an MCP host)', () => {
  it('keeps a queue and a state per view: a command for one is applied and confirmed by that one only', async () => {
    const q = await app.project()
    const goal = (
      await app.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId: q, node: { type: 'goal', data: { label: 'G' } } } })
    ).body.node.id
    const chat = await app.call('POST', '/api/v1/view-command', {
      body: { projectId: q, view: 'chat', command: { type: 'selectNode', nodeId: goal } },
    })
    const forApp = await app.call('POST', '/api/v1/view-command', { body: { projectId: q, command: { type: 'expandNode', nodeId: goal } } })
    // each view numbers its own commands
    expect([chat.body.commandId, forApp.body.commandId]).toEqual([1, 1])
    const chatQueue = await app.call('GET', `/api/v1/view/commands?projectId=${q}&view=chat&wait=0`)
    const appQueue = await app.call('GET', `/api/v1/view/commands?projectId=${q}&wait=0`)
    expect([chatQueue.body.commands.map((c: any) => c.type), appQueue.body.commands.map((c: any) => c.type)]).toEqual([
      ['selectNode'],
      ['expandNode'],
    ])
    const state = { view_mode: 'tree', selected_iteration: null, expanded_nodes: [], focused_goals: [], selected_node: goal }
    await app.call('POST', '/api/v1/view/report', { body: { projectId: q, view: 'chat', applied: { id: 1, type: 'selectNode' }, state } })
    const [c, a] = await Promise.all([
      app.call('GET', `/api/v1/view-state?projectId=${q}&view=chat`),
      app.call('GET', `/api/v1/view-state?projectId=${q}`),
    ])
    expect([c.body.selected_node, c.body.last_applied_command?.id, c.body.clients_connected]).toEqual([goal, 1, true])
    expect([a.body.selected_node, a.body.last_applied_command]).toEqual([null, null])
    // the app's command is still waiting for the app
    expect((await app.call('GET', `/api/v1/view/commands?projectId=${q}&wait=0`)).body.commands.length).toBe(1)
  })

  it('refuses a view that does not exist with 400, never a 500', async () => {
    const res = await app.call('GET', `/api/v1/view-state?projectId=${p}&view=desk`)
    expect(res.status).toBe(400)
    const cmd = await app.call('POST', '/api/v1/view-command', { body: { projectId: p, view: 'desk', command: { type: 'expandAll' } } })
    expect(cmd.status).toBe(400)
  })
})
