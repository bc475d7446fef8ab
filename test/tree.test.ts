import { afterAll, describe, expect, it } from 'bun:test'
import { startApp } from './helpers'

// api.md GET /tree: the four directions with their exact shapes, depths, order and tips
const app = await startApp()
afterAll(() => app.close())

const GUIDE = 'http://arbor.test/api/v1/guide'
const tree = (p: string, nodeId: string, direction: string) =>
  app.call('GET', `/api/v1/tree?projectId=${p}&nodeId=${encodeURIComponent(nodeId)}&direction=${direction}`)
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/**
 * goal-1 > need-1 > approach-1 > job-1, job-2;  need-1 > approach-2;  goal-1 > need-2;  goal-2;  task-1.
 * Created interleaved, so depth-first order differs from creation order.
 */
async function seeded() {
  const p = await app.project()
  const created: Record<string, any> = {}
  for (const node of [
    { type: 'goal', data: { label: 'G1' } },
    { type: 'need', parentId: 'goal-1', data: { label: 'N1' } },
    { type: 'need', parentId: 'goal-1', data: { label: 'N2' } },
    { type: 'approach', parentId: 'need-1', data: { label: 'A1' } },
    { type: 'approach', parentId: 'need-1', data: { label: 'A2' } },
    { type: 'job', parentId: 'approach-1', data: { label: 'J1', iteration: 'Later' } },
    { type: 'job', parentId: 'approach-1', data: { label: 'J2', iteration: 'Later' } },
    { type: 'goal', data: { label: 'G2' } },
    { type: 'task', data: { label: 'T1', iteration: 'Later' } },
  ]) {
    const res = await app.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId: p, node } })
    created[res.body.node.id] = res.body.node
  }
  // every node as a tree response carries it: with its createdAt
  const all = (await tree(p, 'goal-1', 'down')).body.nodes.concat(
    (await tree(p, 'goal-2', 'down')).body.nodes,
    (await tree(p, 'task-1', 'down')).body.nodes,
  )
  const full = (id: string) => {
    const { depth, ...n } = all.find((x: any) => x.id === id)
    return n
  }
  return { p, full }
}

describe('every node in a tree response', () => {
  it('carries id, type, parentId, data and an ISO createdAt', async () => {
    const { p } = await seeded()
    const [node] = (await tree(p, 'job-1', 'up')).body.nodes
    expect(node).toEqual({
      id: 'job-1',
      rev: expect.any(String),
      type: 'job',
      parentId: 'approach-1',
      data: { label: 'J1', iteration: 'Later' },
      createdAt: expect.stringMatching(ISO),
    })
  })
})

describe('direction=up', () => {
  it('runs from the node itself to the root, with path in the same order', async () => {
    const { p, full } = await seeded()
    const res = await tree(p, 'job-2', 'up')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      nodes: ['job-2', 'approach-1', 'need-1', 'goal-1'].map(full),
      path: ['job-2', 'approach-1', 'need-1', 'goal-1'],
    })
    expect((await tree(p, 'goal-2', 'up')).body).toEqual({ nodes: [full('goal-2')], path: ['goal-2'] })
  })
})

describe('direction=down', () => {
  it('lists the node first at depth 0, then every descendant depth-first with its depth', async () => {
    const { p, full } = await seeded()
    const res = await tree(p, 'goal-1', 'down')
    const order: [string, number][] = [
      ['goal-1', 0],
      ['need-1', 1],
      ['approach-1', 2],
      ['job-1', 3],
      ['job-2', 3],
      ['approach-2', 2],
      ['need-2', 1],
    ]
    expect(res.body).toEqual({
      nodes: order.map(([id, depth]) => ({ ...full(id), depth })),
      _meta: { nodeCount: 7, maxDepth: 3 },
    })
  })

  it('counts the node itself in nodeCount; a leaf is one node at depth 0', async () => {
    const { p, full } = await seeded()
    expect((await tree(p, 'task-1', 'down')).body).toEqual({
      nodes: [{ ...full('task-1'), depth: 0 }],
      _meta: { nodeCount: 1, maxDepth: 0 },
    })
  })

  it('adds a narrowing tip to a subtree of more than 50 nodes, and not to one of 50', async () => {
    const p = await app.project()
    const jobs = (n: number, parent: string) =>
      Array.from({ length: n }, (_, i) => ({ action: 'add', node: { type: 'job', parentId: parent, data: { label: `J${i}` } } }))
    await app.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: p,
        mutations: [
          { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
          { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
          { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
          { action: 'add', node: { id: 'draft-b', type: 'approach', parentId: 'draft-n', data: { label: 'B' } } },
          ...jobs(49, 'draft-a'),
          ...jobs(50, 'draft-b'),
        ],
      },
    })
    expect((await tree(p, 'approach-1', 'down')).body._meta).toEqual({ nodeCount: 50, maxDepth: 1 })
    expect((await tree(p, 'approach-2', 'down')).body._meta).toEqual({
      nodeCount: 51,
      maxDepth: 1,
      _tip: 'This subtree has 51 nodes. For a narrower read, walk down from one of its children, or use GET /nodes?type=… or GET /search.',
    })
  })
})

