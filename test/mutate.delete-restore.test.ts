import { afterAll, describe, expect, it } from 'bun:test'
import { startApp } from './helpers'

// api.md POST /mutate delete and restore (rules for restore 1-3), the Changelog resource,
// and self-hosting.md's delete/restore response shapes and changelog record
const app = await startApp()
afterAll(() => app.close())

const GUIDE = 'http://arbor.test/api/v1/guide'
const mutate = (body: unknown) => app.call('POST', '/api/v1/mutate', { body })
const add = async (projectId: string, node: unknown) => {
  const res = await mutate({ action: 'add', projectId, node })
  if (res.status !== 200) throw new Error(JSON.stringify(res.body))
  return res.body.node
}
const del = (projectId: string, nodeId: string) => mutate({ action: 'delete', projectId, nodeId })
const restore = (projectId: string, by: Record<string, unknown>) => mutate({ action: 'restore', projectId, ...by })
const ids = async (p: string) => (await app.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes.map((n: any) => n.id)
const changelog = async (p: string) => (await app.call('GET', `/api/v1/changelog?projectId=${p}`)).body.changelog
const focus = (projectId: string, nodeId: string) => ({ nodeId, viewCommand: { projectId, command: { type: 'selectNode', nodeId } } })
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** goal-1 > need-1 > approach-1 > job-1, goal-1 > need-2, and a task. */
async function seeded() {
  const p = await app.project()
  await add(p, { type: 'goal', data: { label: 'G' } })
  await add(p, { type: 'need', parentId: 'goal-1', data: { label: 'N1', description: 'first need' } })
  await add(p, { type: 'approach', parentId: 'need-1', data: { label: 'A1' } })
  await add(p, { type: 'job', parentId: 'approach-1', data: { label: 'J1' } })
  await add(p, { type: 'need', parentId: 'goal-1', data: { label: 'N2' } })
  await add(p, { type: 'task', data: { label: 'T1' } })
  return p
}

describe('delete', () => {
  it('removes the node and everything beneath it, lists its direct children, and answers the settled shape', async () => {
    const p = await seeded()
    await add(p, { type: 'approach', parentId: 'need-1', data: { label: 'A2' } })
    const res = await del(p, 'need-1')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      success: true,
      deleted: { id: 'need-1', type: 'need' },
      orphanedChildren: ['approach-1', 'approach-2'],
      changelogId: expect.any(Number),
      _meta: {
        _tip: `Deleted need-1 and 3 node(s) beneath it. Undo with {action:"restore", projectId:"${p}", nodeId:"need-1"} (children are not restored with it).`,
        focus: focus(p, 'goal-1'),
      },
    })
    expect(await ids(p)).toEqual(['goal-1', 'need-2', 'task-1'])
  })

  it('writes only the named node to the changelog, in full', async () => {
    const p = await seeded()
    const { changelogId } = (await del(p, 'need-1')).body
    const log = await changelog(p)
    expect(log).toEqual([
      {
        id: changelogId,
        nodeId: 'need-1',
        action: 'delete',
        node: {
          id: 'need-1',
          rev: expect.any(String),
          type: 'need',
          parentId: 'goal-1',
          data: { label: 'N1', description: 'first need' },
          createdAt: expect.stringMatching(ISO),
        },
        deletedAt: expect.stringMatching(ISO),
      },
    ])
  })

  it('lists the changelog newest first', async () => {
    const p = await seeded()
    await del(p, 'task-1')
    await del(p, 'need-2')
    expect((await changelog(p)).map((e: any) => e.nodeId)).toEqual(['need-2', 'task-1'])
  })

  it('has no focus when a root node is deleted, and an empty orphanedChildren for a leaf', async () => {
    const p = await seeded()
    const res = await del(p, 'task-1')
    expect(res.body.orphanedChildren).toEqual([])
    expect(res.body._meta).toEqual({
      _tip: `Deleted task-1. Undo with {action:"restore", projectId:"${p}", nodeId:"task-1"} (children are not restored with it).`,
    })
  })

  it("answers 400 'Node with id <id> not found' for an unknown node", async () => {
    const p = await seeded()
    const res = await del(p, 'job-42')
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ success: false, errors: ['Node with id job-42 not found'], _meta: { guide: GUIDE } })
  })

  it('never reuses an id: after deleting job-3, the next job is job-4', async () => {
    const p = await seeded()
    await add(p, { type: 'job', parentId: 'approach-1', data: { label: 'J2' } })
    await add(p, { type: 'job', parentId: 'approach-1', data: { label: 'J3' } })
    await del(p, 'job-3')
    expect((await add(p, { type: 'job', parentId: 'approach-1', data: { label: 'J4' } })).id).toBe('job-4')
    // nor after a whole subtree went
    await del(p, 'goal-1')
    expect((await add(p, { type: 'goal', data: { label: 'G2' } })).id).toBe('goal-2')
  })
})

