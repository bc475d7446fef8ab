import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MAX_LINE_BYTES } from '../src/backup/lines'
import { writeBackup } from '../src/backup/service'
import { openDbAsIs } from '../src/db'
import { emptyPostgres } from './backup-db'
import { seedPlan, startApp } from './helpers'

// Issue 46, item 2, through the real `arbor restore`: a tampered backup gives one line on stderr
// naming what is wrong (the line, when one is), exits 1, and leaves the target as it was: empty.
const ROOT = join(import.meta.dir, '..')
const PG = !!process.env.TEST_DATABASE_URL
const work = mkdtempSync(join(tmpdir(), 'arbor-tampered-'))

const app = await startApp()
await seedPlan(app, [
  { id: 'draft-j', type: 'job', parentId: 'draft-a', data: { label: 'Job', iteration: 'S1' } },
  { type: 'task', data: { label: 'Task \u2028 with a separator' } },
])
const chunks: string[] = []
await writeBackup(app.db, async (line) => {
  chunks.push(line)
})
await app.close()
const good = chunks.join('')
const lines = good.trimEnd().split('\n')
const pg = PG ? await emptyPostgres() : null
const targetEnv: Record<string, string> = pg ? { DATABASE_URL: pg.url, DATA_DIR: join(work, 'unused') } : { DATA_DIR: join(work, 'target') }
// On PGlite the target is an empty database made once here, as emptyPostgres makes one on
// PostgreSQL: a restore into a DATA_DIR without one runs initdb (3 s of CPU) and a refused one
// removes what it made, so 30 restores would cost 30 initdbs. A refused restore into a new
// DATA_DIR leaving no directory is test/process.cli-elsewhere's.
if (!pg) await (await openDbAsIs({ dataDir: targetEnv.DATA_DIR! })).close()
afterAll(async () => {
  await pg?.drop()
  rmSync(work, { recursive: true, force: true })
})

