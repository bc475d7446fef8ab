import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type ServerProcess, startServer } from './process'

/**
 * Leases that agents do not have to remember (issue 45, item 4), through the real server process:
 * a write carrying a live claim's token renews the claim to its own length, and so does a read of
 * the node by the claim's agent (X-Agent-Id); another agent's read does not, renewClaim still does.
 */
let server: ServerProcess
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const mutate = async (body: Record<string, unknown>) => (await server.call('POST', '/api/v1/mutate', { body })).body
const expiryOf = async (projectId: string, nodeId: string) => {
  const nodes = (await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes
  const claim = nodes.find((n: { id: string }) => n.id === nodeId)?.claim
  return claim ? Date.parse(claim.expiresAt) : null
}

async function twoJobs(projectId: string) {
  await mutate({ action: 'addProject', project: { name: projectId, id: projectId } })
  const res = await mutate({
    action: 'batch',
    projectId,
    mutations: [
      { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
      { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
      { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'J1' } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'J2' } } },
    ],
  })
  expect(res.success).toBe(true)
}

describe('leases renewed by use', () => {
  it('renews a claim to its own length when a write carries its token, never shortening a longer renewClaim', async () => {
    await twoJobs('lease-write')
    const [c] = (await mutate({ action: 'claim', projectId: 'lease-write', agent: 'worker', nodeIds: ['job-1'], leaseSeconds: 40 })).claims
    const first = Date.parse(c.expiresAt)
    // each write moves the expiry to 40 s after itself: write until a later one shows
    const renewed = await server.until(async () => {
      const res = await mutate({
        action: 'update',
        projectId: 'lease-write',
        nodeId: 'job-1',
        claimToken: c.claimToken,
        data: { description: 'step' },
      })
      expect(res.success).toBe(true)
      const at = await expiryOf('lease-write', 'job-1')
      return at !== null && at > first ? at : null
    }, 10_000)
    expect(Math.abs(renewed - (Date.now() + 40_000))).toBeLessThan(3_000)
    // renewClaim for an hour; a write then keeps the longer lease
    await mutate({ action: 'renewClaim', projectId: 'lease-write', claimToken: c.claimToken, leaseSeconds: 3600 })
    const long = (await expiryOf('lease-write', 'job-1'))!
    await mutate({ action: 'update', projectId: 'lease-write', nodeId: 'job-1', claimToken: c.claimToken, data: { description: 'again' } })
    expect(await expiryOf('lease-write', 'job-1')).toBe(long)
  })

  it("renews a claim when its agent reads the node (X-Agent-Id), not on another agent's read or a read without the header", async () => {
    await twoJobs('lease-read')
    const [c] = (await mutate({ action: 'claim', projectId: 'lease-read', agent: 'reader@box', nodeIds: ['job-2'], leaseSeconds: 30 }))
      .claims
    const first = Date.parse(c.expiresAt)
    const read = (agent?: string) =>
      server.call('GET', `/api/v1/tree?projectId=lease-read&nodeId=job-2&direction=context`, {
        headers: agent ? { 'x-agent-id': agent } : {},
      })
    // others' reads, then the holder's, each after the first second of the lease has passed
    await server.until(async () => Date.now() > first - 28_500, 5_000, 'a second and a half of the lease')
    expect((await read('someone-else')).status).toBe(200)
    expect((await read()).status).toBe(200)
    expect(await expiryOf('lease-read', 'job-2')).toBe(first)
    const res = await read('reader@box')
    expect(res.status).toBe(200)
    const renewed = (await expiryOf('lease-read', 'job-2'))!
    expect(renewed).toBeGreaterThan(first)
    expect(Math.abs(renewed - (Date.now() + 30_000))).toBeLessThan(3_000)
    // the same read again at once moves nothing (a burst of reads renews once)
    expect((await read('reader@box')).status).toBe(200)
    expect(await expiryOf('lease-read', 'job-2')).toBe(renewed)
  })
})
