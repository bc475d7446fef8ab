import { afterAll, beforeAll, expect, it } from 'bun:test'
import { type CallToolResult, Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'
import { type ServerProcess, startServer } from './process'

// history.md, 6: get_history reads what GET /history answers, and revert goes through mutate,
// with the tool list still within agents-and-app.md section 6 (16 tools, 3,500 tokens).
const projectId = 'mcp-history'
let server: ServerProcess
let client: Client
beforeAll(async () => {
  server = await startServer()
  expect(
    (await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'H', id: projectId } } })).status,
  ).toBe(200)
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

it('lists get_history as read-only, within 16 tools and 3,500 tokens', async () => {
  const { tools } = await client.listTools()
  const tool = tools.find((t) => t.name === 'get_history')!
  expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true })
  expect(tool.outputSchema?.type).toBe('object')
  // what a host shows a model: the tools without visibility ["app"] (agents-and-app.md section 6)
  const model = tools.filter((t) => (t._meta as { ui?: { visibility?: string[] } } | undefined)?.ui?.visibility?.join() !== 'app')
  expect(model.length).toBeLessThanOrEqual(16)
  expect(countTokens(JSON.stringify({ tools: model }))).toBeLessThanOrEqual(3500)
})

it('get_history answers what GET /history answers, and mutate reverts', async () => {
  const add = (await client.callTool({
    name: 'mutate',
    arguments: { projectId, action: 'add', node: { type: 'goal', data: { label: 'From MCP' } } },
  })) as CallToolResult
  expect(add.isError).toBeFalsy()
  const got = (await client.callTool({ name: 'get_history', arguments: { projectId, nodeId: 'goal-1' } })) as CallToolResult
  const rest = (await server.call('GET', `/api/v1/history?projectId=${projectId}&nodeId=goal-1`)).body
  expect(got.structuredContent).toEqual(rest)
  expect(rest.changes.map((c: any) => c.action)).toEqual(['add'])
  const changeId = rest.changes[0].changeId
  const undone = (await client.callTool({
    name: 'mutate',
    arguments: { projectId, action: 'revert', changeIds: [changeId] },
  })) as CallToolResult
  expect(undone.structuredContent).toMatchObject({ success: true, reverted: 1 })
  expect((await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes).toEqual([])
})
