import { afterAll, beforeAll, expect, it } from 'bun:test'
import { type CallToolResult, Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'
import { type ServerProcess, startServer } from './process'

// live.md §5 through the real server process: an agent proposes through the MCP mutate tool and
// reads proposals with get_history's proposals mode; a person applies one over HTTP, and the
// history names the proposal and its author. The tool list stays within agents-and-app.md
// section 6 (16 model tools, 3,500 tokens).
const projectId = 'mcp-proposals'
let server: ServerProcess
let client: Client
beforeAll(async () => {
  server = await startServer()
  const call = (body: unknown) => server.call('POST', '/api/v1/mutate', { body })
  expect((await call({ action: 'addProject', project: { name: 'P', id: projectId } })).status).toBe(200)
  expect((await call({ action: 'add', projectId, node: { type: 'goal', data: { label: 'Ship it' } } })).status).toBe(200)
  client = new Client({ name: 'planner', version: '2.0.0' })
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

const tool = async (name: string, args: Record<string, unknown>) => {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult
  if (res.isError) throw new Error(JSON.stringify(res.content))
  return res.structuredContent as any
}

it('keeps the tools within 16 and 3,500 tokens, mutate naming propose and get_history its proposals mode', async () => {
  const { tools } = await client.listTools()
  const model = tools.filter((t) => (t._meta as { ui?: { visibility?: string[] } } | undefined)?.ui?.visibility?.join() !== 'app')
  expect(model.length).toBeLessThanOrEqual(16)
  expect(countTokens(JSON.stringify({ tools: model }))).toBeLessThanOrEqual(3500)
  const mutate = model.find((t) => t.name === 'mutate')!
  expect(JSON.stringify(mutate.inputSchema)).toContain('propose {title,note?,mutations:as batch}')
  expect(Object.keys(model.find((t) => t.name === 'get_history')!.inputSchema.properties ?? {})).toContain('proposals')
})

it('an agent proposes through mutate, reads it back; a person applies it; the history names both', async () => {
  const proposed = await tool('mutate', {
    projectId,
    action: 'propose',
    title: 'Twenty jobs for the launch',
    mutations: [
      { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'goal-1', data: { label: 'Launch' } } },
      { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Plan it' } } },
      ...Array.from({ length: 20 }, (_, i) => ({
        action: 'add',
        node: { type: 'job', parentId: 'draft-a', data: { label: `Job ${i + 1}`, iteration: 'Later' } },
      })),
      { action: 'update', nodeId: 'goal-1', data: { label: 'Ship it well' } },
    ],
  })
  expect(proposed.success).toBe(true)
  const p = proposed.proposal
  expect(p.actor).toMatchObject({ agent: 'planner/2.0.0', via: 'mcp' })
  expect(p.preview.changes).toHaveLength(23)
  expect(Object.keys(p.baseRevs)).toEqual(['goal-1'])
  // nothing written
  expect((await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes.map((n: any) => n.id)).toEqual(['goal-1'])

  const open = await tool('get_history', { projectId, proposals: 'open' })
  expect(open.proposals.map((x: any) => x.proposalId)).toEqual([p.proposalId])
  expect(open).toEqual((await server.call('GET', `/api/v1/proposals?projectId=${projectId}&status=open`)).body)
  const one = await tool('get_history', { projectId, proposals: p.proposalId })
  expect(one.proposal).toMatchObject({ proposalId: p.proposalId, status: 'open', conflicts: [] })
  expect(one.proposal.preview.changes).toHaveLength(23)

  const applied = await server.call('POST', '/api/v1/mutate', { body: { action: 'applyProposal', projectId, proposalId: p.proposalId } })
  expect(applied.status).toBe(200)
  expect(applied.body.proposal.changeIds).toHaveLength(23)
  const nodes = (await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes
  expect(nodes.filter((n: any) => n.type === 'job')).toHaveLength(20)
  const changes = (await tool('get_history', { projectId, limit: 30 })).changes
  const mine = changes.filter((c: any) => c.proposal?.proposalId === p.proposalId)
  expect(mine).toHaveLength(23)
  expect(mine[0].proposal.actor).toMatchObject({ agent: 'planner/2.0.0', via: 'mcp' })
  expect(mine[0].actor.via).toBe('api')
  expect((await tool('get_history', { projectId, proposals: 'all' })).proposals[0].status).toBe('applied')
  // the agent's own withdrawal of a closed one is refused, through the tool too
  const closed = (await client.callTool({
    name: 'mutate',
    arguments: { projectId, action: 'withdrawProposal', proposalId: p.proposalId },
  })) as CallToolResult
  expect(closed.isError).toBe(true)
  expect(JSON.stringify(closed.content)).toContain('proposal_closed')
})
