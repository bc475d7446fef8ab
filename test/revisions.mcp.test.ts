import { afterAll, beforeAll, expect, it } from 'bun:test'
import { type CallToolResult, Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'
import { type ServerProcess, startServer } from './process'

// live.md, 1 through the MCP server: nodes come with their rev, the mutate tool takes ifRev and
// says to pass it, and a stale write is a tool error naming what changed, by whom, and the node
// as it is now; the tool list stays within agents-and-app.md section 6 (16 tools, 3,500 tokens).
const projectId = 'mcp-revs'
let server: ServerProcess
let client: Client
beforeAll(async () => {
  server = await startServer()
  expect(
    (await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'R', id: projectId } } })).status,
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

it('tells the model to pass the rev it read, within 16 tools and 3,500 tokens', async () => {
  const { tools } = await client.listTools()
  const mutate = tools.find((t) => t.name === 'mutate')!
  expect(mutate.description).toContain('Pass ifRev: the rev you read')
  const actions = String((mutate.inputSchema.properties as any).action.description)
  const of = (a: string) => actions.split(' | ').find((x) => x.startsWith(`${a} {`)) ?? ''
  for (const a of ['update', 'delete', 'updateIteration', 'deleteIteration']) expect(of(a)).toContain('ifRev?')
  const model = tools.filter((t) => (t._meta as { ui?: { visibility?: string[] } } | undefined)?.ui?.visibility?.join() !== 'app')
  expect(model.length).toBeLessThanOrEqual(16)
  expect(countTokens(JSON.stringify({ tools: model }))).toBeLessThanOrEqual(3500)
})

it('answers nodes with their rev, takes ifRev, and gives a stale write back as a tool error to act on', async () => {
  const add = (await client.callTool({
    name: 'mutate',
    arguments: { projectId, action: 'add', node: { type: 'goal', data: { label: 'From MCP', description: 'first' } } },
  })) as CallToolResult
  expect(add.isError).toBeFalsy()
  const listed = (await client.callTool({ name: 'list_nodes', arguments: { projectId } })) as CallToolResult
  const read = (listed.structuredContent as any).nodes[0]
  expect(read.rev).toBe((add.structuredContent as any).node.rev)
  // a person changes the description meanwhile
  const person = await server.call('POST', '/api/v1/mutate', {
    headers: { 'x-arbor-via': 'app' },
    body: { action: 'update', projectId, nodeId: 'goal-1', data: { description: 'the person’s words' } },
  })
  expect(person.status).toBe(200)
  const stale = (await client.callTool({
    name: 'mutate',
    arguments: { projectId, action: 'update', nodeId: 'goal-1', ifRev: read.rev, data: { description: 'the model’s words' } },
  })) as CallToolResult
  expect(stale.isError).toBe(true)
  const text = (stale.content as { type: string; text: string }[])[0]!.text
  const body = JSON.parse(text)
  expect(body).toMatchObject({
    status: 409,
    error: 'stale_write',
    conflicts: [
      { field: 'description', yours: 'the model’s words', theirs: 'the person’s words', actor: { userName: 'owner', via: 'app' } },
    ],
    current: [{ id: 'goal-1', rev: person.body.node.rev }],
  })
  expect(body.message).toContain('description was changed by owner')
  expect(body._meta._tip).toContain(person.body.node.rev)
  expect((await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes[0].data.description).toBe('the person’s words')
  // merged and sent again with the rev of current: it lands
  const retry = (await client.callTool({
    name: 'mutate',
    arguments: {
      projectId,
      action: 'update',
      nodeId: 'goal-1',
      ifRev: body.current[0].rev,
      data: { description: 'the person’s words, and the model’s' },
    },
  })) as CallToolResult
  expect(retry.isError).toBeFalsy()
  expect((retry.structuredContent as any).node.rev).not.toBe(body.current[0].rev)
})
