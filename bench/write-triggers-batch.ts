// Where the SQL of a 100-add batch goes, in one PGlite process (issue 51, 3): one batch of N jobs
// under one approach is sent to the app once (POST /mutate batch) and its statements are kept
// with their parameters; then the batch's own statements are run again and again, each sample in a
// transaction rolled back (so every sample sees the same project), timed by this process's CPU
// time (PGlite runs in it, synchronously) part by part: the nodes' insert (with its triggers), the
// changes, the events (two statements since the fourteenth pass), `work_flush`, and the deferred triggers as at a commit (`set constraints all
// immediate`). With every trigger on, each trigger of `nodes`, `changes`, `events`, `work_items`
// and `work_pending` disabled in turn, and all off, taking turns round by round.
//
//   bun bench/write-triggers-batch.ts [--size 100] [--jobs 0] [--rounds 4] [--samples 20] [--only work,advance]
//
// With BENCH_DATABASE_URL the same on PostgreSQL (a database of its own, dropped at the end): the
// samples run on one connection of their own, timed by that backend's CPU time (the nanoseconds
// of /proc/<pid>/schedstat where the kernel keeps them, else /proc/<pid>/stat's ticks of 10 ms:
// each part's figure is its time summed over a round's samples, divided by them, so with ticks a
// round wants --samples 40 or more).
//
// --defer: the work state set aside and flushed, as for a batch that also updates or deletes.
// --jobs: the approach holds that many jobs first (ANALYZE runs after them, unless --no-analyze). --only: the rows whose name holds one of these
// words (and "all on"). --variants a.sql,b.sql: files of SQL (create or replace …) run before
// their own rows, each a variant against "all on" (the migration's functions put back after, and
// a.undo.sql run when there is one: for a variant that changes more than functions).

import { existsSync, readFileSync } from 'node:fs'
import postgres from 'postgres'
import type { Db } from '../src/db'
import { startBenchServer } from './lib/app'
import { benchProject, fillApproach, median } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const SIZE = Number(opt('size', '100'))
const JOBS = Number(opt('jobs', '0'))
const ROUNDS = Number(opt('rounds', '4'))
const SAMPLES = Number(opt('samples', '20'))
const VARIANTS = opt('variants', '').split(',').filter(Boolean)
// --defer: the work state set aside by the nodes' insert and recomputed by work_flush, as a batch
// that updates or deletes does (migration 0023); without it, kept by the insert's own triggers,
// as an adds-only batch does (the flush then finds nothing)
const DEFER = args.includes('--defer')

interface Statement {
  text: string
  params?: unknown[]
}

const PG_URL = process.env.BENCH_DATABASE_URL

