import { afterAll, describe, expect, it } from 'bun:test'
import type { Db } from '../src/db'
import { approachWithJobs, sqlLiteral, startApp } from './helpers'

// A batch's adds read their parent with the row locked (src/nodes/read.ts loadNodes), a prepared
// statement. As `project_id = $1 and id = any($2)` (sql/nodes/lock-many.sql) its generic plan,
// made on a table no analyze had seen yet and kept, found the id by reading every node of the
// project (nodes_order) and filtering: the parent's read grew with the nodes added beneath it
// (~1 ms after 80 batches of 100 jobs under one approach, bench/parent-read.ts). One id is read
// with sql/nodes/lock-one.sql, whose generic plan is a probe of the key.
const app = await startApp()
afterAll(() => app.close())

describe("an add's parent read", () => {
  it('in a batch, probes the primary key in its generic plan, not the project, on a table no analyze has seen', async () => {
    const p = await app.project()
    const { approach } = await approachWithJobs(app, p, 600)

    // the statement the app locks the parent with, as it sends it
    const reads: { text: string; params: unknown[] }[] = []
    const real = app.deps.db
    const wrap = (db: Db): Db =>
      new Proxy(db, {
        get(target, key) {
          if (key === 'query')
            return (text: string, params: unknown[] = []) => {
              if (/from nodes\s+where project_id = \$1 and id = /.test(text) && /for update\s*$/.test(text)) reads.push({ text, params })
              return target.query(text, params)
            }
          if (key === 'tx') return <T>(run: (tx: Db) => Promise<T>) => target.tx((tx) => run(wrap(tx)))
          const value = Reflect.get(target, key)
          return typeof value === 'function' ? value.bind(target) : value
        },
      })
    app.deps.db = wrap(real)
    try {
      const more = await app.call('POST', '/api/v1/mutate', {
        body: {
          action: 'batch',
          projectId: p,
          mutations: ['K1', 'K2'].map((label) => ({ action: 'add', node: { type: 'job', parentId: approach, data: { label } } })),
        },
      })
      expect(more.status).toBe(200)
    } finally {
      app.deps.db = real
    }
    expect(reads).toHaveLength(1)
    const { text, params } = reads[0]!
    expect(params).toContain(p)

    const plan = await app.db.tx(async (tx) => {
      await tx.exec(`prepare parent_read as ${text.replace(/^--.*$/gm, '')}`)
      await tx.exec('set local plan_cache_mode = force_generic_plan')
      const rows = await tx.query<Record<string, string>>(`explain execute parent_read(${params.map(sqlLiteral).join(', ')})`)
      const found = await tx.query<{ id: string }>(`execute parent_read(${params.map(sqlLiteral).join(', ')})`)
      await tx.exec('deallocate parent_read')
      return { text: rows.map((r) => Object.values(r)[0]).join('\n'), ids: found.map((r) => r.id) }
    })
    expect(plan.ids).toEqual([approach])
    expect(plan.text).toContain('nodes_pkey')
    expect(plan.text).not.toMatch(/Seq Scan on nodes|Bitmap Heap Scan on nodes|nodes_order|nodes_parent/)
  })
})
