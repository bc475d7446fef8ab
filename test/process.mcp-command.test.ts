import { afterAll, beforeAll, expect, it } from 'bun:test'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { type ServerProcess, startServer } from './process'

// The stdio command the README and docs/mcp.md give (`npx arbor mcp`, package.json's `bin`):
// its standard output is MCP alone. `npm run mcp` put npm's banner (`> arbor@0.1.0 mcp`) first,
// which the SDK client reported as parse errors and a stricter client refuses.
const ROOT = join(import.meta.dir, '..')
const projectId = 'stdio-plan'
let server: ServerProcess
afterAll(() => server.close())
beforeAll(async () => {
  server = await startServer()
  const made = await server.call('POST', '/api/v1/mutate', {
    body: { action: 'addProject', project: { name: 'Stdio plan', id: projectId } },
  })
  expect(made.status).toBe(200)
}, 60_000)

/** npx must find the checkout's own `bin`, never fetch a package named arbor from a registry */
const env = () => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '/tmp',
  npm_config_offline: 'true',
  npm_config_update_notifier: 'false',
  ARBOR_API_KEY: server.ownerKey,
  ARBOR_API_URL: `${server.url}/api/v1`,
  ARBOR_PROJECT_ID: projectId,
})

// (SDK 2.4's reader skips a line that is not JSON without a word, so the second test reads the raw
// stream: it fails on `npm run mcp`, whose first two lines are npm's banner.)
it('npx arbor mcp: the official SDK client connects and calls a tool with no error on the stream', async () => {
  const transport = new StdioClientTransport({ command: 'npx', args: ['arbor', 'mcp'], cwd: ROOT, env: env(), stderr: 'pipe' })
  const client = new Client({ name: 'arbor-test', version: '1.0.0' })
  const errors: string[] = []
  client.onerror = (err) => errors.push(err.message)
  try {
    await client.connect(transport)
    const tools = await client.listTools()
    expect(tools.tools.map((t) => t.name)).toContain('list_nodes')
    const listed = await client.callTool({ name: 'list_nodes', arguments: {} })
    expect(listed.isError).toBeFalsy()
    expect(JSON.parse((listed.content[0] as { text: string }).text).nodes).toEqual([])
  } finally {
    await client.close()
  }
  expect(errors).toEqual([])
}, 60_000)

it('npx arbor mcp: every line it writes on standard output is a JSON-RPC message', async () => {
  const proc = Bun.spawn(['npx', 'arbor', 'mcp'], { cwd: ROOT, env: env(), stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  }
  proc.stdin.write(`${JSON.stringify(initialize)}\n`)
  proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`)
  proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`)
  // read until the tools/list answer has come, then end stdin: the server stops and stdout closes
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let out = ''
  let ended = false
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    out += decoder.decode(value, { stream: true })
    if (!ended && out.split('\n').some((line) => line.includes('"id":2'))) {
      proc.stdin.end()
      ended = true
    }
  }
  expect(await proc.exited).toBe(0)
  const lines = out.split('\n').filter((line) => line !== '')
  expect(lines.length).toBeGreaterThanOrEqual(2)
  const notJsonRpc = lines.filter((line) => {
    try {
      return JSON.parse(line).jsonrpc !== '2.0'
    } catch {
      return true
    }
  })
  expect(notJsonRpc).toEqual([])
  expect(lines.map((line) => JSON.parse(line).id)).toEqual([1, 2])
}, 60_000)
