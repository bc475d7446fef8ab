import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type ServerProcess, startServer } from './process'

// history.md §1: the agent of an MCP client is its `name/version`, also for a client that speaks
// a 2025 revision over HTTP (the TypeScript SDK 1.x): it names itself once, in initialize, and
// every later request meets a fresh server, on this replica or (PostgreSQL) another one.
const projectId = 'mcp-2025'
let a: ServerProcess
let b: ServerProcess
beforeAll(async () => {
  a = await startServer()
  // on PostgreSQL a second replica on the same database answers the requests after initialize
  b = process.env.TEST_DATABASE_URL ? await startServer({}, a) : a
  expect((await a.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'M', id: projectId } } })).status).toBe(
    200,
  )
}, 120_000)
afterAll(async () => {
  if (b !== a) await b?.stop()
  await a?.close()
})

/** One JSON-RPC POST as the SDK 1.x client sends it. */
async function rpc(server: ServerProcess, message: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${server.ownerKey}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(message),
  })
  const text = await res.text()
  return { res, body: text ? JSON.parse(text) : undefined }
}

for (const version of ['2025-06-18', '2025-03-26'])
  describe(`a ${version} client over HTTP`, () => {
    it('is recorded as its name/version, found by GET /history?agent=', async () => {
      const name = `sdk1-${version}`
      const init = await rpc(a, {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name, version: '1.17.0' } },
      })
      expect(init.res.status).toBe(200)
      expect(init.body.result.protocolVersion).toBe(version)
      const session = init.res.headers.get('mcp-session-id')
      expect(session).toMatch(/^[\x21-\x7e]+$/)
      const headers = { 'mcp-session-id': session!, 'mcp-protocol-version': version }
      expect((await rpc(b, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).res.status).toBe(202)
      const call = await rpc(
        b,
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'mutate', arguments: { projectId, action: 'add', node: { type: 'goal', data: { label: `From ${name}` } } } },
        },
        headers,
      )
      expect(call.body.result.isError).toBeFalsy()
      const nodeId = call.body.result.structuredContent.node.id
      const found = await a.call('GET', `/api/v1/history?projectId=${projectId}&agent=${encodeURIComponent(`${name}/1.17.0`)}`)
      expect(found.status).toBe(200)
      expect(found.body.changes.map((c: any) => [c.target.id, c.actor.agent, c.actor.via])).toEqual([[nodeId, `${name}/1.17.0`, 'mcp']])
    })
  })

it('a session id that is not ours names no agent, and the call still goes through', async () => {
  const call = await rpc(
    a,
    {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'mutate', arguments: { projectId, action: 'add', node: { type: 'goal', data: { label: 'No name' } } } },
    },
    { 'mcp-session-id': 'arbor-mcp.!!!', 'mcp-protocol-version': '2025-06-18' },
  )
  expect(call.body.result.isError).toBeFalsy()
  const nodeId = call.body.result.structuredContent.node.id
  const all = await a.call('GET', `/api/v1/history?projectId=${projectId}&nodeId=${nodeId}`)
  expect(all.body.changes[0].actor).not.toHaveProperty('agent')
  expect(all.body.changes[0].actor.via).toBe('mcp')
})
