import { afterAll, beforeAll, expect, it } from 'bun:test'
import { type CallToolResult, Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'
import { type ServerProcess, startServer } from './process'

// live.md, 3–4 through MCP: the tools that read nodes give the model the presence of others on
// them (who edits which field), and the tool list stays within agents-and-app.md section 6.
const projectId = 'mcp-live'
let server: ServerProcess
let client: Client
let goal: string
beforeAll(async () => {
  server = await startServer()
  await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'L', id: projectId } } })
  goal = (
    await server.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId, node: { type: 'goal', data: { label: 'Shared goal' } } },
    })
  ).body.node.id
  client = new Client({ name: 'arbor-test', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${server.ownerKey}` } },
    }),
  )
}, 60_000)
afterAll(async () => {
  await client?.close()
  await server?.close()
})

it('keeps the tool list within 16 tools and 3,500 tokens', async () => {
  const { tools } = await client.listTools()
  const model = tools.filter((t) => (t._meta as { ui?: { visibility?: string[] } } | undefined)?.ui?.visibility?.join() !== 'app')
  expect(model.length).toBeLessThanOrEqual(16)
  expect(countTokens(JSON.stringify({ tools: model }))).toBeLessThanOrEqual(3500)
  expect(tools.find((t) => t.name === 'get_tree')!.description).toContain('presence')
})

it('adds presence to a read of nodes only when someone else is on them, and the write is refused while they edit', async () => {
  const read = async () =>
    (await client.callTool({ name: 'get_tree', arguments: { projectId, nodeId: goal, direction: 'down' } })) as CallToolResult
  const before = await read()
  expect(before.isError).toBeFalsy()
  expect((before.structuredContent as Record<string, unknown>).presence).toBeUndefined()
  // a person opens the label's editor in the app
  await server.call('POST', '/api/v1/presence', { headers: { 'x-arbor-via': 'app' }, body: { projectId, nodeId: goal, field: 'label' } })
  const during = await read()
  const presence = (during.structuredContent as { presence: any[] }).presence
  expect(presence).toEqual([
    {
      actor: { userId: expect.any(String), userName: 'owner', via: 'app' },
      nodeId: goal,
      field: 'label',
      since: expect.any(String),
      expiresAt: expect.any(String),
    },
  ])
  // the model reads it too
  expect((during.content as { text: string }[])[0]!.text).toContain('"presence"')
  const listed = (await client.callTool({ name: 'list_nodes', arguments: { projectId } })) as CallToolResult
  expect((listed.structuredContent as { presence?: unknown[] }).presence).toHaveLength(1)
  const write = (await client.callTool({
    name: 'mutate',
    arguments: { projectId, action: 'update', nodeId: goal, data: { label: 'From the model' } },
  })) as CallToolResult
  expect(write.isError).toBe(true)
  expect(write.structuredContent ?? JSON.parse((write.content as { text: string }[])[0]!.text)).toMatchObject({
    error: 'being_edited',
    field: 'label',
  })
  await server.call('DELETE', `/api/v1/presence?projectId=${projectId}`, { headers: { 'x-arbor-via': 'app' } })
  expect(((await read()).structuredContent as Record<string, unknown>).presence).toBeUndefined()
})
