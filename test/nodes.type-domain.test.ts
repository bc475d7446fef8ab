import { afterAll, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { migrations } from '../sql/migrations'
import { RestoreError, restore } from '../src/backup/restore'
import type { Db } from '../src/db'
import { migrate } from '../src/db/migrate'
import { openPglite } from '../src/db/pglite'
import { openPostgres } from '../src/db/postgres'
import { type InsertRow, insertMany } from '../src/nodes/queries'
import { emptyPglite, emptyPostgres } from './backup-db'
import { ADMIN_TOKEN, startApp } from './helpers'

// api.md: a node's type is goal, need, approach, job or task. Until migration 0045 the table's check
// nodes_type_check held that rule, planned again by every statement that inserted or updated a
// node (bench/writes.md, the twelfth pass); since then the domain node_type holds it, and every
// statement that writes a node's type casts it to that domain. No statement updates a node's type.

const TYPES = ['goal', 'need', 'approach', 'job', 'task'] as const

/**
 * The statements of `sql` that write a node's type without casting it to node_type: an insert
 * into nodes (or a merge) without the cast, an update of nodes that sets `type` without it.
 */
function typeWritesUncast(sql: string): string[] {
  const text = sql.replace(/--.*$/gm, '')
  return text
    .split(';')
    .map((s) => s.trim())
    .filter((s) => {
      if (/\b(insert\s+into|merge\s+into)\s+nodes\b/i.test(s)) return !/::node_type\b/i.test(s)
      const update = /\bupdate\s+nodes\b(?:\s+(?:as\s+)?(?!set\b)\w+)?\s+set\b/i.exec(s)
      if (!update) return false
      const set = setTargets(s.slice(update.index + update[0].length))
      return set.includes('type') && !/::node_type\b/i.test(s)
    })
}

/** The columns an update's SET list assigns: each top-level item's target, up to FROM, WHERE or RETURNING. */
function setTargets(rest: string): string[] {
  const items: string[] = []
  let depth = 0
  let item = ''
  const words = rest.split(/(\(|\)|,|'(?:[^']|'')*'|\s+)/).filter((w) => w !== undefined && w !== '')
  for (const w of words) {
    if (w === '(') depth++
    if (w === ')') depth--
    if (depth === 0 && /^(from|where|returning)$/i.test(w)) break
    if (depth === 0 && w === ',') {
      items.push(item)
      item = ''
    } else item += w
  }
  items.push(item)
  // `a = …`, `n.a = …` or `(a, b) = …`: the names before the first `=`
  return items.flatMap((i) =>
    (i.split('=')[0] ?? '')
      .replace(/[()]/g, ' ')
      .split(/[\s,]+/)
      .filter(Boolean)
      .map((c) => c.replace(/^\w+\./, '').toLowerCase()),
  )
}

/** every .sql file under sql/ (the migrations' functions too) and every .ts file under src/ */
function sources(): { file: string; text: string }[] {
  const root = join(import.meta.dir, '..')
  const out: { file: string; text: string }[] = []
  for (const [dir, ext] of [
    ['sql', '.sql'],
    ['src', '.ts'],
  ] as const)
    for (const f of readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }))
      if (f.endsWith(ext)) out.push({ file: `${dir}/${f}`, text: readFileSync(join(root, dir, f), 'utf8') })
  return out
}

