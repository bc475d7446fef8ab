import { afterAll, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startApp } from './helpers'

// Migration 0046: ANALYZE of `changes` (PGlite's maintenance loop, a server's autovacuum) skips the
// columns that no statement filters, joins, groups or sorts by: their statistics would serve no
// plan, and building them cost PGlite more per write than the change row itself (bench/writes.md,
// "Twelfth pass: history's share in the app"). A statement that reads changes by one of them needs
// its statistics back (a migration that sets them to -1) before this test passes again.
// Migration 0052: the ten columns the reads use keep statistics at a target of 10, so ANALYZE
// samples 3,000 rows instead of 30,000 (bench/writes.md, "Thirteenth pass: history's share").
const SKIPPED = ['before', 'after', 'fields', 'proposal', 'user_name', 'key_id', 'action', 'target_type', 'revert_of']
const SAMPLED = ['project_id', 'id', 'target_id', 'target_kind', 'user_id', 'agent', 'via', 'request_id', 'at', 'txid']
const SQL = join(import.meta.dir, '..', 'sql')

/** Every statement file under sql/ but the migrations. */
function statements(dir = SQL): { file: string; text: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return e.name === 'migrations' ? [] : statements(path)
    return e.name.endsWith('.sql') ? [{ file: path.slice(SQL.length + 1), text: readFileSync(path, 'utf8') }] : []
  })
}

const app = await startApp()
afterAll(() => app.close())

describe('the statistics of changes', () => {
  it('are kept, at a target of 10, for the columns the reads use and not built for the nine no statement reads by', async () => {
    const rows = await app.db.query<{ attname: string; target: number | null }>(
      `select attname, nullif(attstattarget, -1)::int as target from pg_attribute
       where attrelid = 'changes'::regclass and attnum > 0 and not attisdropped`,
    )
    const off = rows.filter((r) => r.target === 0).map((r) => r.attname)
    expect(off.sort()).toEqual([...SKIPPED].sort())
    // the rest keep statistics the planner reads for GET /history and a revert, from a sample of 3,000 rows
    expect(
      rows
        .filter((r) => r.target === 10)
        .map((r) => r.attname)
        .sort(),
    ).toEqual([...SAMPLED].sort())
    // every column is one or the other: a column added later chooses (none left at the default's 30,000-row sample)
    expect(rows.filter((r) => r.target !== 0 && r.target !== 10).map((r) => r.attname)).toEqual([])
  })

  it('ANALYZE builds none for those nine, and still the others', async () => {
    const p = await app.project()
    const mutate = async (body: Record<string, unknown>) => {
      const res = await app.call('POST', '/api/v1/mutate', { body: { projectId: p, ...body } })
      expect(res.status).toBe(200)
      return res.body
    }
    const goal = (await mutate({ action: 'add', node: { type: 'goal', data: { label: 'counted' } } })).node.id
    await mutate({ action: 'update', nodeId: goal, data: { label: 'counted again' } })
    await app.db.exec('analyze changes')
    const built = (await app.db.query<{ attname: string }>(`select attname from pg_stats where tablename = 'changes'`)).map(
      (r) => r.attname,
    )
    expect(built.filter((c) => SKIPPED.includes(c))).toEqual([])
    expect(built.sort()).toEqual([...SAMPLED].sort())
  })

  it('no statement of sql/ filters, joins, groups or sorts changes by a column without statistics', () => {
    const reading = statements().filter((s) => /\b(from|join)\s+changes\b/i.test(s.text))
    expect(reading.length).toBeGreaterThan(5)
    const offenders: string[] = []
    for (const s of reading) {
      const text = s.text.replace(/--.*$/gm, '')
      // everything after the first where: conditions, joins of subqueries, order and group by
      const after = text.slice(text.search(/\bwhere\b/i))
      for (const c of SKIPPED) if (new RegExp(`\\b${c}\\b`, 'i').test(after)) offenders.push(`${s.file}: ${c}`)
    }
    expect(offenders).toEqual([])
  })
})
