import { afterAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { parseAction } from '../src/http/action-schema'
import { ACTION_BODIES, MutateResult } from '../src/mutate/model'
import { NodeOut } from '../src/nodes/model'
import { startApp } from './helpers'

// issue 10: every /mutate action typed. The action schemas refuse with api.md's messages and
// _tips, batch entries prefixed, inside the idempotent run (so a refusal is replayed).
const app = await startApp()
afterAll(() => app.close())

const GUIDE = 'http://arbor.test/api/v1/guide'
const mutate = (body: unknown, headers?: Record<string, string>) => app.call('POST', '/api/v1/mutate', { body, headers })
const rejected = (errors: string[], meta: Record<string, unknown> = {}) => ({ success: false, errors, _meta: { ...meta, guide: GUIDE } })

describe('the action schemas', () => {
  it('refuse the first broken part of a batch entry with its own message, prefixed mutations[<index>]: ', async () => {
    const p = await app.project()
    const res = await mutate({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'add', node: { type: 'goal', data: { label: 'G' } } },
        { action: 'addIteration', iteration: { name: 'Tags', gitTags: ['x'.repeat(201)] } },
      ],
    })
    expect(res.status).toBe(400)
    expect(res.body).toEqual(rejected(['mutations[1]: gitTags entries must be 1 to 200 characters']))
    const node = await mutate({ action: 'batch', projectId: p, mutations: [{ action: 'add', node: { type: 'epic', data: {} } }] })
    expect(node.body).toEqual(rejected(['mutations[0]: node.type must be one of: goal, need, approach, job, task']))
    const missing = await mutate({ action: 'batch', projectId: p, mutations: [{ action: 'add' }] })
    expect(missing.body).toEqual(
      rejected(['mutations[0]: node is required: {type, parentId?, data:{label, ...}}'], {
        _tip: 'Send {action:"add", projectId, node:{type:"goal", data:{label:"…"}}}',
      }),
    )
  })

  it('name every unknown iteration field at once', async () => {
    const p = await app.project()
    const res = await mutate({ action: 'updateIteration', projectId: p, iterationName: 'Later', data: { colour: 'red', owner: 'me' } })
    expect(res.body).toEqual(rejected(['Unknown iteration fields: colour, owner; valid: name, status, gitTags, sortOrder']))
  })

  it('keep the 403 of a missing projectId, and check the data fields with the body, by the node’s type', async () => {
    const noProject = await mutate({ action: 'add', node: { type: 'goal', data: { label: 'x' } } })
    expect(noProject.status).toBe(403)
    expect(noProject.body.error).toBe('project_access_denied')
    const p = await app.project()
    const wrongType = await mutate({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'x', kano: 'delighter' } } })
    expect(wrongType.body).toEqual(rejected(['kano is not valid on a goal; it is valid on: approach']))
  })

  it('refuse inside the idempotent run: the same refused body with the same key is replayed', async () => {
    const p = await app.project()
    const body = { action: 'deleteIteration', projectId: p, iterationName: '' }
    const first = await mutate(body, { 'idempotency-key': 'schema-refusal-1' })
    expect(first.body).toEqual(rejected(['iterationName is required']))
    const again = await mutate(body, { 'idempotency-key': 'schema-refusal-1' })
    expect(again.body).toEqual(first.body)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
  })

  it('check the envelope with the body, at one point: a caller without access hears 403 first, and its refusal is replayed', async () => {
    const p = await app.project()
    const stranger = await app.user()
    const ACTIONS =
      'add, update, delete, restore, batch, classify, addIteration, updateIteration, deleteIteration, reorderIterations, addProject, renameProject'
    const unknownAction = { action: 'ad', projectId: p }
    const refused = await app.call('POST', '/api/v1/mutate', { key: stranger.key, body: unknownAction })
    expect([refused.status, refused.body.error]).toEqual([403, 'project_access_denied'])
    const first = await mutate(unknownAction, { 'idempotency-key': 'envelope-refusal-1' })
    const expected = rejected([`action must be one of: ${ACTIONS}`], {
      _tip: 'Did you mean `add`? Send {action, projectId, ...}; the guide lists the body of every action. Agents also have claim, renewClaim, releaseClaim.',
    })
    expect([first.status, first.body, first.headers.get('idempotent-replayed')]).toEqual([400, expected, null])
    const again = await mutate(unknownAction, { 'idempotency-key': 'envelope-refusal-1' })
    expect([again.status, again.body, again.headers.get('idempotent-replayed')]).toEqual([400, expected, 'true'])
  })

  it('accept what they document: a body built from each schema passes its own check', () => {
    const p = 'some-project'
    const bodies = {
      add: {
        action: 'add',
        projectId: p,
        node: { type: 'need', parentId: 'goal-1', data: { label: 'N', demand: [{ who: 'A', at: '2026-01-01' }] } },
      },
      update: { action: 'update', projectId: p, nodeId: 'task-1', data: { status: null, label: 'x' } },
      delete: { action: 'delete', projectId: p, nodeId: 'task-1' },
      restore: { action: 'restore', projectId: p, changelogId: '12' },
      batch: { action: 'batch', projectId: p, mutations: [{ action: 'delete', nodeId: 'draft-x' }] },
      classify: { action: 'classify', projectId: p, nodeId: 'task-1' },
      addIteration: { action: 'addIteration', projectId: p, iteration: { name: 'S1', gitTags: ['v1'] } },
      updateIteration: { action: 'updateIteration', projectId: p, iterationName: 'S1', data: { sortOrder: 3 } },
      deleteIteration: { action: 'deleteIteration', projectId: p, iterationName: 'S1' },
      reorderIterations: { action: 'reorderIterations', projectId: p, order: ['Later'] },
      addProject: { action: 'addProject', project: { name: 'Plan', id: 'plan' } },
      renameProject: { action: 'renameProject', projectId: p, name: 'New' },
      claim: { action: 'claim', projectId: p, agent: 'bot@host', count: 2, leaseSeconds: 60 },
      renewClaim: { action: 'renewClaim', projectId: p, claimToken: 'clm_x' },
      releaseClaim: { action: 'releaseClaim', projectId: p, claimToken: 'clm_x' },
      revert: { action: 'revert', projectId: p, filter: { agent: 'bot@host', since: '2026-01-01T00:00:00Z' }, dryRun: true },
      propose: { action: 'propose', projectId: p, title: 'T', note: 'n', mutations: [{ action: 'delete', nodeId: 'task-1' }] },
      applyProposal: { action: 'applyProposal', projectId: p, proposalId: 'prp_x', force: true },
      rejectProposal: { action: 'rejectProposal', projectId: p, proposalId: 'prp_x', reason: 'no' },
      withdrawProposal: { action: 'withdrawProposal', projectId: p, proposalId: 'prp_x' },
    }
    for (const [name, schema] of Object.entries(ACTION_BODIES)) {
      const body = bodies[name as keyof typeof bodies]
      expect([name, Value.Check(schema, body)]).toEqual([name, true])
      expect(parseAction(schema, body as unknown)).toBe(body as any)
    }
  })

  it('document the result of each action: real answers match MutateResult', async () => {
    const p = await app.project()
    const answers = [
      await mutate({ action: 'add', projectId: p, node: { type: 'task', data: { label: 'Call the bank' } } }),
      await mutate({ action: 'addIteration', projectId: p, iteration: { name: 'S1' } }),
      await mutate({ action: 'reorderIterations', projectId: p, order: ['S1', 'Later'] }),
      await mutate({
        action: 'batch',
        projectId: p,
        mutations: [{ action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } }],
      }),
      await mutate({ action: 'update', projectId: p, nodeId: 'task-1', data: { kind: 'do-it' } }),
    ]
    const claimed = await mutate({ action: 'claim', projectId: p, agent: 'bot', count: 1 })
    const token = claimed.body.claims[0].claimToken
    answers.push(
      claimed,
      await mutate({ action: 'renewClaim', projectId: p, claimToken: token }),
      await mutate({ action: 'releaseClaim', projectId: p, claimToken: token }),
    )
    answers.push(
      await mutate({ action: 'delete', projectId: p, nodeId: 'task-1' }),
      await mutate({ action: 'renameProject', projectId: p, name: 'Renamed' }),
      await mutate({ action: 'deleteIteration', projectId: p, iterationName: 'S1' }),
    )
    for (const res of answers) {
      expect(res.status).toBe(200)
      expect([...Value.Errors(MutateResult, res.body)].map((e) => `${e.path}: ${e.message}`)).toEqual([])
    }
  })

  it('describe a node as answered by the field types without the write limits (a row stored before a limit was raised)', () => {
    const old = { label: 'x'.repeat(600), blockedBy: Array.from({ length: 60 }, (_, i) => `approach-${i + 1}`) }
    expect(Value.Check(NodeOut, { id: 'approach-99', rev: '1-abcd', type: 'approach', parentId: 'need-1', data: old })).toBe(true)
    expect(
      Value.Check(NodeOut, { id: 'task-1', rev: '1-abcd', type: 'task', parentId: null, data: { label: 'T', status: 'someday' } }),
    ).toBe(false)
    expect(Value.Check(NodeOut, { id: 'task-1', rev: '1-abcd', type: 'task', parentId: null, data: { label: 'T', urgent: 'yes' } })).toBe(
      false,
    )
  })
})
