import { afterAll, describe, expect, it } from 'bun:test'
import { startApp } from './helpers'

// A batch reads the nodes its entries name ahead of its first entry (src/nodes/read.ts
// `readNamed`), then reads, checks and stores each entry in turn (`readEntry`, src/nodes/rules.ts
// `checkEntry`, src/nodes/write.ts `storeEntry`), whether or not it deletes: each entry still
// sees what the entries before it wrote, a node a delete removed as gone, a node moved out of a
// subtree before its delete as kept.
const app = await startApp()
afterAll(() => app.close())

const batch = (projectId: string, mutations: unknown[]) =>
  app.call('POST', '/api/v1/mutate', { body: { action: 'batch', projectId, mutations } })
const nodes = async (p: string) =>
  Object.fromEntries(
    (await app.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes.map(
      (n: { id: string; parentId: string | null; data: { label: string } }) => [n.id, `${n.parentId ?? '-'} ${n.data.label}`],
    ),
  )

/** goal-1 > need-1 > approach-1 > job-1, and approach-2 under need-1 */
async function seeded() {
  const p = await app.project()
  const res = await batch(p, [
    { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
    { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
    { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
    { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'J' } } },
    { action: 'add', node: { type: 'approach', parentId: 'draft-n', data: { label: 'A2' } } },
  ])
  if (res.status !== 200) throw new Error(JSON.stringify(res.body))
  return p
}

describe('a batch that deletes, its nodes read ahead', () => {
  it('refuses an update, an add under and a reference to a node an earlier delete removed, naming that entry', async () => {
    const p = await seeded()
    const before = await nodes(p)
    const update = await batch(p, [
      { action: 'delete', nodeId: 'need-1' },
      { action: 'update', nodeId: 'approach-1', data: { label: 'gone' } },
    ])
    expect(update.status).toBe(400)
    expect(update.body.errors).toEqual(['mutations[1]: Node with id approach-1 not found'])
    const add = await batch(p, [
      { action: 'update', nodeId: 'approach-2', data: { label: 'A2 renamed' } },
      { action: 'delete', nodeId: 'approach-1' },
      { action: 'add', node: { type: 'job', parentId: 'approach-1', data: { label: 'orphan' } } },
    ])
    expect(add.status).toBe(400)
    expect(add.body.errors).toEqual(['mutations[2]: Parent node approach-1 not found'])
    const blocked = await batch(p, [
      { action: 'delete', nodeId: 'approach-2' },
      { action: 'update', nodeId: 'approach-1', data: { blockedBy: ['approach-2'] } },
    ])
    expect(blocked.status).toBe(400)
    expect(blocked.body.errors[0]).toStartWith('mutations[1]: blockedBy names approach-2, which is not an existing approach')
    expect(await nodes(p)).toEqual(before)
  })

  it('keeps a node moved out of a subtree before the subtree is deleted, and writes it on, with the nodes the batch adds', async () => {
    const p = await seeded()
    const res = await batch(p, [
      { action: 'add', node: { id: 'draft-n2', type: 'need', parentId: 'goal-1', data: { label: 'N2' } } },
      { action: 'update', nodeId: 'approach-1', parentId: 'draft-n2' },
      { action: 'update', nodeId: 'approach-2', data: { label: 'A2 renamed' } },
      { action: 'delete', nodeId: 'need-1' },
      { action: 'update', nodeId: 'approach-1', data: { label: 'A moved' } },
      { action: 'add', node: { id: 'draft-j', type: 'job', parentId: 'approach-1', data: { label: 'J2' } } },
      { action: 'update', nodeId: 'job-1', data: { label: 'J kept' } },
      { action: 'delete', nodeId: 'draft-j' },
    ])
    expect(res.status).toBe(200)
    expect(res.body.results[3]).toMatchObject({ action: 'delete', nodeId: 'need-1', orphanedChildren: ['approach-2'] })
    expect(res.body.results[7]).toMatchObject({ action: 'delete', nodeId: 'job-2', orphanedChildren: [] })
    expect(await nodes(p)).toEqual({
      'goal-1': '- G',
      'need-2': 'goal-1 N2',
      'approach-1': 'need-2 A moved',
      'job-1': 'approach-1 J kept',
    })
  })
})
