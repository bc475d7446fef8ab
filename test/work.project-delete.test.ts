import { afterAll, describe, expect, it } from 'bun:test'
import { startApp } from './helpers'

// work_items has no foreign key to projects since migration 0032 (nodes' key already holds the
// project of every work item): a deleted project still takes its work items along (its nodes go
// by their key's cascade, and the nodes' delete trigger removes their work items), and leaves the
// other projects' alone.
const app = await startApp()
afterAll(() => app.close())

describe('a project deleted', () => {
  it('takes its work items with it, and no other project’s', async () => {
    const add = async (projectId: string) => {
      const res = await app.call('POST', '/api/v1/mutate', {
        body: {
          action: 'batch',
          projectId,
          mutations: [
            { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
            { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
            { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
            ...[1, 2, 3].map((j) => ({ action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: `J${j}` } } })),
          ],
        },
      })
      expect(res.body.success).toBe(true)
    }
    const [gone, kept] = [await app.project(), await app.project()]
    await add(gone)
    await add(kept)
    const count = async (p: string) =>
      Number((await app.db.query<{ n: number }>('select count(*)::int as n from work_items where project_id = $1', [p]))[0]!.n)
    expect(await count(gone)).toBe(3)
    expect(await count(kept)).toBe(3)

    await app.db.exec(`delete from projects where id = '${gone}'`)
    expect(await count(gone)).toBe(0)
    expect(await count(kept)).toBe(3)
    expect((await app.call('GET', `/api/v1/ready?projectId=${kept}`)).body._meta.total).toBe(3)
  })
})
