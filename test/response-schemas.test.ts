import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { NodesResponse } from '../src/nodes/routes'
import { TreeResponse } from '../src/tree/routes'
import { startApp, type TestApp } from './helpers'

// GET /nodes and GET /tree document their 200 schema in OpenAPI without a run-time check (it
// cost 40% of a large read); these tests hold the responses to those same schemas.
describe('large reads match their documented response schemas', () => {
  let app: TestApp
  let projectId: string
  let ids: Record<string, string>
  beforeAll(async () => {
    app = await startApp()
    projectId = await app.project()
    const res = await app.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId,
        mutations: [
          { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Grow', goalStatus: 'focus' } } },
          {
            action: 'add',
            node: {
              id: 'draft-n',
              type: 'need',
              parentId: 'draft-g',
              data: { label: 'Need', demand: [{ who: 'Acme', at: '2026-01-05' }] },
            },
          },
          {
            action: 'add',
            node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Bet', kano: 'delighter', notes: 'n' } },
          },
          { action: 'add', node: { id: 'draft-j1', type: 'job', parentId: 'draft-a', data: { label: 'Job 1', status: 'done' } } },
          { action: 'add', node: { id: 'draft-j2', type: 'job', parentId: 'draft-a', data: { label: 'Job 2' } } },
          { action: 'add', node: { id: 'draft-t', type: 'task', data: { label: 'Call the bank' } } },
        ],
      },
    })
    ids = res.body.idMap
  })
  afterAll(() => app.close())

  it('GET /nodes matches NodesResponse', async () => {
    const res = await app.call('GET', `/api/v1/nodes?projectId=${projectId}`)
    expect(res.status).toBe(200)
    expect(res.body.nodes).toHaveLength(6)
    expect([...Value.Errors(NodesResponse, res.body)].map((e) => `${e.path}: ${e.message}`)).toEqual([])
  })

  for (const [direction, from] of [
    ['up', 'draft-j1'],
    ['down', 'draft-g'],
    ['lateral', 'draft-j1'],
    ['lateral', 'draft-t'],
    ['context', 'draft-a'],
  ] as const)
    it(`GET /tree direction=${direction} from ${from} matches TreeResponse`, async () => {
      const res = await app.call('GET', `/api/v1/tree?projectId=${projectId}&nodeId=${ids[from]}&direction=${direction}`)
      expect(res.status).toBe(200)
      expect([...Value.Errors(TreeResponse, res.body)].map((e) => `${e.path}: ${e.message}`)).toEqual([])
    })

  it('the OpenAPI document carries both schemas', async () => {
    const doc = (await app.call('GET', '/openapi.json', { key: null })).body
    const schemaOf = (path: string) => doc.paths[path].get.responses['200'].content['application/json'].schema
    expect(schemaOf('/api/v1/nodes').properties.nodes.type).toBe('array')
    expect(schemaOf('/api/v1/tree').properties.ancestors.type).toBe('array')
  })
})
