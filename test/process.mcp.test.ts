import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { type CallToolResult, Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'
import { NODE_TYPES } from '../src/nodes/model'
import { ADMIN_TOKEN } from './helpers'
import { type ServerProcess, startServer } from './process'

// The MCP server as agents use it: the SDK's own client, over stdio (a `bun run mcp` subprocess
// pointed at a real Arbor process) and over Streamable HTTP (Arbor's own /mcp), every tool.
const ROOT = join(import.meta.dir, '..')
/** where users reach this Arbor; /mcp accepts its Origin and loopback ones */
const PUBLIC = 'https://arbor.example.test'
const projectId = 'mcp-plan'
let server: ServerProcess
afterAll(() => server.close())
beforeAll(async () => {
  // ARBOR_PROJECT_ID is the stdio server's default; set on the Arbor process it means nothing to /mcp
  server = await startServer({ PUBLIC_BASE_URL: PUBLIC, ARBOR_PROJECT_ID: projectId })
  const made = await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'MCP plan', id: projectId } } })
  expect(made.status).toBe(200)
}, 60_000)

/** `GET` of the REST API, to compare each tool's result with what the route itself answers. */
async function rest(path: string) {
  const res = await server.call('GET', path)
  return res.body
}

const parsed = (result: CallToolResult) => JSON.parse((result.content[0] as { text: string }).text)

/** `bun run mcp` against the real server; `env` adds to or (undefined) removes from its settings */
const stdio = (env: Record<string, string | undefined> = {}) =>
  new StdioClientTransport({
    command: process.execPath,
    args: ['run', 'mcp'],
    cwd: ROOT,
    env: Object.fromEntries(
      Object.entries({
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        ARBOR_API_KEY: server.ownerKey,
        ARBOR_API_URL: `${server.url}/api/v1`,
        ARBOR_PROJECT_ID: projectId,
        ...env,
      }).filter((e): e is [string, string] => e[1] !== undefined),
    ),
    stderr: 'pipe',
  })
const http = (path = '/mcp') =>
  new StreamableHTTPClientTransport(new URL(`${server.url}${path}`), {
    requestInit: { headers: { authorization: `Bearer ${server.ownerKey}` } },
  })
/** revision 2026-07-28 (server/discover, a per-request envelope) or the 2025 handshake (initialize) */
type Era = 'modern' | 'legacy'
const transports = {
  stdio: () => [stdio(), 'legacy'] as const,
  http: () => [http(), 'legacy'] as const,
  'stdio-2026-07-28': () => [stdio(), 'modern'] as const,
  'http-2026-07-28': () => [http(), 'modern'] as const,
}

/** A connected SDK client (v2) that has listed the tools: from then on it checks every structuredContent against its tool's outputSchema. */
async function connect(transport: StdioClientTransport | StreamableHTTPClientTransport, era: Era = 'legacy') {
  const client = new Client(
    { name: 'arbor-test', version: '1.0.0' },
    era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  )
  await client.connect(transport)
  await client.listTools()
  return client
}

const TOOL_HINTS: [string, boolean, boolean, boolean][] = [
  ['search', true, false, true],
  ['list_nodes', true, false, true],
  ['get_tree', true, false, true],
  ['mutate', false, true, false],
  ['list_iterations', true, false, true],
  ['run_workflow', false, true, false],
  ['set_view', false, false, true],
  ['read_view', true, false, true],
  ['submit_feedback', false, false, false],
  ['list_projects', true, false, true],
  ['get_outline', true, false, true],
  ['ready_work', true, false, true],
  ['claim_work', false, false, false],
  ['release_work', false, false, true],
  ['get_history', true, false, true],
  ['open_plan', true, false, true],
]
/** the tools only the plan view may call (`_meta.ui.visibility: ["app"]`): listed, but not shown to a model */
const APP_ONLY = ['plan_read', 'plan_follow', 'plan_report', 'plan_edit']