describe("the statements that write a node's type (migration 0045)", () => {
  it('the reader finds a type written without the cast, and passes one written with it or not written', () => {
    expect(typeWritesUncast('insert into nodes (project_id, id, type) values ($1, $2, $3)')).toHaveLength(1)
    expect(typeWritesUncast('insert into nodes (project_id, id, type) values ($1, $2, $3::node_type)')).toEqual([])
    expect(typeWritesUncast('update nodes set type = $3 where project_id = $1 and id = $2')).toHaveLength(1)
    expect(typeWritesUncast('update nodes n set data = $3, type = x.t from y x where n.id = x.id')).toHaveLength(1)
    expect(typeWritesUncast('update nodes set (data, type) = ($3, $4) where id = $2')).toHaveLength(1)
    expect(typeWritesUncast('update nodes set type = $3::node_type where id = $2')).toEqual([])
    expect(typeWritesUncast("update nodes set data = $3 where type in ('job', 'task') and data ->> 'type' = $2")).toEqual([])
    expect(typeWritesUncast("update nodes set data = (select jsonb_object_agg(k, 1) from x where type = 'a') where id = $1")).toEqual([])
  })

  it('every statement under sql/ and src/ that writes a node’s type casts it to node_type', () => {
    const writers: string[] = []
    for (const { file, text } of sources()) {
      const clean = text.replace(/--.*$/gm, '')
      if (/\b(insert\s+into|merge\s+into|update)\s+nodes\b/i.test(clean)) writers.push(file)
      expect({ file, uncast: typeWritesUncast(text) }).toEqual({ file, uncast: [] })
    }
    // what it read: the insert, and the updates that do not set the type
    expect(writers).toEqual(expect.arrayContaining(['sql/nodes/insert-many.sql', 'sql/nodes/update.sql', 'sql/nodes/move-iteration.sql']))
  })

  it('a restore checks every domain a statement casts to (sql/backup/cast-rules.sql): its generic insert casts to none', () => {
    const all = sources()
    const domains = new Set(all.flatMap(({ text }) => [...text.matchAll(/create\s+domain\s+(\w+)/gi)].map((m) => m[1]!.toLowerCase())))
    const cast = new Set(
      all
        .filter(({ file }) => !file.startsWith('sql/migrations/') && file !== 'sql/backup/cast-rules.sql')
        .flatMap(({ text }) => [...text.replace(/--.*$/gm, '').matchAll(/::(\w+)/g)].map((m) => m[1]!.toLowerCase()))
        .filter((t) => domains.has(t)),
    )
    expect([...cast].sort()).toEqual(['change_target_kind', 'node_type'])
    const rules = all.find(({ file }) => file === 'sql/backup/cast-rules.sql')!.text.replace(/--.*$/gm, '')
    expect([...cast].filter((d) => !rules.includes(`::${d}`))).toEqual([])
  })
})

const app = await startApp()
afterAll(() => app.close())

describe('the database refuses a type that is not one of the five', () => {
  const row = (id: string, type: string): InsertRow => ({
    id,
    type: type as InsertRow['type'],
    parent_id: null,
    data: { label: id },
    created_at: null,
    classified: false,
  })

  it('through the statement that inserts nodes, storing nothing of it; the five are stored', async () => {
    const p = await app.project()
    const refused = await app.db.tx((tx) => insertMany(tx, p, [row('goal-1', 'goal'), row('x-1', 'project')])).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(Error)
    expect(String((refused as Error).message)).toMatch(/node_type/)
    expect((refused as { code?: string }).code).toBe('23514')
    expect(await app.db.query('select id from nodes where project_id = $1', [p])).toEqual([])
    await app.db.tx((tx) =>
      insertMany(
        tx,
        p,
        TYPES.map((t) => row(`${t}-1`, t)),
      ),
    )
    expect((await app.db.query('select type from nodes where project_id = $1 order by type', [p])).map((r) => r.type)).toEqual(
      [...TYPES].sort(),
    )
  })
})

