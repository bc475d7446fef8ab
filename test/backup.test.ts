import { afterAll, describe, expect, it } from 'bun:test'
import { migrations } from '../sql/migrations'
import { parentsFirst, RestoreError, restore } from '../src/backup/restore'
import { BackupError, writeBackup } from '../src/backup/service'
import { contents, emptyPglite, emptyPostgres } from './backup-db'
import { ADMIN_TOKEN, seedPlan, startApp } from './helpers'

// docs/backup.md: GET /admin/v1/backup, restore into an empty database (PGlite, and PostgreSQL with TEST_DATABASE_URL)
const PG = !!process.env.TEST_DATABASE_URL
const app = await startApp()
afterAll(() => app.close())

async function populate() {
  const p = await seedPlan(app, [
    { id: 'draft-j', type: 'job', parentId: 'draft-a', data: { label: 'Job "quoted": yes', iteration: 'S1' } },
    { type: 'task', data: { label: 'Task ü', status: 'done' } },
  ])
  app.deps.config.webhookAllowInsecure = true // a receiver on this machine; none listens, deliveries stay pending
  const hook = await app.call('POST', '/api/v1/webhooks', { body: { projectId: p, url: 'http://127.0.0.1:9/hook' } })
  expect([hook.status, hook.body.webhook?.secret]).toEqual([hook.status, expect.any(String)])
  expect(hook.status).toBeLessThan(300)
  const share = await app.call('POST', '/api/v1/share', { body: { projectId: p } })
  expect(share.status).toBeLessThan(300)
  const user = await app.user({ name: 'second' })
  const key = await app.call('POST', `/admin/v1/users/${user.id}/api-keys`, { key: ADMIN_TOKEN, body: { label: 'ci' } })
  expect(key.status).toBe(201)
  const idem = await app.call('POST', '/api/v1/mutate', {
    headers: { 'idempotency-key': 'backup-test-1' },
    body: { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Idempotent' } } },
  })
  expect(idem.status).toBe(200)
  const del = await app.call('POST', '/api/v1/mutate', { body: { action: 'delete', projectId: p, nodeId: idem.body.node.id } })
  expect(del.status).toBe(200)
  return p
}

async function backupText(): Promise<string> {
  const res = await app.handle(new Request('http://arbor.test/admin/v1/backup', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toBe('application/x-ndjson')
  return res.text()
}

async function* linesOf(text: string) {
  yield* text.split('\n')
}

describe('backup and restore', async () => {
  await populate()
  const text = await backupText()
  const lines = text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l))

  it('writes a header naming the format and the schema level, every table of the catalog, and an end line', async () => {
    const [header] = lines
    expect(header.format).toBe('arbor-backup')
    expect(header.version).toBe(1)
    expect(header.migrations).toEqual(migrations.map((m) => m.name))
    const tables = Object.keys(await contents(app.db)).sort()
    expect(header.tables.map((t: { name: string }) => t.name).sort()).toEqual(tables)
    expect(lines.at(-1)).toEqual({ end: true, rows: expect.any(Object) })
    // a table comes after the tables it references
    const order = header.tables.map((t: { name: string }) => t.name)
    expect(order.indexOf('users')).toBeLessThan(order.indexOf('projects'))
    expect(order.indexOf('projects')).toBeLessThan(order.indexOf('nodes'))
  })

  it('restores into an empty PGlite database every row of every table, sequences included', async () => {
    const target = await emptyPglite()
    try {
      await restore(target, linesOf(text))
      expect(await contents(target)).toEqual(await contents(app.db))
      // the sequences went on: a new changelog id follows the restored ones
      const [src] = await app.db.query<{ v: number }>('select last_value as v from changelog_id_seq')
      const [dst] = await target.query<{ v: number }>('select last_value as v from changelog_id_seq')
      expect(Number(dst!.v)).toBe(Number(src!.v))
    } finally {
      await target.close()
    }
  })

  it.skipIf(!PG)('restores into an empty PostgreSQL database every row of every table', async () => {
    const pg = await emptyPostgres()
    const target = await pg.db()
    try {
      await restore(target, linesOf(text))
      expect(await contents(target)).toEqual(await contents(app.db))
    } finally {
      await target.close()
      await pg.drop()
    }
  })

  it('refuses a target that has rows, a cut-short backup, and a backup from a newer schema', async () => {
    expect(restore(app.db, linesOf(text))).rejects.toThrow(/not empty \(table \w+ has rows\)/)
    const cut = text.trimEnd().split('\n').slice(0, -1).join('\n')
    const t1 = await emptyPglite()
    await expect(restore(t1, linesOf(cut))).rejects.toThrow('the backup is cut short (no end line)')
    // the failed restore left no rows behind: its rows were one transaction
    expect(Object.values(await contents(t1)).flat()).toEqual([])
    await t1.close()
    const newer = { ...lines[0], migrations: [...lines[0].migrations, '9999-future'] }
    const t2 = await emptyPglite()
    await expect(restore(t2, linesOf(JSON.stringify(newer)))).rejects.toThrow(
      "the backup's schema has migration 9999-future, which this Arbor does not know: restore it with a newer Arbor",
    )
    await expect(restore(t2, linesOf('{"hello":1}'))).rejects.toBeInstanceOf(RestoreError)
    await t2.close()
  })

  it('refuses a row whose line a restore would refuse as too long, naming it, rather than write a backup that cannot be restored', async () => {
    const p = await app.project()
    const long = await app.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Long', description: '\u2028'.repeat(20_000) } } },
    })
    expect(long.status).toBe(200)
    // 20,000 separators are 120,000 bytes once escaped: over a limit of 100,000, under the default
    const written: string[] = []
    const failed = await writeBackup(app.db, async (line) => void written.push(line), new Date(), 100_000).catch((err) => err)
    expect(failed).toBeInstanceOf(BackupError)
    // the first table in the backup's order that holds the text: the change that added it (changes), or the node
    expect(failed.message).toMatch(
      /^a row of table (changes|nodes) \(\{"id":[^…]*…\) takes 0\.1 MiB as a line of the backup, and a restore reads lines of at most 0\.1 MiB: no backup was written$/,
    )
    expect(written.join('')).not.toContain('\\u2028'.repeat(100))
    await writeBackup(app.db, async (line) => void written.push(line))
    expect(written.join('')).toContain('\\u2028'.repeat(20_000))
  })

  it('is one snapshot: a write during the backup is either wholly in it or not at all', async () => {
    const p = await app.project()
    const lines: string[] = []
    const writes: Promise<unknown>[] = []
    await writeBackup(app.db, async (line) => {
      lines.push(line)
      // writes racing the backup: on PostgreSQL they commit beside it, on PGlite they wait for it
      if (writes.length < 5)
        writes.push(
          app.call('POST', '/api/v1/mutate', {
            body: { action: 'add', projectId: p, node: { type: 'goal', data: { label: `w${writes.length}` } } },
          }),
        )
    })
    await Promise.all(writes)
    const target = await emptyPglite()
    await restore(target, linesOf(lines.join('')))
    const [n] = await target.query<{ n: number }>('select count(*)::int as n from nodes where project_id = $1', [p])
    const [e] = await target.query<{ n: number }>(`select count(*)::int as n from events where project_id = $1 and type = 'node.added'`, [
      p,
    ])
    expect(Number(e!.n)).toBe(Number(n!.n))
    await target.close()
  })
})

describe('parentsFirst', () => {
  it('puts every row after the row it references, however deep', () => {
    const rows = Array.from({ length: 5000 }, (_, i) => ({ p: 'x', id: `n${i}`, parent: i ? `n${i - 1}` : null })).reverse()
    const sorted = parentsFirst(rows, [
      [
        ['p', 'parent'],
        ['p', 'id'],
      ],
    ])
    expect(sorted.map((r) => r.id)).toEqual(Array.from({ length: 5000 }, (_, i) => `n${i}`))
  })
})
