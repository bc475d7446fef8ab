// One insert of --size jobs under one approach (beside --jobs 300 open ones), its triggers included,
// under each definition given as a file (each a `create or replace` of functions, run over the
// current ones; the first file is usually the function as an earlier migration left it), the
// variants taking turns round by round (issue 51, 3; bench/writes.md, "Twelfth pass: a job's work
// item"). `bench/job-insert-variants.ts` times one job's insert; this times many in one statement,
// as a batch's nodes' statement holds them, and lets the jobs name an iteration (--iteration) that
// is not their siblings' (theirs is Later), which takes work_nodes_inserted's other way to a rank.
// Each sample runs in a subtransaction rolled back inside the database (a plpgsql loop, the
// project's work lock taken first); a round's figure is the CPU of the loop divided by its samples:
// on PGlite this process's CPU (PGlite runs in it), on PostgreSQL (BENCH_DATABASE_URL) the
// backend's, from /proc/<pid>/schedstat (nanoseconds).
//
//   bun bench/job-batch-variants.ts [--size 100] [--jobs 300] [--iteration Later] [--rounds 8] [--samples 40] a.sql b.sql …
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/job-batch-variants.ts …

import { readFileSync } from 'node:fs'
import type { Db } from '../src/db'
import { startBenchServer } from './lib/app'
import { benchProject, fillApproach, median } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const SIZE = Number(opt('size', '100'))
const JOBS = Number(opt('jobs', '300'))
const ITERATION = opt('iteration', 'Later')
const ROUNDS = Number(opt('rounds', '8'))
const SAMPLES = Number(opt('samples', '40'))
const files = args.filter((a) => a.endsWith('.sql'))
if (files.length === 0) throw new Error('give one or more .sql files of variants')
const PG_URL = process.env.BENCH_DATABASE_URL

// the loop of samples, each an insert of `size` jobs in a subtransaction rolled back
const loop = `create or replace function pg_temp.insert_jobs(n integer, size integer, parent text, data jsonb) returns void
language plpgsql as $$
begin
  for i in 1..n loop
    begin
      perform pg_advisory_xact_lock(hashtextextended('arbor.unblock:' || 'ww', 0));
      insert into nodes (project_id, id, type, parent_id, data, created_at)
      select 'ww', 'bx' || i || '-' || g, 'job', parent, data, now() from generate_series(1, size) g;
      raise exception using errcode = 'P0001';
    exception when sqlstate 'P0001' then
      null;
    end;
  end loop;
end
$$`

const s = await startBenchServer(PG_URL)
try {
  const { call, approach } = await benchProject(s)
  await fillApproach(call, approach, JOBS)
  const db: Db = s.deps.db
  await db.exec('analyze')
  const texts = files.map((f) => readFileSync(f, 'utf8'))
  const data = JSON.stringify({ label: 'x', iteration: ITERATION })
  const times: number[][] = files.map(() => [])
  for (let r = 0; r < ROUNDS; r++)
    for (const i of r % 2 ? files.map((_, k) => files.length - 1 - k) : files.map((_, k) => k)) {
      await db.exec(texts[i]!)
      const ms = await db.tx(async (tx) => {
        await tx.exec(loop)
        const pid = PG_URL ? Number((await tx.query<{ pid: number }>('select pg_backend_pid() as pid'))[0]!.pid) : 0
        const cpuMs = () => {
          if (pid) return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6
          const c = process.cpuUsage()
          return (c.user + c.system) / 1000
        }
        await tx.query('select pg_temp.insert_jobs(3, $1, $2, $3::jsonb)', [SIZE, approach, data])
        const c0 = cpuMs()
        await tx.query('select pg_temp.insert_jobs($1, $2, $3, $4::jsonb)', [SAMPLES, SIZE, approach, data])
        return (cpuMs() - c0) / SAMPLES
      })
      times[i]!.push(ms)
    }
  console.log(
    `${PG_URL ? "PostgreSQL, the backend's" : 'PGlite, the process'} CPU ms of one insert of ${SIZE} jobs in iteration ${ITERATION} beside ${JOBS}, ${ROUNDS} rounds of ${SAMPLES}\n\n| variant | ms (median of the rounds) | rounds |\n|---|---|---|`,
  )
  for (const [i, f] of files.entries())
    console.log(`| ${f} | ${median(times[i]!).toFixed(3)} | ${times[i]!.map((x) => x.toFixed(3)).join(' ')} |`)
} finally {
  await s.close()
}