describe('migration 0045 on a database holding nodes', () => {
  it('keeps every node and its type, leaves no check on the table, and the insert still refuses a bad type', async () => {
    const PG_URL = process.env.TEST_DATABASE_URL
    const name = `arbor_test_type_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
    let drop = async () => {}
    let db: Db
    if (PG_URL) {
      const admin = await openPostgres(PG_URL)
      await admin.exec(`create database ${name}`)
      const url = new URL(PG_URL)
      url.pathname = `/${name}`
      db = await openPostgres(url.toString())
      drop = async () => {
        await admin.exec(`drop database if exists ${name} with (force)`)
        await admin.close()
      }
    } else db = await openPglite(null)
    try {
      const at = migrations.findIndex((m) => m.name === '0045-node-type-domain')
      await migrate(db, migrations[at - 1]!.name)
      await db.exec(`
        insert into users (id, name) values ('u1', 'U');
        insert into projects (id, name, owner_id) values ('p1', 'P', 'u1');
        insert into nodes (project_id, id, type, parent_id, data) values
          ('p1', 'goal-1', 'goal', null, '{"label":"G"}'),
          ('p1', 'need-1', 'need', 'goal-1', '{"label":"N"}'),
          ('p1', 'approach-1', 'approach', 'need-1', '{"label":"A"}'),
          ('p1', 'job-1', 'job', 'approach-1', '{"label":"J"}'),
          ('p1', 'task-1', 'task', null, '{"label":"T"}');
      `)
      const before = await db.query('select id, type, parent_id, data, rev from nodes order by id')
      // before 0045 the table's check refuses a bad type
      await expect(db.exec(`insert into nodes (project_id, id, type, data) values ('p1', 'x-0', 'project', '{}')`)).rejects.toThrow(
        /nodes_type_check/,
      )
      expect(await migrate(db)).toContain('0045-node-type-domain')
      expect(await db.query('select id, type, parent_id, data, rev from nodes order by id')).toEqual(before)
      expect(await db.query(`select conname from pg_constraint where conrelid = 'nodes'::regclass and contype = 'c'`)).toEqual([])
      const row = (id: string, type: string): InsertRow => ({
        id,
        type: type as InsertRow['type'],
        parent_id: 'approach-1',
        data: { label: id },
        created_at: null,
        classified: false,
      })
      await expect(db.tx((tx) => insertMany(tx, 'p1', [row('x-1', 'project')]))).rejects.toThrow(/node_type/)
      await db.tx((tx) => insertMany(tx, 'p1', [row('job-2', 'job')]))
      expect((await db.query(`select type from nodes where id = 'job-2'`))[0]).toEqual({ type: 'job' })
    } finally {
      await db.close()
      await drop()
    }
  }, 120_000)
})

describe('a restore refuses a backup whose rows break a rule a domain holds', async () => {
  const p = await app.project()
  const added = await app.call('POST', '/api/v1/mutate', {
    body: { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'G' } } },
  })
  expect(added.status).toBe(200)
  const res = await app.handle(new Request('http://arbor.test/admin/v1/backup', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))
  expect(res.status).toBe(200)
  const lines = (await res.text()).trimEnd().split('\n')
  /** the backup with the first row of `table` given `column` = `value` */
  const tampered = (table: string, column: string, value: string) => {
    const at = lines.findIndex((l) => l.startsWith(`{"t":"${table}"`))
    expect(at).toBeGreaterThan(0)
    const line = JSON.parse(lines[at]!)
    return lines.map((l, i) => (i === at ? JSON.stringify({ ...line, r: { ...line.r, [column]: value } }) : l))
  }
  async function* linesOf(xs: string[]) {
    yield* xs
  }
  const into = async (xs: string[]) => {
    if (!process.env.TEST_DATABASE_URL) {
      const target = await emptyPglite()
      try {
        return await restore(target, linesOf(xs))
      } finally {
        await target.close()
      }
    }
    const pg = await emptyPostgres()
    const target = await pg.db()
    try {
      return await restore(target, linesOf(xs))
    } finally {
      await target.close()
      await pg.drop()
    }
  }

  it('a node of no known type, a change of no known target kind; the backup untouched restores', async () => {
    for (const [table, column, domain] of [
      ['nodes', 'type', 'node_type'],
      ['changes', 'target_kind', 'change_target_kind'],
    ] as const) {
      const refused = await into(tampered(table, column, 'project')).catch((e: unknown) => e)
      expect(refused).toBeInstanceOf(RestoreError)
      expect((refused as Error).message).toMatch(new RegExp(`^a row the schema refuses: .*\\b${domain}\\b`))
    }
    expect((await into(lines)).nodes).toBeGreaterThan(0)
  }, 120_000)
})
