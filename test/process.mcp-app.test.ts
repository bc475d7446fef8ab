import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { type CallToolResult, Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { type ServerProcess, startServer } from './process'

// Arbor as an MCP App (issue 44), seen from outside with the SDK's own v2 client: the plan view's
// resource, open_plan, the app-only tools, the chat view's own command queue, an unknown tool's
// protocol error, and the headers the MCP server sends the REST API.
const ROOT = join(import.meta.dir, '..')
const PLAN = 'ui://arbor/plan.html'
const projectId = 'mcp-app'
let server: ServerProcess
let goal: string
afterAll(() => server.close())
beforeAll(async () => {
  server = await startServer()
  expect(
    (await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'App plan', id: projectId } } })).status,
  ).toBe(200)
  const made = await server.call('POST', '/api/v1/mutate', {
    body: { action: 'add', projectId, node: { type: 'goal', data: { label: 'Ship the chat view' } } },
  })
  goal = made.body.node.id
}, 60_000)

const http = (era: 'legacy' | 'modern') => async () => {
  const client = new Client(
    { name: 'app-test', version: '2.0.0' },
    era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  )
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${server.ownerKey}` } },
    }),
  )
  return client
}
const stdio =
  (era: 'legacy' | 'modern', apiUrl = () => `${server.url}/api/v1`) =>
  async () => {
    const client = new Client(
      { name: 'app-test', version: '2.0.0' },
      era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
    )
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['run', 'mcp'],
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ARBOR_API_KEY: server.ownerKey, ARBOR_API_URL: apiUrl() },
        stderr: 'pipe',
      }),
    )
    return client
  }

describe.each([
  ['/mcp, 2025-11-25', http('legacy')],
  ['/mcp, 2026-07-28', http('modern')],
  ['stdio, 2025-11-25', stdio('legacy')],
  ['stdio, 2026-07-28', stdio('modern')],
] as const)('the plan view over %s', (_, connect) => {
  let client: Client
  beforeAll(async () => {
    client = await connect()
  }, 30_000)
  afterAll(() => client.close())

  it('lists and reads ui://arbor/plan.html: one self-contained MCP App document', async () => {
    const { resources } = await client.listResources()
    expect(resources.map((r) => [r.uri, r.mimeType])).toEqual([[PLAN, 'text/html;profile=mcp-app']])
    const { contents } = await client.readResource({ uri: PLAN })
    expect(contents.length).toBe(1)
    const html = (contents[0] as { text: string }).text
    expect([contents[0]!.uri, contents[0]!.mimeType, (contents[0]!._meta as any)?.ui?.prefersBorder]).toEqual([
      PLAN,
      'text/html;profile=mcp-app',
      true,
    ])
    expect(html).toStartWith('<!doctype html>')
    // nothing loaded from anywhere: no script or stylesheet by address, no outside origin in an attribute
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|(src|href)=["']?https?:|@import/i)
    expect(html).toContain('role="tree"')
    expect(html.length).toBeGreaterThan(20_000) // the App client is inside
    await expect(client.readResource({ uri: 'ui://arbor/nothing.html' })).rejects.toThrow()
  })

  it('open_plan names the view and answers with the outline as text and structuredContent for it', async () => {
    const { tools } = await client.listTools()
    const open = tools.find((t) => t.name === 'open_plan')!
    expect(open._meta).toEqual({ ui: { resourceUri: PLAN }, 'openai/outputTemplate': PLAN })
    expect(open.annotations?.readOnlyHint).toBe(true)
    const res = (await client.callTool({ name: 'open_plan', arguments: { projectId } })) as CallToolResult
    const text = (res.content[0] as { text: string }).text
    // useful without any UI: the plan itself, and how to steer the view
    expect(text).toContain(`${goal}`)
    expect(text).toContain('Ship the chat view')
    expect(text).toContain('set_view with view:"chat"')
    expect(res.structuredContent).toMatchObject({ projectId, outline: expect.stringContaining('Ship the chat view') })
  })

  it('answers an unknown tool with the protocol error -32602', async () => {
    const err = await client.callTool({ name: 'no_such_tool', arguments: {} }).then(
      () => null,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(ProtocolError)
    expect([(err as ProtocolError).code, (err as Error).message]).toEqual([-32602, expect.stringContaining('Unknown tool no_such_tool')])
  })
})

describe('the chat view’s own command queue', () => {
  it('set_view view:"chat" reaches plan_follow, not /app; plan_report confirms it and read_view view:"chat" reads it back', async () => {
    const client = await http('modern')()
    try {
      const call = async (name: string, args: Record<string, unknown>) =>
        (await client.callTool({ name, arguments: { projectId, ...args } })) as CallToolResult
      const sent = await call('set_view', { view: 'chat', command: { type: 'selectNode', nodeId: goal } })
      expect(sent.isError).toBeFalsy()
      const commandId = (sent.structuredContent as any).commandId
      expect((sent.structuredContent as any)._meta._tip).toStartWith('No chat view is connected')
      // the app's queue stays empty
      const app = await server.call('GET', `/api/v1/view/commands?projectId=${projectId}`)
      expect(app.body.commands).toEqual([])
      const followed = await call('plan_follow', { after: '0', wait: '0' })
      expect((followed.structuredContent as any).commands).toEqual([
        { id: commandId, type: 'selectNode', nodeId: goal, at: expect.any(String) },
      ])
      const reported = await call('plan_report', {
        applied: { id: commandId, type: 'selectNode' },
        state: { view_mode: 'tree', selected_iteration: null, expanded_nodes: [goal], focused_goals: [], selected_node: goal },
      })
      expect(reported.isError).toBeFalsy()
      const chat = (await call('read_view', { view: 'chat' })).structuredContent as any
      expect([chat.selected_node, chat.last_applied_command.id, chat.clients_connected]).toEqual([goal, commandId, true])
      const appState = (await call('read_view', {})).structuredContent as any
      expect([appState.selected_node, appState.last_applied_command]).toEqual([null, null])
      // a person's edit in the view goes through /mutate
      const edit = await call('plan_edit', { action: 'update', nodeId: goal, data: { label: 'Ship the chat view now' } })
      expect((edit.structuredContent as any).node.data.label).toBe('Ship the chat view now')
      expect((await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes[0].data.label).toBe('Ship the chat view now')
    } finally {
      await client.close()
    }
  })
})

describe('plan_edit does only what it declares (issue 50, 6)', () => {
  it('refuses revert, addProject, claim, renameProject, classify and a batch entry beyond add, update, delete, before any write', async () => {
    const client = await http('modern')()
    try {
      const call = async (args: Record<string, unknown>) =>
        (await client.callTool({ name: 'plan_edit', arguments: { projectId, ...args } })) as CallToolResult
      const text = (r: CallToolResult) => JSON.parse((r.content[0] as { text: string }).text)
      const before = await server.call('GET', `/api/v1/export-okf?projectId=${projectId}`)
      const projects = (await server.call('GET', '/api/v1/projects')).body
      const refused: [Record<string, unknown>, string][] = [
        [{ action: 'revert', filter: { since: '2020-01-01T00:00:00Z' } }, '"revert" is not one of them'],
        [{ action: 'addProject', project: { name: 'Sneaked in' } }, '"addProject" is not one of them'],
        [{ action: 'claim', agent: 'view', nodeIds: [goal] }, '"claim" is not one of them'],
        [{ action: 'renameProject', name: 'Renamed by the view' }, '"renameProject" is not one of them'],
        [{ action: 'classify', nodeId: goal }, '"classify" is not one of them'],
        [{ action: 'reorderIterations', order: ['Later'] }, '"reorderIterations" is not one of them'],
        [{ nodeId: goal }, 'null is not one of them'],
        [
          {
            action: 'batch',
            mutations: [
              { action: 'add', node: { type: 'task', data: { label: 'ok' } } },
              { action: 'addIteration', iteration: { name: 'X' } },
            ],
          },
          'mutations[1].action "addIteration" is not one of them',
        ],
        [{ action: 'batch', mutations: [{ action: 'claim' }] }, 'mutations[0].action "claim" is not one of them'],
      ]
      for (const [args, message] of refused) {
        const res = await call(args)
        expect({ args, isError: res.isError }).toEqual({ args, isError: true })
        expect(text(res)).toEqual({ error: 'action_not_allowed', message: expect.stringContaining(message) })
      }
      // nothing was written: not the project, not its claims, not another project
      const after = await server.call('GET', `/api/v1/export-okf?projectId=${projectId}`)
      expect(after.body.files['index.md'].replace(/^exported.*$/m, '')).toBe(before.body.files['index.md'].replace(/^exported.*$/m, ''))
      expect((await server.call('GET', '/api/v1/projects')).body).toEqual(projects)
      expect((await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes.every((n: any) => !n.claim)).toBe(true)
      // what it declares still goes through: a batch of an add and a delete
      const batch = await call({
        action: 'batch',
        mutations: [{ action: 'add', node: { id: 'draft-t', type: 'task', data: { label: 'From the view' } } }],
      })
      expect(batch.isError).toBeFalsy()
      const added = (batch.structuredContent as any).idMap['draft-t']
      expect(typeof added).toBe('string')
      expect((await call({ action: 'delete', nodeId: added })).isError).toBeFalsy()
    } finally {
      await client.close()
    }
  })
})

describe('what the MCP server tells the REST API', () => {
  it('sends X-Arbor-Via: mcp and X-Agent-Id: <clientInfo name>/<version> on every call, in both revisions', async () => {
    const seen: { path: string; via: string | null; agent: string | null }[] = []
    // a recording hop between the stdio server and the real API
    const hop = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: async (req) => {
        const url = new URL(req.url)
        seen.push({ path: url.pathname, via: req.headers.get('x-arbor-via'), agent: req.headers.get('x-agent-id') })
        const body = req.method === 'GET' ? undefined : await req.arrayBuffer()
        const res = await fetch(`${server.url}${url.pathname}${url.search}`, { method: req.method, headers: req.headers, body })
        return new Response(await res.arrayBuffer(), { status: res.status, headers: { 'content-type': 'application/json' } })
      },
    })
    try {
      for (const era of ['legacy', 'modern'] as const) {
        const client = await stdio(era, () => `http://127.0.0.1:${hop.port}/api/v1`)()
        try {
          await client.callTool({ name: 'list_projects', arguments: {} })
          await client.callTool({ name: 'open_plan', arguments: { projectId } })
        } finally {
          await client.close()
        }
      }
      // the key's role is asked once as the server starts (src/mcp/stdio.ts, live.md §6), before any
      // client has named itself: every call a client's tools make carries its name
      expect(seen.filter((s) => s.path !== '/api/v1/tier-status')).toEqual([
        { path: '/api/v1/projects', via: 'mcp', agent: 'app-test/2.0.0' },
        { path: '/api/v1/outline', via: 'mcp', agent: 'app-test/2.0.0' },
        { path: '/api/v1/projects', via: 'mcp', agent: 'app-test/2.0.0' },
        { path: '/api/v1/outline', via: 'mcp', agent: 'app-test/2.0.0' },
      ])
    } finally {
      hop.stop(true)
    }
  }, 30_000)
})
