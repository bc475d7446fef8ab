import { afterAll, describe, expect, it } from 'bun:test'
import subtreeSql from '../sql/nodes/subtree.sql' with { type: 'text' }
import { startApp } from './helpers'

// A delete (and a revert's or a batch's) reads the node and everything beneath it with
// sql/nodes/subtree.sql. On a table no analyze has seen yet (PGlite before its maintenance
// loop's first run, PostgreSQL before autovacuum's) a join of each level's children was planned
// as a hash join over every node of the project, and the roots' generic plan read every node of
// the project to filter on `id = any($2)`: a leaf's delete cost what the project holds.
const app = await startApp()
afterAll(() => app.close())

describe('the subtree read', () => {
  it('finds the roots by their key and each level by an index probe of the parent, not a scan of the project, before any analyze', async () => {
    const p = await app.project()
    const added = await app.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: p,
        mutations: Array.from({ length: 400 }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `Goal ${i}` } } })),
      },
    })
    expect(added.status).toBe(200)
    const ids = added.body.results.map((r: { node: { id: string } }) => r.node.id) as string[]
    const sql = subtreeSql.replace(/^--.*$/gm, '')
    // one connection (a transaction) for the prepared statement; six runs, so that PostgreSQL's
    // plan cache has made its five custom plans and weighed the generic one (what the app's
    // prepared statement keeps)
    const plan = await app.db.tx(async (tx) => {
      await tx.exec(`prepare subtree_plan(text, text[]) as ${sql}`)
      for (const id of ids.slice(0, 6)) await tx.query(`execute subtree_plan('${p}', array['${id}'])`)
      const rows = await tx.query<Record<string, string>>(`explain execute subtree_plan('${p}', array['${ids[10]}'])`)
      await tx.exec('deallocate subtree_plan')
      return rows.map((r) => Object.values(r)[0]).join('\n')
    })
    expect(plan).toContain('nodes_pkey')
    expect(plan).toContain('nodes_parent')
    expect(plan).not.toMatch(/Hash Join|Seq Scan on nodes|Bitmap Heap Scan on nodes/)
  })
})
