import { afterAll, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startApp } from './helpers'

// Migration 0048: ANALYZE of `events` (PGlite's maintenance loop, a server's autovacuum) skips
// `payload`, the one column no statement filters, joins, groups or sorts by: its statistics would
// serve no plan, and building them (jsonb, distinct per event) was most of the analyze's cost, paid
// by every write (bench/writes.md, "Twelfth pass: the events' statistics"). A condition on an
// expression over it (live/claim-presence.sql's `payload ->> 'nodeId'`) is estimated without the
// column's statistics. A statement that compares, joins, groups or sorts by `payload` itself needs
// them back (a migration that sets them to -1) before this test passes again.
const SKIPPED = ['payload']
const KEPT = ['seq', 'project_id', 'type', 'created_at', 'txid']
const SQL = join(import.meta.dir, '..', 'sql')

/** Every statement file under sql/ but the migrations, without its comments. */
function statements(dir = SQL): { file: string; text: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return e.name === 'migrations' ? [] : statements(path)
    return e.name.endsWith('.sql') ? [{ file: path.slice(SQL.length + 1), text: readFileSync(path, 'utf8').replace(/--.*$/gm, '') }] : []
  })
}

const app = await startApp()
afterAll(() => app.close())

/** The lines of a statement's generic plan (verbose: every column qualified) that compare, join, group or sort. */
const conditions = (text: string) =>
  app.db.tx(async (tx) => {
    const params = Math.max(0, ...[...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])))
    await tx.exec(`set local plan_cache_mode = force_generic_plan; prepare stats_check as ${text}`)
    const call = params ? `execute stats_check(${Array(params).fill('null').join(', ')})` : 'execute stats_check'
    const plan = await tx.query<Record<string, string>>(`explain (verbose, costs off) ${call}`)
    await tx.exec('deallocate stats_check')
    return plan
      .map((r) => Object.values(r)[0]!.trim())
      .filter((l) =>
        /^(Filter|Join Filter|One-Time Filter|Index Cond|Recheck Cond|Hash Cond|Merge Cond|Sort Key|Presorted Key|Group Key|Order By|Cache Key|Run Condition):/.test(
          l,
        ),
      )
  })

/** The conditions that name a skipped column itself (an operand the planner would estimate from its statistics), not an expression over it. */
const onSkipped = (lines: string[]) => lines.filter((l) => SKIPPED.some((c) => new RegExp(`\\b${c}\\b(?!\\s*(->>?|#>>?))`).test(l)))

describe('the statistics of events', () => {
  it('are kept for the columns the reads use and not built for payload', async () => {
    const rows = await app.db.query<{ attname: string; target: number | null }>(
      `select attname, nullif(attstattarget, -1)::int as target from pg_attribute
       where attrelid = 'events'::regclass and attnum > 0 and not attisdropped`,
    )
    expect(rows.filter((r) => r.target === 0).map((r) => r.attname)).toEqual(SKIPPED)
    expect(
      rows
        .filter((r) => r.target === null)
        .map((r) => r.attname)
        .sort(),
    ).toEqual([...KEPT].sort())
  })

  it('ANALYZE builds none for payload, and still the others', async () => {
    const p = await app.project()
    const res = await app.call('POST', '/api/v1/mutate', {
      body: { projectId: p, action: 'add', node: { type: 'goal', data: { label: 'analyzed' } } },
    })
    expect(res.status).toBe(200)
    await app.db.exec('analyze events')
    const built = (await app.db.query<{ attname: string }>(`select attname from pg_stats where tablename = 'events'`)).map((r) => r.attname)
    expect(built.filter((c) => SKIPPED.includes(c))).toEqual([])
    expect(built.sort()).toEqual([...KEPT].sort())
  })

  it('no statement of sql/ that reads events compares, joins, groups or sorts by payload (their generic plans)', async () => {
    const reading = statements().filter((s) => /\b(from|join)\s+events\b/i.test(s.text))
    expect(reading.length).toBeGreaterThan(10)
    const offenders: string[] = []
    let expressions = 0
    for (const s of reading) {
      const lines = await conditions(s.text)
      expressions += lines.filter((l) => /\bpayload\b/.test(l)).length
      for (const l of onSkipped(lines)) offenders.push(`${s.file}: ${l}`)
    }
    expect(offenders).toEqual([])
    // the check sees conditions on payload: the presence's expression, allowed
    expect(expressions).toBeGreaterThan(0)
  })

  it('the check finds a condition or a sort on payload itself', async () => {
    expect(onSkipped(await conditions(`select seq from events where payload @> $1::jsonb`))).toHaveLength(1)
    expect(onSkipped(await conditions(`select seq from events where project_id = $1 order by payload limit 5`))).toHaveLength(1)
    expect(onSkipped(await conditions(`select seq from events where payload ->> 'nodeId' = $1`))).toEqual([])
  })
})
