import { afterAll, describe, expect, it } from 'bun:test'
import fc from 'fast-check'
import castRulesSql from '../sql/backup/cast-rules.sql' with { type: 'text' }
import { splitLines } from '../src/backup/lines'
import { restore } from '../src/backup/restore'
import { writeBackup } from '../src/backup/service'
import type { Db } from '../src/db'
import { contents, emptyPglite, emptyPostgres } from './backup-db'
import { ADMIN_TOKEN, seedPlan, startApp } from './helpers'

// Issue 46, item 1: backup → restore is the identity over arbitrary Unicode, in every text and
// JSON column of every table (found in the catalog, so a table a new migration adds is covered
// too), on the database of this run (PGlite, or PostgreSQL with TEST_DATABASE_URL).
const PG = !!process.env.TEST_DATABASE_URL
const app = await startApp()
afterAll(() => app.close())

// rows in as many tables as an ordinary use fills
const p = await seedPlan(app, [
  { id: 'draft-j', type: 'job', parentId: 'draft-a', data: { label: 'Job', iteration: 'S1' } },
  { type: 'task', data: { label: 'Task' } },
])
app.deps.config.webhookAllowInsecure = true
expect((await app.call('POST', '/api/v1/webhooks', { body: { projectId: p, url: 'http://127.0.0.1:9/hook' } })).status).toBeLessThan(300)
expect((await app.call('POST', '/api/v1/share', { body: { projectId: p } })).status).toBeLessThan(300)
expect((await app.call('POST', '/api/v1/feedback', { body: { kind: 'note', summary: 's', context: { a: 1 } } })).status).toBe(200)
const user = await app.user({ name: 'second' })
expect((await app.call('POST', `/admin/v1/users/${user.id}/api-keys`, { key: ADMIN_TOKEN, body: { label: 'ci' } })).status).toBe(201)
const keyed = await app.call('POST', '/api/v1/mutate', {
  headers: { 'idempotency-key': 'prop-1' },
  body: { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Idempotent' } } },
})
expect(keyed.status).toBe(200)

// the columns whose rule a domain cast keeps (migrations 0042, 0045), which a restore checks
// (sql/backup/cast-rules.sql: `count(<column>::<domain>) from <table>`): states the schema checks too
const castRules = [...castRulesSql.matchAll(/count\((\w+)::\w+\) from (\w+)/g)].map((m) => `${m[2]}.${m[1]}`)
expect(castRules).toContain('nodes.type')

/**
 * Every text and JSON column that no constraint, index or domain cast names (those hold ids and
 * states the schema checks; overwriting them would test the schema, not the backup), table by table.
 */
const columns = (
  await app.db.query<{ t: string; c: string; json: boolean }>(
    `select c.relname as t, a.attname as c, t.typname in ('json', 'jsonb') as json
   from pg_attribute a
   join pg_class c on c.oid = a.attrelid
   join pg_namespace n on n.oid = c.relnamespace
   join pg_type t on t.oid = a.atttypid
   where n.nspname = current_schema() and c.relkind = 'r' and c.relname <> 'arbor_migrations'
     and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
     and t.typname in ('text', 'varchar', 'json', 'jsonb')
     and not exists (select 1 from pg_constraint k where k.conrelid = c.oid and k.contype <> 'n' and a.attnum = any (k.conkey))
     and not exists (select 1 from pg_index i where i.indrelid = c.oid and (a.attnum = any (i.indkey) or (i.indisunique and i.indexprs is not null)))
   order by 1, 2`,
  )
).filter((c) => !castRules.includes(`${c.t}.${c.c}`))
const filled = new Set(
  (
    await Promise.all(
      [...new Set(columns.map((c) => c.t))].map(async (t) =>
        (await app.db.query<{ any: boolean }>(`select exists (select 1 from "${t}") as any`))[0]!.any ? t : null,
      ),
    )
  ).filter((t): t is string => t !== null),
)

/** NUL is the one character PostgreSQL's text cannot hold: it is refused at the API, so it is left out here. */
const noNul = (s: string) => s.replaceAll('\u0000', '')
const SPECIAL = ['\u2028', '\u2029', '\u0085', '\n', '\r', '"', '\\', '\u001f', '\ufeff', '\uffff', '🚀', 'e\u0301', '\u202e']
const text = fc
  .oneof(
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.string({ unit: fc.constantFrom(...SPECIAL, 'a', ' '), maxLength: 12 }),
    fc.constantFrom(...SPECIAL),
  )
  .map(noNul)
const json = fc
  .jsonValue({ stringUnit: 'binary', maxDepth: 3 })
  .map((v) => JSON.parse(JSON.stringify(v).replaceAll('\\u0000', '')) as unknown)
  .chain((v) => fc.tuple(text, text).map(([k, s]) => ({ [k]: s, nested: [v, { [s]: k }] })))

async function overwrite(db: Db, texts: string[], jsons: unknown[]) {
  await db.tx(async (tx) => {
    for (const { t, c, json: isJson } of columns) {
      if (!filled.has(t)) continue
      await tx.exec(`alter table "${t}" disable trigger user`)
      // each row takes one of the values, picked by its position on disk
      if (isJson)
        await tx.query(`update "${t}" set "${c}" = ($1::jsonb) -> (abs(hashtext(ctid::text)) % jsonb_array_length($1::jsonb))`, [
          JSON.stringify(jsons),
        ])
      else await tx.query(`update "${t}" set "${c}" = ($1::text[])[1 + abs(hashtext(ctid::text)) % cardinality($1::text[])]`, [texts])
      await tx.exec(`alter table "${t}" enable trigger user`)
    }
  })
}

async function emptyTarget(): Promise<{ db: Db; drop: () => Promise<void> }> {
  if (!PG) {
    const db = await emptyPglite()
    return { db, drop: () => db.close() }
  }
  const pg = await emptyPostgres()
  const db = await pg.db()
  return {
    db,
    drop: async () => {
      await db.close()
      await pg.drop()
    },
  }
}

/** The backup as the CLI reads a file: bytes in chunks of `size` (cutting characters in two), split by splitLines. */
function linesOf(text: string, size: number) {
  const bytes = new TextEncoder().encode(text)
  return splitLines(
    (async function* () {
      for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size)
    })(),
  )
}

