import { afterAll, expect, it } from 'bun:test'
import { startApp } from './helpers'

// The work state's update trigger asks the work state (and takes the project's work lock) for a
// change of a task's kind only when it makes the task a do-it or no longer one (migration 0055): a
// task classified a memo, the kind most tasks get, takes no lock and runs no recompute, so the
// classify loop need not take the lock before it (src/nodes/classify-loop.ts), and the work state
// stays as work_refresh computes it.
const app = await startApp()
afterAll(() => app.close())

/** The advisory locks the transaction holds after setting task-1's kind to `kind` (null: removed). */
async function locksAfterKind(projectId: string, kind: string | null): Promise<number> {
  return app.db.tx(async (tx) => {
    await tx.query(
      `update nodes set data = case when $2::text is null then data - 'kind' else data || jsonb_build_object('kind', $2::text) end
       where project_id = $1 and id = 'task-1'`,
      [projectId, kind],
    )
    const [row] = await tx.query<{ n: number }>(
      `select count(*)::int as n from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()`,
    )
    return row!.n
  })
}

it("a task's kind changed takes the project's work lock only when it makes the task a do-it or no longer one", async () => {
  const p = await app.project()
  const added = await app.call('POST', '/api/v1/mutate', {
    body: { action: 'add', projectId: p, node: { type: 'task', data: { label: 'Ideas for the offsite' } } },
  })
  expect(added.status).toBe(200)
  await app.db.query(`update nodes set data = data - 'kind' where project_id = $1 and id = 'task-1'`, [p])
  const steps: [string | null, number][] = []
  for (const kind of ['memo', null, 'do-it', 'memo', 'do-it', null]) steps.push([kind, await locksAfterKind(p, kind)])
  expect(steps).toEqual([
    ['memo', 0],
    [null, 0],
    ['do-it', 1],
    ['memo', 1],
    ['do-it', 1],
    [null, 1],
  ])
  // and the work state followed: task-1 is no work item (kind removed), and none is left behind
  const items = await app.db.query(`select node_id from work_items where project_id = $1`, [p])
  expect(items).toEqual([])
})
