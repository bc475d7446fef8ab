import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { type ServerProcess, startServer } from './process'

// Issue 27, item 7: the typed client of examples/typed-client (openapi-fetch over the types
// openapi-typescript generated from /openapi.json), run as a user runs it, against the real server.
const ROOT = join(import.meta.dir, '..')
let server: ServerProcess
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

async function runExample(env: Record<string, string>, projectId: string) {
  const proc = Bun.spawn([process.execPath, 'examples/typed-client/example.ts', projectId], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr }
}

describe('the typed client example', () => {
  it('creates a project, a goal and a need, and lists them through the generated types', async () => {
    const run = await runExample({ ARBOR_API_URL: server.url, ARBOR_API_KEY: server.ownerKey }, 'typed-client')
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' })
    expect(JSON.parse(run.stdout)).toEqual({
      projects: ['typed-client'],
      nodes: [
        { id: 'goal-1', type: 'goal', parentId: null, label: 'Customers pay by direct debit' },
        { id: 'need-1', type: 'need', parentId: 'goal-1', label: 'Collect SEPA mandates' },
      ],
    })
    // what the client wrote is what the API holds
    const nodes = await server.call('GET', '/api/v1/nodes?projectId=typed-client')
    expect(nodes.body.nodes.map((n: any) => [n.id, n.parentId, n.data.label])).toEqual([
      ['goal-1', null, 'Customers pay by direct debit'],
      ['need-1', 'goal-1', 'Collect SEPA mandates'],
    ])
  })

  it('stops with the API answer when the key is refused', async () => {
    const run = await runExample({ ARBOR_API_URL: server.url, ARBOR_API_KEY: 'arb_not-a-key' }, 'typed-client-2')
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('addProject: 401 {"error":')
    expect(run.stdout).toBe('')
  })
})
