import { afterAll, expect, it } from 'bun:test'
import { restore } from '../src/backup/restore'
import { update } from '../src/nodes/queries'
import { emptyPglite, emptyPostgres } from './backup-db'
import { ADMIN_TOKEN, seedPlan, startApp } from './helpers'

// live.md, 1: revisions travel in backups, so a restored server (and a move from PGlite to
// PostgreSQL, which is a restore into the other database) answers the revs it had, checks an
// ifRev read before the move as before, and never hands out a rev it had given already.
const app = await startApp()
afterAll(() => app.close())

const revs = (db: Pick<typeof app.db, 'query'>) =>
  db.query(
    `select 'node' as kind, id, rev::text, field_revs from nodes
     union all select 'iteration', name, rev::text, field_revs from iterations order by 1, 2`,
  )

it('keeps every rev and field rev through a backup and a restore, and the sequence past them', async () => {
  const p = await seedPlan(app, [{ type: 'job', parentId: 'draft-a', data: { label: 'J', iteration: 'S1' } }])
  await app.call('POST', '/api/v1/mutate', { body: { action: 'update', projectId: p, nodeId: 'job-1', data: { description: 'd' } } })
  const res = await app.handle(new Request('http://arbor.test/admin/v1/backup', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))
  expect(res.status).toBe(200)
  const text = await res.text()
  const before = await revs(app.db)
  expect(before.length).toBeGreaterThan(5)
  const targets = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite']
  for (const kind of targets) {
    const pg = kind === 'postgres' ? await emptyPostgres() : null
    const target = pg ? await pg.db() : await emptyPglite()
    try {
      await restore(
        target,
        (async function* () {
          yield* text.split('\n')
        })(),
      )
      expect(await revs(target)).toEqual(before)
      // the next rev given out is past every rev restored: none comes back
      const [next] = await target.query<{ v: string }>(`select nextval('target_revs')::text as v`)
      expect(before.every((r) => BigInt(r.rev) < BigInt(next!.v))).toBe(true)
      // and a change after it (the statement a write sends, which sets them since migration 0040)
      // moves the rev and its field rev past them
      const [old] = await target.query<{ parent_id: string; data: object }>(
        `select parent_id, data from nodes where project_id = $1 and id = 'job-1'`,
        [p],
      )
      await update(target, p, 'job-1', old!.parent_id, { ...old!.data, label: 'moved' }, false, 'label')
      const [job] = await target.query<{ rev: string; label: string }>(
        `select rev::text, field_revs ->> 'label' as label from nodes where project_id = $1 and id = 'job-1'`,
        [p],
      )
      expect(BigInt(job!.rev)).toBeGreaterThan(BigInt(next!.v))
      expect(job!.label).toBe(job!.rev)
    } finally {
      await target.close()
      await pg?.drop()
    }
  }
})