describe('restore', () => {
  it('brings back the node by nodeId with its original id, type, parentId, data and creation date', async () => {
    const p = await seeded()
    const before = (await app.call('GET', `/api/v1/tree?projectId=${p}&nodeId=need-1&direction=up`)).body.nodes[0]
    await del(p, 'need-1')
    const res = await restore(p, { nodeId: 'need-1' })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      success: true,
      node: { id: 'need-1', rev: expect.any(String), type: 'need', parentId: 'goal-1', data: { label: 'N1', description: 'first need' } },
      _meta: { focus: focus(p, 'need-1') },
    })
    const after = (await app.call('GET', `/api/v1/tree?projectId=${p}&nodeId=need-1&direction=up`)).body.nodes[0]
    // all as it was but its rev: a restore is a change (live.md, 1)
    expect(after).toEqual({ ...before, rev: res.body.node.rev })
    expect(after.rev).not.toBe(before.rev)
    // back in its place in creation order, without its children
    expect(await ids(p)).toEqual(['goal-1', 'need-1', 'need-2', 'task-1'])
  })

  it('brings back the node by changelogId', async () => {
    const p = await seeded()
    const { changelogId } = (await del(p, 'task-1')).body
    const res = await restore(p, { changelogId })
    expect(res.body.node).toEqual({
      id: 'task-1',
      rev: expect.any(String),
      type: 'task',
      parentId: null,
      data: { label: 'T1', iteration: 'Later' },
    })
    expect(await ids(p)).toContain('task-1')
  })

  it('restores the most recent deletion of a node by nodeId', async () => {
    const p = await seeded()
    const first = (await del(p, 'task-1')).body.changelogId
    await restore(p, { nodeId: 'task-1' })
    await mutate({ action: 'update', projectId: p, nodeId: 'task-1', data: { label: 'T1 renamed' } })
    await del(p, 'task-1')
    expect((await restore(p, { nodeId: 'task-1' })).body.node.data.label).toBe('T1 renamed')
    // the first deletion was already undone
    await del(p, 'task-1')
    expect((await restore(p, { changelogId: first })).status).toBe(404)
  })

  it('answers 409 when a node with that id exists', async () => {
    const p = await seeded()
    const { changelogId } = (await del(p, 'task-1')).body
    await restore(p, { nodeId: 'task-1' })
    for (const by of [{ nodeId: 'task-1' }, { changelogId }]) {
      const res = await restore(p, by)
      expect(res.status).toBe(409)
      expect(res.body).toEqual({ error: 'node_exists', message: 'Node task-1 already exists' })
    }
  })

  it('answers 404 when no deletion is on record', async () => {
    const p = await seeded()
    const never = await restore(p, { nodeId: 'goal-1' })
    expect(never.status).toBe(404)
    expect(never.body).toEqual({
      error: 'not_found',
      message: 'No deletion of goal-1 is on record',
      _meta: { _tip: 'Only a node deleted by name is in the changelog; a node removed as a descendant comes back only by re-adding it.' },
    })
    expect((await restore(p, { changelogId: 9999 })).status).toBe(404)
  })

  it('answers 404 for a node removed only as a descendant of another delete', async () => {
    const p = await seeded()
    await del(p, 'need-1')
    for (const nodeId of ['approach-1', 'job-1']) {
      const res = await restore(p, { nodeId })
      expect(res.status).toBe(404)
      expect(res.body.error).toBe('not_found')
    }
  })

  it('does not cascade: the children stay deleted', async () => {
    const p = await seeded()
    await del(p, 'need-1')
    await restore(p, { nodeId: 'need-1' })
    const down = (await app.call('GET', `/api/v1/tree?projectId=${p}&nodeId=need-1&direction=down`)).body
    expect(down.nodes.map((n: any) => n.id)).toEqual(['need-1'])
  })

  it("fails with 500 'Failed to restore node' when the parent is missing, and works once the parent is back", async () => {
    const p = await seeded()
    await del(p, 'job-1')
    await del(p, 'approach-1')
    const res = await restore(p, { nodeId: 'job-1' })
    expect(res.status).toBe(500)
    expect(res.body).toEqual({
      success: false,
      errors: ['Failed to restore node'],
      _meta: { _tip: 'Its parent approach-1 does not exist: restore the parent first.' },
    })
    expect(await ids(p)).not.toContain('job-1')
    expect((await restore(p, { nodeId: 'approach-1' })).status).toBe(200)
    expect((await restore(p, { nodeId: 'job-1' })).body.node).toEqual({
      id: 'job-1',
      rev: expect.any(String),
      type: 'job',
      parentId: 'approach-1',
      data: { label: 'J1', iteration: 'Later' },
    })
  })

  it('puts a restored job whose iteration is gone in Later and says so', async () => {
    const p = await seeded()
    await mutate({ action: 'addIteration', projectId: p, iteration: { name: 'S1' } })
    await mutate({ action: 'update', projectId: p, nodeId: 'job-1', data: { iteration: 'S1' } })
    await del(p, 'job-1')
    await mutate({ action: 'deleteIteration', projectId: p, iterationName: 'S1' })
    const res = await restore(p, { nodeId: 'job-1' })
    expect(res.body.node.data).toEqual({ label: 'J1', iteration: 'Later' })
    expect(res.body._meta._tip).toBe('Its iteration S1 no longer exists; it is in Later.')
  })

  it('requires nodeId or a positive integer changelogId', async () => {
    const p = await seeded()
    expect((await restore(p, {})).body).toEqual({ success: false, errors: ['nodeId or changelogId is required'], _meta: { guide: GUIDE } })
    expect((await restore(p, { changelogId: 'abc' })).body).toEqual({
      success: false,
      errors: ['changelogId must be a positive integer'],
      _meta: { guide: GUIDE },
    })
  })

  it('keeps the changelog of one project out of another', async () => {
    const p = await seeded()
    const q = await seeded()
    const { changelogId } = (await del(p, 'task-1')).body
    expect((await restore(q, { changelogId })).status).toBe(404)
    expect(await changelog(q)).toEqual([])
  })
})