describe.each(Object.keys(transports) as (keyof typeof transports)[])('the MCP server over %s', (kind) => {
  let client: Client
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: { projectId, ...args } })) as CallToolResult
  // every transport gets its own part of the plan, so the two runs do not see each other's nodes
  const label = (text: string) => `${text} (${kind})`

  beforeAll(async () => {
    const [transport, era] = transports[kind]()
    client = await connect(transport, era)
  }, 30_000)
  afterAll(() => client.close())

  it('lists the fifteen model tools with truthful annotations, an outputSchema each and the routes’ enums, then the view’s own', async () => {
    const all = (await client.listTools()).tools
    const tools = all.filter((t) => !APP_ONLY.includes(t.name))
    expect(all.filter((t) => APP_ONLY.includes(t.name)).map((t) => [t.name, (t._meta as any)?.ui?.visibility])).toEqual(
      APP_ONLY.map((name) => [name, ['app']]),
    )
    expect(tools.map((t) => [t.name, t.annotations?.readOnlyHint, t.annotations?.destructiveHint, t.annotations?.idempotentHint])).toEqual(
      TOOL_HINTS,
    )
    expect(tools.filter((t) => t.outputSchema?.type !== 'object').map((t) => t.name)).toEqual([])
    // the work tools, written to agents-and-app.md section 2
    const schema = (name: string) => tools.find((t) => t.name === name)!.inputSchema
    expect(Object.keys(schema('ready_work').properties!)).toEqual(['projectId', 'iteration', 'limit'])
    expect(Object.keys(schema('claim_work').properties!)).toEqual([
      'projectId',
      'agent',
      'nodeIds',
      'count',
      'leaseSeconds',
      'idempotencyKey',
    ])
    expect((schema('claim_work').properties as any).leaseSeconds).toEqual({
      type: 'integer',
      minimum: 30,
      maximum: 86400,
      description: 'default 900',
    })
    // projectId is required where no default project applies (over HTTP, ARBOR_PROJECT_ID means nothing)
    expect(schema('release_work').required).toEqual(kind.startsWith('stdio') ? ['claimToken'] : ['projectId', 'claimToken'])
    const search = tools.find((t) => t.name === 'search')!
    expect((search.inputSchema.properties as any).type).toEqual({ type: 'string', enum: [...NODE_TYPES] })
    expect(search.inputSchema.required).toEqual(kind.startsWith('stdio') ? ['q'] : ['projectId', 'q'])
    const tree = tools.find((t) => t.name === 'get_tree')!
    expect((tree.inputSchema.properties as any).direction).toEqual({
      type: 'string',
      enum: ['up', 'down', 'lateral', 'context'],
      description: 'required unless format=outline',
    })
  })

  it('mutate writes a batch once per idempotencyKey and keeps the _meta hints', async () => {
    const args = {
      action: 'batch',
      idempotencyKey: `plan-${kind}`,
      mutations: [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: label('Teams adopt the product') } } },
        {
          action: 'add',
          node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: label('Managers cannot see progress') } },
        },
        { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: label('Weekly summary e-mail') } } },
        {
          action: 'add',
          node: { type: 'job', parentId: 'draft-a', data: { label: label('A manager receives the summary every Monday') } },
        },
      ],
    }
    const first = await call('mutate', args)
    expect(first.isError).toBeUndefined()
    const body = first.structuredContent as any
    expect(body.success).toBe(true)
    expect(parsed(first)).toEqual(body)
    const again = await call('mutate', args)
    expect(again.structuredContent).toEqual(body)
    const nodes = (await rest(`/api/v1/nodes?projectId=${projectId}`)).nodes.filter((n: any) => n.data.label.endsWith(`(${kind})`))
    expect(nodes.map((n: any) => n.type)).toEqual(['goal', 'need', 'approach', 'job'])
  })

  it('list_nodes, get_tree and list_iterations answer what the REST routes answer', async () => {
    const nodes = await call('list_nodes', { type: 'job' })
    expect(nodes.structuredContent).toEqual(await rest(`/api/v1/nodes?projectId=${projectId}&type=job`))
    const job = (nodes.structuredContent as any).nodes.find(
      (n: any) => n.data.label === label('A manager receives the summary every Monday'),
    )
    const tree = await call('get_tree', { nodeId: job.id, direction: 'context' })
    expect(tree.structuredContent).toEqual(await rest(`/api/v1/tree?projectId=${projectId}&nodeId=${job.id}&direction=context`))
    expect((tree.structuredContent as any).ancestors.map((n: any) => n.type)).toEqual(['job', 'approach', 'need', 'goal'])
    const outline = await call('get_tree', { format: 'outline', budget: 2000 })
    expect(outline.structuredContent).toEqual(await rest(`/api/v1/tree?projectId=${projectId}&format=outline&budget=2000`))
    const all = await call('list_iterations', {})
    expect(all.structuredContent).toEqual(await rest(`/api/v1/iterations?projectId=${projectId}`))
    const current = await call('list_iterations', { current: true })
    expect(current.structuredContent).toEqual({ iteration: null })
  })

  it('search finds a node by meaning, with its ancestors', async () => {
    const found = await server.until(async () => {
      const res = await call('search', { q: 'monday summary for managers', type: 'job', limit: 3 })
      const hit = (res.structuredContent as any).results.find((r: any) => r.node.data.label.endsWith(`(${kind})`))
      return hit ? res : null
    })
    const hit = (found.structuredContent as any).results.find((r: any) => r.node.data.label.endsWith(`(${kind})`))
    expect(hit.ancestors.map((a: any) => [a.type, a.label])).toEqual([
      ['approach', label('Weekly summary e-mail')],
      ['need', label('Managers cannot see progress')],
      ['goal', label('Teams adopt the product')],
    ])
  })

  it('run_workflow starts the add flow and advances it to an applied change', async () => {
    const approach = (await rest(`/api/v1/nodes?projectId=${projectId}&type=approach`)).nodes.find(
      (n: any) => n.data.label === label('Weekly summary e-mail'),
    )
    const start = await call('run_workflow', { action: 'start', flow: 'add', input: 'Export the weekly summary as CSV' })
    const started = start.structuredContent as any
    expect([start.isError, started.done, typeof started.prompt, typeof started.state]).toEqual([undefined, false, 'string', 'string'])
    const draft = {
      signal: 'draft_ready',
      message: 'One job.',
      draftNodes: [{ id: 'draft-1', type: 'job', parentId: approach.id, data: { label: label('A manager downloads the summary as CSV') } }],
    }
    const done = await call('run_workflow', { action: 'advance', state: started.state, response: draft })
    const finished = done.structuredContent as any
    expect(finished.done).toBe(true)
    expect(finished.changeset.map((c: any) => [c.action, c.type, c.after.data.label])).toEqual([
      ['add', 'job', label('A manager downloads the summary as CSV')],
    ])
    expect(finished._meta.viewCommand.command).toEqual({ type: 'selectNode', nodeId: finished.focus })
  })

  it('submit_feedback stores an item', async () => {
    const res = await call('submit_feedback', { kind: 'note', summary: `MCP works over ${kind}` })
    const body = res.structuredContent as any
    expect([res.isError, body.success, typeof body.id, typeof body.createdAt]).toEqual([undefined, true, 'string', 'string'])
  })

  it('set_view enqueues a view command and read_view reads the canvas back', async () => {
    const goal = (await rest(`/api/v1/nodes?projectId=${projectId}&type=goal`)).nodes[0]
    const set = await call('set_view', { command: { type: 'selectNode', nodeId: goal.id } })
    const body = set.structuredContent as any
    expect([set.isError, body.success, body.command]).toEqual([undefined, true, { type: 'selectNode', nodeId: goal.id }])
    const read = await call('read_view', {})
    expect(read.structuredContent).toEqual(await rest(`/api/v1/view-state?projectId=${projectId}`))
  })

  it('list_projects and get_outline answer what the REST routes answer, the outline within its budget', async () => {
    const projects = (await client.callTool({ name: 'list_projects', arguments: {} })) as CallToolResult
    expect(projects.structuredContent).toEqual(await rest('/api/v1/projects'))
    expect((projects.structuredContent as any).projects.map((p: any) => p.id)).toContain(projectId)
    const outline = await call('get_outline', { budget: 200 })
    const body = outline.structuredContent as any
    expect(body).toEqual(await rest(`/api/v1/outline?projectId=${projectId}&budget=200`))
    expect([body.tokens <= 200, body.tokens === countTokens(body.outline), body.outline.startsWith('- [goal-')]).toEqual([true, true, true])
  })

  it('ready_work, claim_work and release_work: claim what is ready, see the claim in the outline, give it back', async () => {
    const work = `mcp-work-${kind}`
    const made = await server.call('POST', '/api/v1/mutate', {
      body: { action: 'addProject', project: { name: `Work ${kind}`, id: work } },
    })
    expect(made.status).toBe(200)
    const planned = await server.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: work,
        mutations: [
          { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Ship' } } },
          { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Need' } } },
          { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Bet' } } },
          { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'First job' } } },
          { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'Second job' } } },
        ],
      },
    })
    expect(planned.status).toBe(200)
    const ready = await call('ready_work', { projectId: work })
    expect(ready.structuredContent).toEqual(await rest(`/api/v1/ready?projectId=${work}`))
    expect((ready.structuredContent as any).items.map((i: any) => i.node.id)).toEqual(['job-1', 'job-2'])

    const agent = `agent-${kind}`
    const claimed = await call('claim_work', { projectId: work, agent, count: 1, idempotencyKey: `claim-${kind}` })
    const claims = (claimed.structuredContent as any).claims
    expect([claimed.isError, claims.length, claims[0].nodeId, claims[0].agent]).toEqual([undefined, 1, 'job-1', agent])
    const again = await call('claim_work', { projectId: work, agent, count: 1, idempotencyKey: `claim-${kind}` })
    expect(again.structuredContent).toEqual(claimed.structuredContent) // the same key is not applied twice
    const outline = (await call('get_outline', { projectId: work })).structuredContent as any
    expect(outline.outline.split('\n')).toEqual([
      '- [goal-1] Ship',
      '  - [need-1] Need',
      '    - [approach-1] Bet',
      `      - [job-1] First job · open · Later · claimed by ${agent}`,
      '      - [job-2] Second job · open · Later',
    ])
    expect(((await call('ready_work', { projectId: work })).structuredContent as any).items.map((i: any) => i.node.id)).toEqual(['job-2'])

    const released = await call('release_work', { projectId: work, claimToken: claims[0].claimToken })
    expect([released.isError, (released.structuredContent as any).released]).toEqual([undefined, { nodeId: 'job-1' }])
    const lost = await call('release_work', { projectId: work, claimToken: claims[0].claimToken })
    expect([lost.isError, parsed(lost).status, parsed(lost).error]).toEqual([true, 409, 'claim_lost'])
    expect(((await call('ready_work', { projectId: work })).structuredContent as any)._meta.total).toBe(2)
  })

  it('says what is missing: get_tree without direction, set_view on an unknown node', async () => {
    const tree = await call('get_tree', { nodeId: 'goal-1' })
    expect({ isError: tree.isError, body: parsed(tree) }).toEqual({
      isError: true,
      body: {
        error: 'direction is required',
        message: 'get_tree needs direction: one of up, down, lateral, context (with nodeId), or format: "outline" for the whole project',
      },
    })
    const view = await call('set_view', { command: { type: 'selectNode', nodeId: 'job-999' } })
    expect({ isError: view.isError, structured: view.structuredContent, body: parsed(view) }).toEqual({
      isError: true,
      structured: undefined,
      body: {
        success: false,
        command: { type: 'selectNode', nodeId: 'job-999' },
        commandId: null,
        _meta: { _tip: 'Node job-999 not found in this project.' },
      },
    })
  })

  it('returns a refusal as a tool error with the API’s status, message and guide', async () => {
    const res = await call('mutate', { action: 'add', node: { type: 'need', data: { label: 'No parent' } } })
    expect(res.isError).toBe(true)
    const body = parsed(res)
    expect([body.status, body.success, typeof body.errors[0], body._meta.guide]).toEqual([400, false, 'string', `${PUBLIC}/api/v1/guide`])
    const missing = await call('get_tree', { nodeId: 'goal-999', direction: 'up' })
    expect(missing.isError).toBe(true)
    expect(parsed(missing)).toEqual({ status: 404, ...(await rest(`/api/v1/tree?projectId=${projectId}&nodeId=goal-999&direction=up`)) })
  })

  it('refuses a batch entry with a non-string node.id, or a lone surrogate, as a 400 tool error naming the entry', async () => {
    const guide = { guide: `${PUBLIC}/api/v1/guide` }
    const wrongId = await call('mutate', {
      action: 'batch',
      mutations: [{ action: 'add', node: { id: 7, type: 'goal', data: { label: 'x' } } }],
    })
    expect([wrongId.isError, parsed(wrongId)]).toEqual([
      true,
      { status: 400, success: false, errors: ['mutations[0]: node.id must be a string: a draft- id, or a <type>-<n> id'], _meta: guide },
    ])
    const lone = await call('mutate', {
      action: 'batch',
      mutations: [{ action: 'add', node: { type: 'goal', data: { label: 'a\ud800' } } }],
    })
    expect([lone.isError, parsed(lone)]).toEqual([
      true,
      {
        status: 400,
        success: false,
        errors: [
          'mutations[0].node.data.label must be well-formed Unicode: a lone surrogate (\\ud800 to \\udfff without its pair) is not a character',
        ],
        _meta: guide,
      },
    ])
  })
})