describe('direction=lateral', () => {
  it('lists the siblings, excluding the node', async () => {
    const { p, full } = await seeded()
    expect((await tree(p, 'job-1', 'lateral')).body).toEqual({ nodes: [full('job-2')] })
    expect((await tree(p, 'need-2', 'lateral')).body).toEqual({ nodes: [full('need-1')] })
    expect((await tree(p, 'approach-2', 'lateral')).body).toEqual({ nodes: [full('approach-1')] })
  })

  it('answers an empty list with a tip for a root node', async () => {
    const { p } = await seeded()
    expect((await tree(p, 'goal-1', 'lateral')).body).toEqual({
      nodes: [],
      _meta: { _tip: 'goal-1 is a root goal: it has no parent, so no siblings.' },
    })
    expect((await tree(p, 'task-1', 'lateral')).body).toEqual({
      nodes: [],
      _meta: { _tip: 'task-1 is a root task: it has no parent, so no siblings.' },
    })
  })
})

describe('direction=context', () => {
  it('answers ancestors from the node itself to the root, path, siblings and the whole subtree as children', async () => {
    const { p, full } = await seeded()
    expect((await tree(p, 'need-1', 'context')).body).toEqual({
      ancestors: [full('need-1'), full('goal-1')],
      path: ['need-1', 'goal-1'],
      siblings: [full('need-2')],
      children: [
        { ...full('approach-1'), depth: 1 },
        { ...full('job-1'), depth: 2 },
        { ...full('job-2'), depth: 2 },
        { ...full('approach-2'), depth: 1 },
      ],
    })
  })

  it('says a root has no siblings', async () => {
    const { p, full } = await seeded()
    expect((await tree(p, 'goal-2', 'context')).body).toEqual({
      ancestors: [full('goal-2')],
      path: ['goal-2'],
      siblings: [],
      children: [],
      _meta: { _tip: 'goal-2 is a root goal: it has no siblings.' },
    })
  })
})

describe('errors', () => {
  it("answers 400 {error:'direction must be one of: up, down, lateral, context'} with the guide", async () => {
    const { p } = await seeded()
    const res = await tree(p, 'goal-1', 'sideways')
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ error: 'direction must be one of: up, down, lateral, context', _meta: { guide: GUIDE } })
  })

  it("answers 404 {error:'Node <id> not found', _meta} for an unknown node in every direction", async () => {
    const { p } = await seeded()
    for (const direction of ['up', 'down', 'lateral', 'context']) {
      const res = await tree(p, 'goal-99', direction)
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ error: 'Node goal-99 not found', _meta: { _tip: 'List node ids with GET /api/v1/nodes?projectId=…' } })
    }
  })

  it("never shows another project's node", async () => {
    const { p } = await seeded()
    const q = await app.project()
    expect((await tree(q, 'goal-1', 'up')).status).toBe(404)
    expect((await tree(p, 'goal-1', 'up')).status).toBe(200)
  })

  it('refuses a project the key cannot reach', async () => {
    const { p } = await seeded()
    const stranger = await app.user()
    const res = await app.call('GET', `/api/v1/tree?projectId=${p}&nodeId=goal-1&direction=up`, { key: stranger.key })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({
      error: 'project_access_denied',
      message: 'API key does not have access to this project',
      _meta: { guide: GUIDE },
    })
  })
})
