// What the trigger benchmarks (bench/work-triggers.ts, write-triggers-0030.ts,
// write-triggers-label.ts) share: a migration's function as it stood, the median CPU time of some
// SQL run in a transaction that is rolled back (so every sample starts from the same rows), and
// POST /mutate against the in-process bench server.

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Db } from '../../src/db'
import type { BenchServer } from './app'

const MIGRATIONS = join(import.meta.dir, '../../sql/migrations')

export const migration = (file: string) => readFileSync(join(MIGRATIONS, file), 'utf8')

/** A function's definition as a migration created it, made a `create or replace`. */
export function definition(file: string, name: string): string {
  const m = new RegExp(`create (or replace )?function ${name}\\(.*?\\n\\$\\$;\\n`, 's').exec(migration(file))
  if (!m) throw new Error(`${name} not in ${file}`)
  return m[0].replace(/^create function/, 'create or replace function')
}

export const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!

class Rollback extends Error {}

/**
 * The median process CPU time (ms) of `run`, each of `samples` runs in a transaction of its own
 * that is rolled back; `warmup` more runs first, not counted (they plan the statements), and
 * `before` in each transaction, untimed (the project's work lock, as the app takes it first).
 */
export async function cpuMsRolledBack(
  db: Db,
  run: (tx: Db) => Promise<unknown>,
  { samples, warmup = 0, before }: { samples: number; warmup?: number; before?: (tx: Db) => Promise<unknown> },
): Promise<number> {
  const xs: number[] = []
  for (let i = 0; i < samples + warmup; i++)
    await db
      .tx(async (tx) => {
        if (before) await before(tx)
        const cpu = process.cpuUsage()
        await run(tx)
        const d = process.cpuUsage(cpu)
        if (i >= warmup) xs.push((d.user + d.system) / 1000)
        throw new Rollback()
      })
      .catch((e) => {
        if (!(e instanceof Rollback)) throw e
      })
  return median(xs)
}

/** The project's work lock, as a write takes it first (sql/work/lock-project.sql). */
export const workLock = (projectId: string) => (tx: Db) =>
  tx.query(`select pg_advisory_xact_lock(hashtextextended('arbor.unblock:' || $1, 0))`, [projectId])

/** POST /api/v1/mutate as the owner; throws unless it succeeded. */
export function mutate(s: BenchServer) {
  return async (body: unknown) => {
    const res = await fetch(`${s.url}/api/v1/mutate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.ownerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    const json = (await res.json()) as { success: boolean; node?: { id: string } }
    if (!json.success) throw new Error(JSON.stringify(json).slice(0, 300))
    return json
  }
}

/**
 * Project `ww` as the trigger benchmarks start it: a goal, a need under it and an approach under
 * that, added through POST /mutate. `add` adds one more node and answers its id.
 */
export async function benchProject(s: BenchServer) {
  const call = mutate(s)
  await call({ action: 'addProject', project: { id: 'ww', name: 'ww' } })
  const add = async (type: string, parentId: string | null) =>
    (await call({ action: 'add', projectId: 'ww', node: { type, ...(parentId ? { parentId } : {}), data: { label: type } } })).node!.id
  const goal = await add('goal', null)
  const approach = await add('approach', await add('need', goal))
  return { call, add, goal, approach }
}

/** `jobs` jobs added under `approach` of project `ww`, in batches of 500 (labels J0, J1, …). */
export async function fillApproach(call: ReturnType<typeof mutate>, approach: string, jobs: number): Promise<void> {
  for (let made = 0; made < jobs; made += 500)
    await call({
      action: 'batch',
      projectId: 'ww',
      mutations: Array.from({ length: Math.min(500, jobs - made) }, (_, i) => ({
        action: 'add',
        node: { type: 'job', parentId: approach, data: { label: `J${made + i}` } },
      })),
    })
}

/**
 * PostgreSQL: a session function `pg_temp.insert_ms(n, kind, parent)` giving the median of n
 * inserts of a `kind` node with `data` under `parent` in project 'ww', each timed inside the
 * backend (clock_timestamp around the insert, in a subtransaction rolled back), the project's
 * work lock held as a write holds it. Run the returned text with `exec` in the transaction.
 */
export const timedInBackend = (
  data: Record<string, unknown>,
) => `create or replace function pg_temp.insert_ms(n integer, kind text, parent text) returns float8
language plpgsql as $$
declare
  t0 timestamptz;
  xs float8[] := '{}';
begin
  for i in 1..n loop
    begin
      perform pg_advisory_xact_lock(hashtextextended('arbor.unblock:' || 'ww', 0));
      t0 := clock_timestamp();
      insert into nodes (project_id, id, type, parent_id, data, created_at)
      values ('ww', kind || '-pg' || i, kind, parent, '${JSON.stringify(data)}', now());
      xs := xs || extract(epoch from clock_timestamp() - t0) * 1000;
      raise exception using errcode = 'P0001';
    exception when sqlstate 'P0001' then
      null;
    end;
  end loop;
  return (select percentile_disc(0.5) within group (order by x) from unnest(xs) x);
end
$$`

/**
 * `memos` open memos in project `ww`: tasks added and made memos (kind memo, as the classify loop
 * makes the tasks npm run bench:writes adds) in batches of 250 (labels M0, M1, …).
 */
export async function fillMemos(call: (body: unknown) => Promise<unknown>, memos: number): Promise<void> {
  for (let made = 0; made < memos; made += 250) {
    const n = Math.min(250, memos - made)
    await call({
      action: 'batch',
      projectId: 'ww',
      mutations: [
        ...Array.from({ length: n }, (_, i) => ({
          action: 'add',
          node: { id: `draft-${i}`, type: 'task', data: { label: `M${made + i}` } },
        })),
        ...Array.from({ length: n }, (_, i) => ({ action: 'update', nodeId: `draft-${i}`, data: { kind: 'memo' } })),
      ],
    })
  }
}