/** A call without projectId where no default applies: a tool error that names list_projects, never the API's 403. */
const NO_PROJECT = {
  error: 'projectId is required',
  message: 'list_nodes needs projectId: call list_projects for the ids of your projects',
}

describe('the stdio server', () => {
  it('uses ARBOR_PROJECT_ID when a call names no project', async () => {
    const client = await connect(stdio())
    try {
      const res = (await client.callTool({ name: 'list_iterations', arguments: {} })) as CallToolResult
      expect(res.structuredContent).toEqual(await rest(`/api/v1/iterations?projectId=${projectId}`))
    } finally {
      await client.close()
    }
  })

  it('without ARBOR_PROJECT_ID, answers a call without projectId with a tool error naming list_projects', async () => {
    const client = await connect(stdio({ ARBOR_PROJECT_ID: undefined }))
    try {
      const res = (await client.callTool({ name: 'list_nodes', arguments: {} })) as CallToolResult
      expect({ isError: res.isError, body: parsed(res) }).toEqual({ isError: true, body: NO_PROJECT })
    } finally {
      await client.close()
    }
  })

  it('exits with a one-line message when ARBOR_API_KEY is missing', async () => {
    const proc = Bun.spawn([process.execPath, 'src/mcp/stdio.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '' },
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
    expect({ code, stderr }).toEqual({
      code: 2,
      stderr: 'arbor mcp: ARBOR_API_KEY is required: an Arbor API key (arb_…) for the MCP server to call the API with\n',
    })
  })
})

describe('read-only mode and the size of the tool list', () => {
  const READ_ONLY = TOOL_HINTS.filter((t) => t[1]).map((t) => t[0])

  it.each([
    ['stdio (ARBOR_MCP_READ_ONLY=1)', () => stdio({ ARBOR_MCP_READ_ONLY: '1' })],
    ['HTTP (/mcp?readOnly=1)', () => http('/mcp?readOnly=1')],
    // the parameter's name in any case, as flags are read (issue 50, 7)
    ['HTTP (/mcp?readonly=1)', () => http('/mcp?readonly=1')],
    ['HTTP (/mcp?READONLY=TRUE)', () => http('/mcp?READONLY=TRUE')],
  ] as const)('over %s lists and runs only the tools that change nothing', async (_, transport) => {
    const client = await connect(transport())
    try {
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name)).toEqual([...READ_ONLY, 'plan_read', 'plan_follow'])
      expect(tools.every((t) => t.annotations?.readOnlyHint === true && t.annotations.destructiveHint === false)).toBe(true)
      const write = (await client.callTool({
        name: 'mutate',
        arguments: { projectId, action: 'add', node: { type: 'task', data: { label: 'Must not land' } } },
      })) as CallToolResult
      expect({ isError: write.isError, body: parsed(write) }).toEqual({
        isError: true,
        body: { error: 'read_only', message: 'mutate changes the plan, and this MCP server is read-only; its tools change nothing' },
      })
      const tasks = (await rest(`/api/v1/nodes?projectId=${projectId}&type=task`)).nodes
      expect(tasks.filter((n: any) => n.data.label === 'Must not land')).toEqual([])
      const read = (await client.callTool({ name: 'list_iterations', arguments: { projectId } })) as CallToolResult
      expect(read.structuredContent).toEqual(await rest(`/api/v1/iterations?projectId=${projectId}`))
    } finally {
      await client.close()
    }
  })

  it('over HTTP, ARBOR_PROJECT_ID means nothing: a call without projectId is a tool error naming list_projects', async () => {
    const client = await connect(http())
    try {
      const res = (await client.callTool({ name: 'list_nodes', arguments: {} })) as CallToolResult
      expect({ isError: res.isError, body: parsed(res) }).toEqual({ isError: true, body: NO_PROJECT })
    } finally {
      await client.close()
    }
  })

  it('keeps the model’s tools within 16 and 3,500 o200k_base tokens, counts the view’s own too', async () => {
    const res = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${server.ownerKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    const { result } = (await res.json()) as { result: { tools: { name: string; _meta?: { ui?: { visibility?: string[] } } }[] } }
    const appOnly = (t: (typeof result.tools)[number]) => t._meta?.ui?.visibility?.join() === 'app'
    const model = result.tools.filter((t) => !appOnly(t))
    const view = result.tools.filter(appOnly)
    expect(model.map((t) => t.name)).toEqual(TOOL_HINTS.map((t) => t[0]))
    expect(view.map((t) => t.name)).toEqual(APP_ONLY)
    // what a host shows a model: the tools without visibility ["app"] (agents-and-app.md section 6)
    const tokens = countTokens(JSON.stringify({ tools: model }))
    const viewTokens = countTokens(JSON.stringify({ tools: view }))
    const whole = countTokens(JSON.stringify(result))
    console.log(
      `tools/list: ${model.length} model tools ${tokens} tokens; ${view.length} app-only ${viewTokens} tokens; whole list ${whole} tokens (o200k_base)`,
    )
    expect(model.length).toBeLessThanOrEqual(16)
    expect(tokens).toBeLessThanOrEqual(3500)
  })
})

describe('POST /mcp', () => {
  it('calls the API with the caller’s own key, not the server’s', async () => {
    const made = await server.call('POST', '/admin/v1/users', { key: ADMIN_TOKEN, body: { name: 'other' } })
    expect(made.status).toBe(201)
    const client = new Client({ name: 'arbor-test', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${made.body.apiKey}` } },
      }),
    )
    try {
      const denied = (await client.callTool({ name: 'list_nodes', arguments: { projectId } })) as CallToolResult
      expect(denied.isError).toBe(true)
      expect(parsed(denied)).toEqual({
        status: 403,
        ...(await server.call('GET', `/api/v1/nodes?projectId=${projectId}`, { key: made.body.apiKey })).body,
      })
      const own = (await client.callTool({
        name: 'mutate',
        arguments: { action: 'addProject', project: { name: 'Other plan', id: 'other-plan' } },
      })) as CallToolResult
      expect((own.structuredContent as any).success).toBe(true)
      const theirs = await server.call('GET', '/api/v1/projects', { key: made.body.apiKey })
      expect(theirs.body.projects.map((p: any) => [p.id, p.role])).toEqual([['other-plan', 'owner']])
    } finally {
      await client.close()
    }
  })

  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  }
  const post = (headers: Record<string, string>) =>
    fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(initialize),
    })
  const guide = () => `${PUBLIC}/api/v1/guide`

  it('answers 401 JSON without a key or with a wrong one', async () => {
    for (const headers of [{}, { authorization: 'Bearer arb_notAKeyAtAllButLongEnough0123456789' }] as Record<string, string>[]) {
      const res = await post(headers)
      expect({ status: res.status, type: res.headers.get('content-type'), body: await res.json() }).toEqual({
        status: 401,
        type: 'application/json',
        body: {
          error: 'unauthorized',
          message: 'Missing or invalid API key',
          _meta: { guide: guide(), _tip: 'Send your Arbor API key as Authorization: Bearer arb_…' },
        },
      })
    }
  })

  it('refuses a foreign Origin (DNS rebinding) and accepts PUBLIC_BASE_URL’s and loopback ones', async () => {
    const foreign = await post({ authorization: `Bearer ${server.ownerKey}`, origin: 'http://evil.example' })
    expect({ status: foreign.status, body: await foreign.json() }).toEqual({
      status: 403,
      body: {
        error: 'forbidden_origin',
        message: 'Origin http://evil.example may not use /mcp',
        _meta: { _tip: `Only ${PUBLIC} (PUBLIC_BASE_URL) and loopback origins are allowed.` },
      },
    })
    for (const origin of ['http://127.0.0.1:5173', 'http://localhost:3000', PUBLIC]) {
      const res = await post({ authorization: `Bearer ${server.ownerKey}`, origin })
      expect({ status: res.status, server: ((await res.json()) as any).result.serverInfo.name }).toEqual({ status: 200, server: 'arbor' })
    }
  })
})

describe('scoped keys (live.md §6)', () => {
  it('stdio and HTTP offer a read key only the tools that change nothing; a work key also its writes, told what it may', async () => {
    const readKey = (await server.call('POST', '/api/v1/keys', { body: { label: 'mcp reader', scope: { role: 'read' } } })).body.apiKey
    const workKey = (await server.call('POST', '/api/v1/keys', { body: { label: 'mcp worker', scope: { role: 'work' } } })).body.apiKey
    const writing = (tools: { name: string; annotations?: { readOnlyHint?: boolean } }[]) =>
      tools.filter((t) => !t.annotations?.readOnlyHint).map((t) => t.name)
    for (const [key, expected] of [
      [readKey, []],
      [workKey, ['mutate', 'claim_work', 'release_work']],
    ] as const) {
      const overStdio = await connect(stdio({ ARBOR_API_KEY: key }))
      const overHttp = new Client({ name: 'arbor-test', version: '1.0.0' })
      await overHttp.connect(
        new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
      )
      try {
        for (const client of [overStdio, overHttp]) {
          const { tools } = await client.listTools()
          expect(writing(tools).sort()).toEqual([...expected].sort())
          if (expected.length) expect(tools.find((t) => t.name === 'mutate')!.description).toContain('This key has role work')
        }
      } finally {
        await overStdio.close()
        await overHttp.close()
      }
    }
  }, 60_000)
})
