import { afterAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { approachWithJobs, sqlLiteral, startApp } from './helpers'

// Statements that look a list of ids up (`$2::text[]`) are prepared (PGlite's runner, postgres.js)
// and, after five runs, may keep a generic plan, made without the ids or the project. As
// `id = any($2)` and a join on the parent, sql/nodes/with-ancestors.sql and
// sql/search/ancestors-many.sql read every node of the project in their generic plan (nodes_order
// on a table no analyze had seen, a sequential scan once analyzed): a few nodes' ancestors cost
// what the project holds (bench/id-list-plans.ts). Found by lateral probes of the primary key
// instead, as sql/nodes/subtree.sql finds its roots, their generic plans read nothing else.
const app = await startApp()
afterAll(() => app.close())

const sql = (file: string) => readFileSync(join(import.meta.dir, '..', 'sql', file), 'utf8').replace(/^--.*$/gm, '')
/** the statement's generic plan and what it returns under it */
const generic = (text: string, params: unknown[]) =>
  app.db.tx(async (tx) => {
    await tx.exec(`prepare id_list as ${text}`)
    await tx.exec('set local plan_cache_mode = force_generic_plan')
    const args = params.map(sqlLiteral).join(', ')
    const plan = await tx.query<Record<string, string>>(`explain execute id_list(${args})`)
    const rows = await tx.query<Record<string, unknown>>(`execute id_list(${args})`)
    await tx.exec('deallocate id_list')
    return { plan: plan.map((r) => Object.values(r)[0]).join('\n'), rows }
  })

const keyOnly = (plan: string) => {
  expect(plan).toContain('nodes_pkey')
  expect(plan).not.toMatch(/Seq Scan on nodes|Bitmap Heap Scan on nodes|nodes_order|nodes_parent/)
}

describe('statements of a list of ids, their generic plans', () => {
  it('probe the primary key for the ids and their ancestors, before and after an analyze, and return the same rows', async () => {
    const p = await app.project()
    const { goal, need, approach, jobs } = await approachWithJobs(app, p, 400)
    const [j1, j2] = [jobs[7]!, jobs[300]!]

    for (const when of ['no analyze yet', 'analyzed']) {
      if (when === 'analyzed') await app.db.exec('analyze nodes')

      const up = await generic(sql('nodes/with-ancestors.sql'), [p, [j1, j2, j1]])
      keyOnly(up.plan)
      expect(up.rows.map((r) => r.id).sort()).toEqual([goal, need, approach, j1, j2].sort())
      const job = up.rows.find((r) => r.id === j1)!
      expect(job.parent_id).toBe(approach)
      expect(job.type).toBe('job')
      expect(typeof job.rev === 'string' || typeof job.rev === 'number').toBe(true)

      const many = await generic(sql('search/ancestors-many.sql'), [p, [need, j1, j1, goal]])
      keyOnly(many.plan)
      const got = many.rows.map((r) => [String(r.node_id), Number(r.depth), r.id, r.type, r.label] as const)
      // ordered by node, then depth (the node ids' order is the database's collation)
      for (let i = 1; i < got.length; i++)
        if (got[i]![0] === got[i - 1]![0]) expect(got[i]![1]).toBe(got[i - 1]![1] + 1)
        else expect(got.slice(0, i).some((g) => g[0] === got[i]![0])).toBe(false)
      expect(got.map((g) => g.join(' ')).sort()).toEqual(
        [
          [j1, 1, approach, 'approach', 'A'],
          [j1, 2, need, 'need', 'N'],
          [j1, 3, goal, 'goal', 'G'],
          [need, 1, goal, 'goal', 'G'],
        ]
          .map((g) => g.join(' '))
          .sort(),
      )
    }
  })
})
