import { afterAll, expect, it } from 'bun:test'
import { restore } from '../src/backup/restore'
import { emptyPglite } from './backup-db'
import { ADMIN_TOKEN, startApp } from './helpers'

// history.md, 2: changes travel in backups and come back with a restore, so the history of a
// restored server is the history it had.
const app = await startApp()
afterAll(() => app.close())

it('keeps every change through a backup and a restore', async () => {
  const p = await app.project()
  await app.call('POST', '/api/v1/mutate', {
    headers: { 'x-agent-id': 'bot' },
    body: { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'G' } } },
  })
  await app.call('POST', '/api/v1/mutate', { body: { action: 'update', projectId: p, nodeId: 'goal-1', data: { label: 'G2' } } })
  const res = await app.handle(new Request('http://arbor.test/admin/v1/backup', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))
  expect(res.status).toBe(200)
  const text = await res.text()
  const target = await emptyPglite()
  try {
    await restore(
      target,
      (async function* () {
        yield* text.split('\n')
      })(),
    )
    const read = (db: Pick<typeof target, 'query'>) =>
      db.query(
        'select id::text, project_id, user_id, agent, via, request_id, action, target_id, before, after, fields from changes order by id',
      )
    const restored = await read(target)
    expect(restored.map((c) => [c.action, c.target_id, c.agent])).toEqual([
      ['add', 'goal-1', 'bot'],
      ['update', 'goal-1', null],
    ])
    expect(restored).toEqual(await read(app.db))
  } finally {
    await target.close()
  }
})
