import { afterAll, describe, expect, it } from 'bun:test'
import { restore } from '../src/backup/restore'
import { writeBackup } from '../src/backup/service'
import { migrate } from '../src/db/migrate'
import { contents, emptyPglite } from './backup-db'
import { startApp } from './helpers'

// Backup and restore name no table: the backup reads the catalog, the restore takes the header's
// tables and checks them against the schema the migrations built. So a table a new migration
// adds (the history's `changes`, migration 0014) travels with no change to src/backup. Here a
// table no code knows, made as a migration would make it, on both sides, proves it.
const app = await startApp()
afterAll(() => app.close())

const TABLE = `create table history_probe (
  id bigserial primary key,
  project_id text not null references projects (id),
  parent_id bigint references history_probe (id),
  payload jsonb not null,
  note text,
  at timestamptz not null default now(),
  note_length int generated always as (length(note)) stored
)`

async function* linesOf(text: string) {
  yield* text.split('\n')
}

describe('a table no code names', () => {
  it('is backed up from the catalog and restored from the header, rows, self-references, generated columns and sequence', async () => {
    const p = await app.project()
    await app.db.exec(TABLE)
    // children first on disk: the restore orders a table that references itself
    await app.db.query(
      `insert into history_probe (id, project_id, parent_id, payload, note) overriding system value values
        (3, $1, 2, '{"op":"update","n":1.50}', 'third \u2028 line'), (2, $1, 1, '[1, "two"]', null), (1, $1, null, '{}', 'root')`,
      [p],
    )
    await app.db.query(`select setval('history_probe_id_seq', 3)`)
    const chunks: string[] = []
    await writeBackup(app.db, async (line) => {
      chunks.push(line)
    })
    const text = chunks.join('')
    const header = JSON.parse(text.split('\n')[0]!)
    expect(header.tables.find((t: { name: string }) => t.name === 'history_probe')).toEqual({
      name: 'history_probe',
      columns: ['id', 'project_id', 'parent_id', 'payload', 'note', 'at', 'note_length'],
      generated: ['note_length'],
    })
    // the target: the schema as the migrations (here: this build's, and then the new table) make it
    const target = await emptyPglite()
    try {
      await migrate(target)
      await target.exec(TABLE)
      const counts = await restore(target, linesOf(text))
      expect(counts.history_probe).toBe(3)
      expect(await contents(target)).toEqual(await contents(app.db))
      const [next] = await target.query<{ id: number }>(`insert into history_probe (project_id, payload) values ($1, '{}') returning id`, [
        p,
      ])
      expect(Number(next!.id)).toBe(4)
    } finally {
      await target.close()
    }
  })
})
