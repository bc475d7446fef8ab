import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startApp, type TestApp } from './helpers'

// An update runs in three steps (src/nodes/read.ts readUpdate, src/nodes/rules.ts checkUpdate,
// src/nodes/write.ts storeUpdate) and a delete reads its ifRev before it removes: which refusal
// answers when a write breaks several things at once, alone and as a batch's entries (the first
// entry to fail answers; a stale ifRev only once every entry passed its rules).
describe('the order of a write’s refusals', () => {
  let app: TestApp
  const P = 'refusal-order'
  let held: string
  let other: string
  beforeAll(async () => {
    app = await startApp()
    await app.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'R', id: P } } })
    const add = async (label: string) =>
      (await app.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId: P, node: { type: 'goal', data: { label } } } })).body
        .node
    held = (await add('held')).id
    other = (await add('other')).id
    // the caller's person, in the app, edits the label of `held`: a write by an agent of that label is another actor's
    const posted = await app.call('POST', '/api/v1/presence', {
      headers: { 'x-arbor-via': 'app' },
      body: { projectId: P, nodeId: held, field: 'label' },
    })
    expect(posted.status).toBe(200)
  })
  afterAll(async () => {
    await app?.close()
  })

  const mutate = (body: Record<string, unknown>) =>
    app.call('POST', '/api/v1/mutate', { headers: { 'x-agent-id': 'bot' }, body: { projectId: P, ...body } })
  const labels = async () =>
    Object.fromEntries(
      (await app.call('GET', `/api/v1/nodes?projectId=${P}`)).body.nodes.map((n: { id: string; data: { label: string } }) => [
        n.id,
        n.data.label,
      ]),
    )

  it('refuses an update of a held field that also breaks a rule with the rule’s 400, and one that breaks none with 409 being_edited', async () => {
    const both = await mutate({ action: 'update', nodeId: held, data: { label: 'bot label' }, parentId: other })
    expect(both.status).toBe(400)
    expect(both.body.errors).toEqual(['A goal has no parent; send parentId: null or leave it out'])
    const heldOnly = await mutate({ action: 'update', nodeId: held, data: { label: 'bot label' } })
    expect({ status: heldOnly.status, error: heldOnly.body.error, field: heldOnly.body.field }).toEqual({
      status: 409,
      error: 'being_edited',
      field: 'label',
    })
  })

  it('answers a batch with its first entry that fails, the held one or the broken one, and writes nothing', async () => {
    const heldUpdate = { action: 'update', nodeId: held, data: { label: 'bot label' } }
    const broken = { action: 'update', nodeId: other, parentId: held }
    const heldFirst = await mutate({ action: 'batch', mutations: [heldUpdate, broken] })
    expect({ status: heldFirst.status, error: heldFirst.body.error }).toEqual({ status: 409, error: 'being_edited' })
    const brokenFirst = await mutate({ action: 'batch', mutations: [broken, heldUpdate] })
    expect(brokenFirst.status).toBe(400)
    expect(brokenFirst.body.errors).toEqual(['mutations[0]: A goal has no parent; send parentId: null or leave it out'])
    expect(await labels()).toEqual({ [held]: 'held', [other]: 'other' })
  })

  it('refuses a batch whose delete names a stale ifRev by a later entry’s broken rule first, then by the stale ifRev', async () => {
    const read = (await app.call('GET', `/api/v1/nodes?projectId=${P}`)).body.nodes.find((n: { id: string }) => n.id === other)
    // the node changes after it was read: the rev read is stale
    expect((await mutate({ action: 'update', nodeId: other, data: { description: 'changed since' } })).status).toBe(200)
    const staleDelete = { action: 'delete', nodeId: other, ifRev: read.rev }
    const broken = await mutate({ action: 'batch', mutations: [staleDelete, { action: 'update', nodeId: held, parentId: other }] })
    expect(broken.status).toBe(400)
    expect(broken.body.errors).toEqual(['mutations[1]: A goal has no parent; send parentId: null or leave it out'])
    const stale = await mutate({ action: 'batch', mutations: [staleDelete] })
    expect({ status: stale.status, error: stale.body.error }).toEqual({ status: 409, error: 'stale_write' })
    expect(Object.keys(await labels()).sort()).toEqual([held, other].sort())
  })
})