describe('backup → restore', () => {
  it('has text and JSON columns with rows to fill, nodes.data among them', () => {
    expect(columns.some((c) => c.t === 'nodes' && c.c === 'data' && c.json)).toBe(true)
    expect(filled.size).toBeGreaterThan(5)
  })

  it('is the identity over arbitrary Unicode in every text and JSON column', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(text, { minLength: 1, maxLength: 20 }),
        fc.array(json, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 5000 }),
        async (texts, jsons, size) => {
          await overwrite(app.db, texts, jsons)
          const chunks: string[] = []
          await writeBackup(app.db, async (line) => {
            chunks.push(line)
          })
          const written = chunks.join('')
          // every line break other than "\n" is written escaped
          expect(/[\u2028\u2029\u0085]/.test(written)).toBe(false)
          const target = await emptyTarget()
          try {
            await restore(target.db, linesOf(written, size))
            expect(await contents(target.db)).toEqual(await contents(app.db))
          } finally {
            await target.drop()
          }
        },
      ),
      // no shrinking: a run costs 0.2-1 s (a database opened, written and compared), and
      // shrinking one failure runs the property hundreds of times (a failure that does not come
      // again, e.g. under load, makes it try every smaller input: 600 runs, over 4 minutes),
      // so CI showed a timeout and lost the input. The first failing input is reported at once,
      // with its seed and path: pass those here to replay it (and drop endOnFailure to shrink it).
      { numRuns: PG ? 10 : 4, endOnFailure: true },
    )
  })
})
