// The parent's locking read of a 100-add batch (sql/nodes/lock-many.sql), as the batches under
// one approach accumulate (bench/writes.md "Eleventh pass: the parent's lock"): the app in this
// process on a fresh database (bench/lib/app.ts, which runs no maintenance loop), N batches of 100
// jobs under one approach through POST /mutate, and the wall time of the app's own read (sent with
// the ids' counter, so that statement's time is in it) and this process's CPU over it (on PGlite
// the statements run in this thread), medians per block of 20 batches.
//
//   bun bench/parent-read.ts [--batches 80] [--analyze-at 40]
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/parent-read.ts
//
// --analyze-at k: `analyze nodes` before batch k, as the running server's pglite-maintenance loop
// (src/maintenance/loop.ts) or PostgreSQL's autovacuum would; the statement's cached generic plan
// is then made again.

import type { Db } from '../src/db'
import { startBenchServer } from './lib/app'
import { benchProject, median } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const BATCHES = Number(opt('batches', '80'))
const ANALYZE_AT = Number(opt('analyze-at', '-1'))
const PG_URL = process.env.BENCH_DATABASE_URL

const s = await startBenchServer(PG_URL)
try {
  const { call, approach } = await benchProject(s)
  const db: Db = s.deps.db
  const realTx = db.tx.bind(db)
  const times: number[] = []
  const cpus: number[] = []
  // sql/nodes/lock-many.sql, or sql/nodes/lock-one.sql where the app has it
  const isRead = (text: string) =>
    /from nodes\s+where project_id = \$1 and id = (any\(\$2::text\[\]\)\s+order by id|\$2)\s+for update/.test(text)
  const timed = (tx: Db): Db =>
    new Proxy(tx, {
      get(target, key) {
        if (key === 'query')
          return async (text: string, params?: unknown[]) => {
            if (!isRead(text)) return target.query(text, params)
            const start = performance.now()
            const cpu = process.cpuUsage()
            try {
              return await target.query(text, params)
            } finally {
              times.push(performance.now() - start)
              const d = process.cpuUsage(cpu)
              cpus.push((d.user + d.system) / 1000)
            }
          }
        const v = Reflect.get(target, key)
        return typeof v === 'function' ? v.bind(target) : v
      },
    })
  ;(db as { tx: Db['tx'] }).tx = (fn) => realTx((tx) => fn(timed(tx)))
  console.log(`${PG_URL ? 'postgres' : 'pglite'}: the parent's read (p50 of each block of 20 batches)`)
  for (let done = 0; done < BATCHES; done++) {
    if (done === ANALYZE_AT) {
      await db.exec('analyze nodes')
      console.log(`analyze nodes before batch ${done + 1}`)
    }
    await call({
      action: 'batch',
      projectId: 'ww',
      mutations: Array.from({ length: 100 }, (_, i) => ({
        action: 'add',
        node: { type: 'job', parentId: approach, data: { label: `B${done}-${i}` } },
      })),
    })
    if (done % 20 === 19 || done === BATCHES - 1) {
      console.log(
        `batches ${done + 2 - times.length}-${done + 1}: ${median(times).toFixed(3)} ms, this process's CPU ${median(cpus).toFixed(3)} ms`,
      )
      times.length = 0
      cpus.length = 0
    }
  }
} finally {
  await s.close()
}