async function restoreFile(content: string | Uint8Array, env = targetEnv) {
  const file = join(work, 'b.ndjson')
  writeFileSync(file, content)
  const proc = Bun.spawn([process.execPath, join(ROOT, 'src/cli/main.ts'), 'restore', file], {
    cwd: work,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const timer = setTimeout(() => proc.kill('SIGKILL'), 120_000)
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
  clearTimeout(timer)
  return { stderr, code }
}

// where things are in the good backup (1-based line numbers are index + 1)
const at = (pred: (l: Record<string, unknown>) => boolean) => lines.findIndex((l, i) => i > 0 && pred(JSON.parse(l)))
const node = at((l) => l.t === 'nodes')
const lastNode = lines.findLastIndex((l) => l.startsWith('{"t":"nodes"'))
const seq = at((l) => typeof l.s === 'string')
const end = lines.length - 1
const header = JSON.parse(lines[0]!)
const endLine = JSON.parse(lines[end]!)
const nodeRow = JSON.parse(lines[node]!)
const nodeCount = lines.filter((l) => l.startsWith('{"t":"nodes"')).length
const tablesWithRows = header.tables.map((t: { name: string }) => t.name)
const withLine = (i: number, text: string) => lines.map((l, j) => (j === i ? text : l)).join('\n')
const row = (r: Record<string, unknown>) => JSON.stringify({ t: 'nodes', r: { ...nodeRow.r, ...r } })
const encoder = new TextEncoder()
/** The good backup with every trace of `table` taken out, consistently: header, rows, end line. */
const withoutTable = (table: string) => {
  expect(lines.some((l) => l.startsWith(`{"t":"${table}"`))).toBe(true)
  const { [table]: _, ...rows } = endLine.rows
  return [
    JSON.stringify({ ...header, tables: header.tables.filter((t: { name: string }) => t.name !== table) }),
    ...lines.slice(1, end).filter((l) => !l.startsWith(`{"t":"${table}"`)),
    JSON.stringify({ end: true, rows }),
  ].join('\n')
}
const L = (i: number) => `line ${i + 1}: `

/** [what, the tampered backup, what stderr says after "arbor restore: "] */
const cases: [string, string | Uint8Array, string | RegExp][] = [
  ['an empty file', '', 'the backup is empty'],
  ['a first line that is not JSON', `garbage\n${lines.slice(1).join('\n')}`, 'this is not an Arbor backup: its first line is not JSON'],
  [
    'a header whose tables are not a list',
    withLine(0, JSON.stringify({ ...header, tables: 7 })),
    /^line 1: the header's "tables" must list/,
  ],
  [
    'cut in the middle of a row',
    `${lines.slice(0, node).join('\n')}\n${lines[node]!.slice(0, 30)}`,
    new RegExp(`^${L(node)}not valid JSON \\(.*\\): the line was cut in the middle or altered`),
  ],
  [
    'cut in the middle of the end line',
    `${lines.slice(0, end).join('\n')}\n${lines[end]!.slice(0, 20)}`,
    new RegExp(`^${L(end)}not valid JSON`),
  ],
  [
    'cut at a line boundary (no end line)',
    `${lines.slice(0, end).join('\n')}\n`,
    'the backup is cut short (no end line): it was not written to the end',
  ],
  ['a line of invalid JSON', withLine(node, '{"t":"nodes","r":{"id":}}'), new RegExp(`^${L(node)}not valid JSON`)],
  ['null', withLine(node, 'null'), `${L(node)}not a row, a sequence or the end line of an Arbor backup (it is null)`],
  ['a number', withLine(node, '42'), `${L(node)}not a row, a sequence or the end line of an Arbor backup (it is a number)`],
  ['a string', withLine(node, '"text"'), `${L(node)}not a row, a sequence or the end line of an Arbor backup (it is a string)`],
  ['an array', withLine(node, '[1,2]'), `${L(node)}not a row, a sequence or the end line of an Arbor backup (it is an array)`],
  ['an object of no known kind', withLine(node, '{"x":1}'), `${L(node)}not a row, a sequence or the end line of an Arbor backup`],
  ['a table name that is not a string', withLine(node, '{"t":5,"r":{}}'), `${L(node)}a row's table ("t") must be a string`],
  ['a row that is not an object', withLine(node, '{"t":"nodes","r":null}'), `${L(node)}a row ("r") must be a JSON object of its columns`],
  [
    'a value of the wrong type',
    withLine(node, row({ created_at: 'banana' })),
    new RegExp(`^${L(node)}table nodes: invalid input syntax for type timestamp with time zone: "banana"`),
  ],
  [
    'a parent that is not there',
    withLine(node, row({ project_id: 'ghost' })),
    new RegExp(`^${L(node)}table nodes: .*foreign key constraint`),
  ],
  [
    'a duplicated primary key',
    [...lines.slice(0, node + 1), lines[node], ...lines.slice(node + 1)].join('\n'),
    new RegExp(`^${L(node + 1)}table nodes: duplicate key value violates unique constraint`),
  ],
  ['a column the header does not list', withLine(node, row({ zzz: 1 })), `${L(node)}table nodes has no column zzz in the header`],
  [
    'a row of a table the header does not list',
    withLine(node, '{"t":"ghosts","r":{}}'),
    `${L(node)}a row of table ghosts, which the header does not list`,
  ],
  [
    'a sequence naming an unknown relation',
    withLine(seq, '{"s":"no_such_seq","v":1,"c":true}'),
    `${L(seq)}sequence no_such_seq is not one of this schema's`,
  ],
  [
    'a sequence value that is not an integer',
    withLine(seq, `{"s":${JSON.stringify(JSON.parse(lines[seq]!).s)},"v":"x","c":true}`),
    `${L(seq)}a sequence line needs a name ("s"), an integer value ("v") and a boolean ("c")`,
  ],
  [
    'a row longer than any backup writes',
    withLine(node, row({ data: { label: 'x'.repeat(MAX_LINE_BYTES) } })),
    `${L(node)}longer than 64 MiB, which no row of an Arbor backup is: the file was altered`,
  ],
  [
    'bytes that are not UTF-8',
    new Uint8Array([
      ...encoder.encode(`${lines.slice(0, node).join('\n')}\n`),
      0x7b,
      0xff,
      0xfe,
      0x7d,
      0x0a,
      ...encoder.encode(lines.slice(node + 1).join('\n')),
    ]),
    `${L(node)}not UTF-8 text: the file was altered or is not an Arbor backup`,
  ],
  [
    'a line after the end line',
    `${good}${lines[node]}\n`,
    `${L(end + 1)}the backup goes on after its end line (line ${end + 1}): the file was altered`,
  ],
  [
    'an end line that counts only some tables (the probe: 8 of 25)',
    withLine(end, JSON.stringify({ end: true, rows: Object.fromEntries(Object.entries(endLine.rows).slice(0, 8)) })),
    new RegExp(`^${L(end)}the end line announces no row count for table \\w+, which the header lists`),
  ],
  [
    'an end line that counts a table the header does not list',
    withLine(end, JSON.stringify({ end: true, rows: { ...endLine.rows, ghosts: 0 } })),
    `${L(end)}the end line counts table ghosts, which the header does not list`,
  ],
  [
    // issue 50, 7: a table dropped whole (its header entry, rows and count) restored with exit 0, that table empty
    'a whole table dropped (its header entry, its rows and its count)',
    withoutTable('changes'),
    `the backup lacks table changes, which its schema (at ${header.migrations.at(-1)}) has: the file was altered or cut`,
  ],
  [
    'a row taken out (the end line announces more)',
    lines.filter((_, i) => i !== lastNode).join('\n'),
    `table nodes: the end line (line ${end}) announces ${nodeCount} rows but the backup holds ${nodeCount - 1}`,
  ],
]

describe('arbor restore of a tampered backup', () => {
  it('has tables to tamper with', () => {
    expect([node > 0, seq > 0, nodeCount >= 5, tablesWithRows.length > 8]).toEqual([true, true, true, true])
  })
  for (const [what, content, message] of cases)
    it(`refuses ${what} in one line, exit 1`, async () => {
      const res = await restoreFile(content)
      expect(res.code).toBe(1)
      expect(res.stderr.split('\n')).toEqual([expect.any(String), '']) // one line, no stack trace
      const said = res.stderr.replace(/^arbor restore: /, '').replace(/; nothing was restored\n$/, '')
      if (typeof message === 'string') expect(said).toBe(message)
      else expect(said).toMatch(message)
      expect(res.stderr).toStartWith('arbor restore: ')
      expect(res.stderr).toEndWith('; nothing was restored\n')
    })

  it('refuses a file wrong without a database before it opens one: a DATABASE_URL where nothing answers', async () => {
    // port 1 refuses every connection: a restore that opened the database first would say so instead
    const env = { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nothing', DATA_DIR: join(work, 'unused') }
    const cut = await restoreFile(`${lines.slice(0, end).join('\n')}\n`, env)
    expect([cut.code, cut.stderr]).toEqual([
      1,
      'arbor restore: the backup is cut short (no end line): it was not written to the end; nothing was restored\n',
    ])
    // a good file gets as far as the database, which is not there: said in one line (src/cli/main.ts), no stack trace
    const ok = await restoreFile(good, env)
    expect([ok.code, ok.stderr]).toEqual([
      1,
      expect.stringMatching(
        /^arbor restore: the database of DATABASE_URL cannot be used: .*\(ECONNREFUSED\); check DATABASE_URL and that PostgreSQL is running\n$/,
      ),
    ])
  })

  it('left the target empty, without even a schema, and the good backup then restores into it', async () => {
    const db = await openDbAsIs({ dataDir: targetEnv.DATA_DIR!, databaseUrl: targetEnv.DATABASE_URL })
    try {
      const tables = await db.query<{ n: number }>(
        `select count(*)::int as n from pg_class c join pg_namespace s on s.oid = c.relnamespace where s.nspname = current_schema() and c.relkind = 'r'`,
      )
      expect(Number(tables[0]!.n)).toBe(0)
    } finally {
      await db.close()
    }
    const res = await restoreFile(good)
    expect([res.code, res.stderr.replace(/\d+ rows/, 'N rows').replace(/ into .*\n/, '\n')]).toEqual([
      0,
      `arbor: restored N rows of ${header.tables.length} tables\n`,
    ])
  })
})