const s = await startBenchServer(PG_URL)
try {
  const { call, approach } = await benchProject(s)
  const batchOf = (n: number, label: string) => ({
    action: 'batch',
    projectId: 'ww',
    mutations: Array.from({ length: n }, (_, i) => ({
      action: 'add',
      node: { type: 'job', parentId: approach, data: { label: `${label}${i}` } },
    })),
  })
  await fillApproach(call, approach, JOBS)
  const db: Db = s.deps.db

  // the statements of one batch, as the app sends them (the db's transactions wrapped for it)
  const kept: Statement[] = []
  const realTx = db.tx.bind(db)
  const keeping = (tx: Db): Db =>
    new Proxy(tx, {
      get(target, key) {
        if (key === 'query')
          return (text: string, params?: unknown[]) => {
            kept.push({ text, params })
            return target.query(text, params)
          }
        const v = Reflect.get(target, key)
        return typeof v === 'function' ? v.bind(target) : v
      },
    })
  ;(db as { tx: Db['tx'] }).tx = (fn) => realTx((tx) => fn(keeping(tx)))
  await call(batchOf(SIZE, 'B'))
  ;(db as { tx: Db['tx'] }).tx = realTx
  const find = (start: string) => {
    const st = kept.find((k) => k.text.trimStart().startsWith(start) || k.text.includes(start))
    if (!st) throw new Error(`no statement with ${start}: ${kept.map((k) => k.text.slice(0, 60)).join(' | ')}`)
    return st
  }
  const nodes = find('insert into nodes (')
  // the saving step's two statements (since the fourteenth pass: history's, then the events')
  const changes = find('insert into changes (')
  const events = find('insert into events (')
  // the same ids again in each sample: the batch above is deleted first, each sample rolled back
  const ids = (JSON.parse(nodes.params![1] as string) as { id: string }[]).map((r) => r.id)
  await db.query(`delete from nodes where project_id = 'ww' and id = any($1)`, [ids])
  // --no-analyze: the planner without statistics, as on PGlite before the maintenance loop's first pass
  if (!args.includes('--no-analyze')) await db.exec('analyze')

  const parts = ['nodes', 'changes', 'events', 'flush', 'commit'] as const
  type Part = (typeof parts)[number]
  type Figures = Record<Part | 'all', number>
  class Rollback extends Error {}
  const steps: [Part, string, unknown[]?][] = [
    ['nodes', nodes.text, nodes.params],
    ['changes', changes.text, changes.params],
    ['events', events.text, events.params],
    ['flush', 'select work_flush()'],
    ['commit', 'set constraints all immediate'],
  ]

  /** PGlite: the median CPU ms of each part and of the whole over `SAMPLES` rolled-back batches (3 more first, untimed) */
  async function samplePglite(): Promise<Figures> {
    const xs: Record<Part | 'all', number[]> = { nodes: [], changes: [], events: [], flush: [], commit: [], all: [] }
    for (let i = 0; i < SAMPLES + 3; i++)
      await db
        .tx(async (tx) => {
          await tx.query(`select pg_advisory_xact_lock(hashtextextended('arbor.unblock:' || $1, 0))`, ['ww'])
          if (DEFER) await tx.query(`select set_config('arbor.work_defer', 'on', true)`)
          let all = 0
          for (const [part, text, params] of steps) {
            const c = process.cpuUsage()
            await tx.query(text, params)
            const d = process.cpuUsage(c)
            const ms = (d.user + d.system) / 1000
            all += ms
            if (i >= 3) xs[part].push(ms)
          }
          if (i >= 3) xs.all.push(all)
          throw new Rollback()
        })
        .catch((e) => {
          if (!(e instanceof Rollback)) throw e
        })
    return Object.fromEntries(Object.entries(xs).map(([k, v]) => [k, median(v)])) as Figures
  }

  // PostgreSQL: one connection of our own, its backend's CPU from /proc (postgres.js sends a jsonb
  // parameter through JSON.stringify: the app's JSON text is parsed back for it)
  const pg = PG_URL ? postgres(s.deps.config.databaseUrl!, { max: 1, onnotice: () => {} }) : null
  const backend = pg ? Number((await pg`select pg_backend_pid() as pid`)[0]!.pid) : 0
  const schedstat = () => Number(readFileSync(`/proc/${backend}/schedstat`, 'utf8').split(' ')[0])
  const nanoseconds = pg !== null && existsSync(`/proc/${backend}/schedstat`) && schedstat() > 0
  const ticksMs = () => {
    if (nanoseconds) return schedstat() / 1e6
    const f = readFileSync(`/proc/${backend}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(f[11]) + Number(f[12])) * 10
  }
  const asJson = (params?: unknown[]) =>
    (params ?? []).map((p) => (typeof p === 'string' && /^[[{]/.test(p) ? JSON.parse(p) : p)) as postgres.ParameterOrJSON<never>[]
  /** PostgreSQL: each part's backend CPU ms, summed over `SAMPLES` rolled-back batches and divided by them */
  async function samplePostgres(): Promise<Figures> {
    const sum: Figures = { nodes: 0, changes: 0, events: 0, flush: 0, commit: 0, all: 0 }
    const sent = steps.map(([part, text, params]) => [part, text, asJson(params)] as const)
    for (let i = 0; i < SAMPLES + 3; i++)
      await pg!
        .begin(async (tx) => {
          await tx.unsafe(`select pg_advisory_xact_lock(hashtextextended('arbor.unblock:' || 'ww', 0))`)
          if (DEFER) await tx.unsafe(`select set_config('arbor.work_defer', 'on', true)`)
          for (const [part, text, params] of sent) {
            const c = ticksMs()
            await tx.unsafe(text, params)
            if (i >= 3) sum[part] += ticksMs() - c
          }
          throw new Rollback()
        })
        .catch((e) => {
          if (!(e instanceof Rollback)) throw e
        })
    for (const p of parts) sum[p] /= SAMPLES
    sum.all = parts.reduce((a, p) => a + sum[p], 0)
    return sum
  }
  const sample = pg ? samplePostgres : samplePglite

  const triggers = await db.query<{ rel: string; name: string }>(
    `select tgrelid::regclass::text as rel, tgname as name from pg_trigger
       where not tgisinternal and tgrelid::regclass::text in ('nodes', 'changes', 'events', 'work_items', 'work_pending')
       order by 1, 2`,
  )
  // the functions as the migrations left them, to put back after a variant's
  const saved = await db.query<{ def: string }>(
    `select pg_get_functiondef(p.oid) as def from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'public' and p.prokind = 'f'`,
  )
  const restore = saved.map((r) => `${r.def};`).join('\n')
  const variants = ['all on', ...VARIANTS, ...triggers.map((t) => `${t.rel}.${t.name} off`), 'all off']
  const only = opt('only', '').split(',').filter(Boolean)
  if (only.length) variants.splice(0, variants.length, ...variants.filter((v) => v === 'all on' || only.some((w) => v.includes(w))))
  let undo = ''
  const setVariant = async (v: string) => {
    if (undo) await db.exec(undo)
    undo = ''
    await db.exec(restore)
    if (VARIANTS.includes(v)) {
      await db.exec(readFileSync(v, 'utf8'))
      const undoFile = v.replace(/\.sql$/, '.undo.sql')
      if (existsSync(undoFile)) undo = readFileSync(undoFile, 'utf8')
    }
    for (const t of triggers) {
      const off = v === 'all off' || v === `${t.rel}.${t.name} off`
      await db.exec(`alter table ${t.rel} ${off ? 'disable' : 'enable'} trigger ${t.name}`)
    }
    if (pg) await pg`discard plans`
  }
  const times: Record<string, Figures[]> = {}
  for (let r = 0; r < ROUNDS; r++)
    for (const v of r % 2 ? [...variants].reverse() : variants) {
      await setVariant(v)
      ;(times[v] ??= []).push(await sample())
    }
  await setVariant('all on')
  const med = (v: string, p: Part | 'all') => median(times[v]!.map((t) => t[p]))
  console.log(
    `a batch of ${SIZE} jobs beside ${JOBS} on ${pg ? 'PostgreSQL' : 'PGlite'}, ${ROUNDS} rounds of ${SAMPLES}, ${pg ? "the backend's CPU ms (p50 of the rounds' means)" : "CPU ms (p50 of the rounds' p50s)"}\n\n| triggers | all | nodes | changes | events | work_flush | commit | all less than all on |\n|---|---|---|---|---|---|---|---|`,
  )
  for (const v of variants)
    console.log(
      `| ${v} | ${med(v, 'all').toFixed(3)} | ${parts.map((p) => med(v, p).toFixed(3)).join(' | ')} | ${(med('all on', 'all') - med(v, 'all')).toFixed(3)} |`,
    )
  await pg?.end()
} finally {
  await s.close()
}
