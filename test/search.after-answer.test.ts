import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startApp, type TestApp } from './helpers'

// A write's nodes are in search once the write has answered (the built-in backend). On PGlite the
// commit's events reach the in-memory index from memory, applied after the write's answer has
// left (src/search/catch-up.ts `onCommit`, `applyTold`): a search, or the duplicate check of the
// next add, sent right after the answer must still see them, whatever ran in between or did not.

describe('search right after a write has answered', () => {
  let app: TestApp
  let projectId: string
  let approach: string
  beforeAll(async () => {
    app = await startApp()
    projectId = await app.project()
    const add = async (type: string, label: string, parentId?: string) => {
      const res = await app.call('POST', '/api/v1/mutate', {
        body: { action: 'add', projectId, node: { type, ...(parentId ? { parentId } : {}), data: { label } } },
      })
      expect(res.status).toBe(200)
      return res.body.node.id as string
    }
    approach = await add('approach', 'Ledger exports', await add('need', 'Exports', await add('goal', 'Finance')))
  })
  afterAll(() => app.close())

  const search = (q: string) => app.call('GET', `/api/v1/search?projectId=${projectId}&q=${encodeURIComponent(q)}&mode=keyword&limit=20`)

  test('every node of a batch, and a label an update just set', async () => {
    // the index loaded before the writes, so their events go to it from memory
    expect((await search('ledger')).status).toBe(200)
    for (let round = 0; round < 3; round++) {
      const word = `quokka${round}`
      const res = await app.call('POST', '/api/v1/mutate', {
        body: {
          action: 'batch',
          projectId,
          mutations: Array.from({ length: 15 }, (_, i) => ({
            action: 'add',
            node: { type: 'job', parentId: approach, data: { label: `Export ${word} ledger ${i}` } },
          })),
        },
      })
      expect(res.status).toBe(200)
      const added = (res.body.results as { nodeId: string }[]).map((r) => r.nodeId)
      const found = await search(word)
      expect(found.status).toBe(200)
      expect((found.body.results as { node: { id: string } }[]).map((r) => r.node.id).sort()).toEqual([...added].sort())

      const renamed = await app.call('POST', '/api/v1/mutate', {
        body: { action: 'update', projectId, nodeId: added[0], data: { label: `Wombat${round} export` } },
      })
      expect(renamed.status).toBe(200)
      const after = await search(`wombat${round}`)
      expect((after.body.results as { node: { id: string; rev: string } }[]).map((r) => [r.node.id, r.node.rev])).toEqual([
        [added[0], renamed.body.node.rev],
      ])
    }
  })
})
