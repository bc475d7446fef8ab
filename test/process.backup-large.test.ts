import { afterAll, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDbAsIs } from '../src/db'
import { LIMITS } from '../src/ports/node-data'
import { contents, emptyPostgres } from './backup-db'
import { startServer } from './process'

// A stopped embedded database holding megabytes of node text is backed up with `arbor backup` and
// restored with `arbor restore` into PostgreSQL (when TEST_DATABASE_URL is set; a new DATA_DIR
// otherwise), and every table comes back the same, the long fields byte for byte. The API keeps a
// text field to LIMITS.textLength characters, so the megabytes are many fields at that length, as
// a user writes them: three-byte characters, emoji and the line separators the backup escapes.
const ROOT = join(import.meta.dir, '..')
const PG = !!process.env.TEST_DATABASE_URL
const work = mkdtempSync(join(tmpdir(), 'arbor-backup-large-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

async function arbor(args: string[], env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, join(ROOT, 'src/cli/main.ts'), ...args], {
    cwd: work,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  // a generous deadline, not a timing: a backup that never ends fails here instead of holding the run
  const timer = setTimeout(() => proc.kill('SIGKILL'), 240_000)
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
  clearTimeout(timer)
  return { stderr, code: proc.signalCode ?? code }
}

/** A field at the API's length limit: `seed` makes each one different. */
function longText(seed: number): string {
  const pieces = ['漢字', 'かな', '한글 ', 'é ', '🚀', '\u2028', '\u2029', '\u0085', '"\\', '\n', 'plan ']
  let out = `${seed} `
  for (let i = seed; out.length < LIMITS.textLength; i = (i * 7 + 3) % 1009) out += pieces[i % pieces.length]
  // cut at the limit, never between the two halves of an emoji
  out = out.slice(0, LIMITS.textLength)
  return /[\ud800-\udbff]$/.test(out) ? out.slice(0, -1) : out
}

/** approaches, each with three fields at the limit: about 180 KB of UTF-8 per approach */
const APPROACHES = 32
const PER_BATCH = 4 // a batch's body stays under the default MAX_BODY_BYTES (1 MiB)

it(`a stopped PGlite with megabytes of text backs up and restores into ${PG ? 'PostgreSQL' : 'a new PGlite'} byte for byte`, async () => {
  const server = await startServer({ DATABASE_URL: '' })
  try {
    const add = async (body: unknown) => {
      const res = await server.call('POST', '/api/v1/mutate', { body })
      expect([res.status, res.body.errors]).toEqual([200, undefined])
    }
    await add({ action: 'addProject', project: { name: 'Large', id: 'large' } })
    await add({
      action: 'batch',
      projectId: 'large',
      mutations: [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'goal', description: longText(1) } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'need', description: longText(2) } } },
      ],
    })
    const [need] = (await server.call('GET', '/api/v1/nodes?projectId=large&type=need')).body.nodes
    for (let b = 0; b < APPROACHES / PER_BATCH; b++)
      await add({
        action: 'batch',
        projectId: 'large',
        mutations: Array.from({ length: PER_BATCH }, (_, i) => {
          const k = 10 + 3 * (b * PER_BATCH + i)
          return {
            action: 'add',
            node: {
              type: 'approach',
              parentId: need.id,
              data: { label: `approach ${k}`, description: longText(k), notes: longText(k + 1), measure: longText(k + 2) },
            },
          }
        }),
      })
    expect(await server.stop()).toBe(0)

    const file = join(work, 'large.ndjson')
    const backup = await arbor(['backup', file], { DATA_DIR: server.env.DATA_DIR! })
    expect([backup.code, backup.stderr]).toEqual([0, `arbor: backup of DATA_DIR ${server.env.DATA_DIR} written to ${file}\n`])
    // three-byte characters are most of it: well over the characters the API took
    expect(statSync(file).size).toBeGreaterThan(APPROACHES * 3 * LIMITS.textLength * 2)
    expect(/[\u2028\u2029\u0085]/.test(readFileSync(file, 'utf8'))).toBe(false)

    const pg = PG ? await emptyPostgres() : null
    const target: Record<string, string> = pg
      ? { DATABASE_URL: pg.url, DATA_DIR: join(work, 'unused') }
      : { DATA_DIR: join(work, 'restored') }
    try {
      const restored = await arbor(['restore', file], target)
      expect([restored.code, restored.stderr]).toEqual([0, expect.stringMatching(/^arbor: restored \d+ rows of \d+ tables into /)])
      const [from, to] = [
        await openDbAsIs({ dataDir: server.env.DATA_DIR! }),
        await openDbAsIs({ dataDir: target.DATA_DIR, databaseUrl: target.DATABASE_URL }),
      ]
      try {
        const fields = `select id, data->>'label' as label, convert_to(data->>'description', 'UTF8') as d, convert_to(coalesce(data->>'notes', ''), 'UTF8') as n,
                               convert_to(coalesce(data->>'measure', ''), 'UTF8') as m from nodes order by id`
        const [a, b] = [await from.query<Record<string, unknown>>(fields), await to.query<Record<string, unknown>>(fields)]
        expect(a.length).toBe(APPROACHES + 2)
        expect(b.map((r) => r.id)).toEqual(a.map((r) => r.id))
        for (const [i, row] of a.entries())
          for (const col of ['d', 'n', 'm'])
            expect(Buffer.from(b[i]![col] as Uint8Array).equals(Buffer.from(row[col] as Uint8Array))).toBe(true)
        const last = a.find((r) => r.label === `approach ${10 + 3 * (APPROACHES - 1)}`)!
        expect(Buffer.from(last.d as Uint8Array).toString('utf8')).toBe(longText(10 + 3 * (APPROACHES - 1)))
        // and every other table, row for row
        expect(await contents(to)).toEqual(await contents(from))
      } finally {
        await from.close()
        await to.close()
      }
    } finally {
      await pg?.drop()
    }
  } finally {
    await server.close()
  }
}, 600_000)
