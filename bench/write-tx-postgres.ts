// A label update's transaction on PostgreSQL two ways (issue 51, 3, the ninth pass): through
// postgres.js's `begin` (BEGIN awaited alone, what src/db/postgres.ts used until this pass) and
// on a reserved connection with BEGIN sent together with the first statement (src/db/postgres.ts
// `transaction` now). Inside, three statements shaped like a label update's (the row locked, the
// row updated, an outbox row inserted) and a notification sent with the COMMIT, on tables of a
// scratch database; eight writers at once, each its own row, the two ways taking turns window by
// window: transactions a second and this process's CPU a transaction.
//
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/write-tx-postgres.ts [--rounds 6] [--seconds 2]

import postgres from 'postgres'
import { median } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: number) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : fallback)
const ROUNDS = opt('rounds', 6)
const SECONDS = opt('seconds', 2)
const WRITERS = 8
const url = process.env.BENCH_DATABASE_URL
if (!url) throw new Error('BENCH_DATABASE_URL: a PostgreSQL server whose database this bench may create a scratch database in')

const admin = postgres(url, { max: 1, onnotice: () => {} })
const name = `arbor_tx_bench_${process.pid}`
await admin.unsafe(`create database ${name}`)
const target = new URL(url)
target.pathname = `/${name}`
const sql = postgres(target.toString(), { max: 10, onnotice: () => {} })
try {
  await sql.unsafe(`create table rows (id int primary key, data jsonb not null);
    create table outbox (seq bigserial primary key, id int not null, payload jsonb not null);
    insert into rows select i, '{"label": "x"}' from generate_series(0, ${WRITERS - 1}) i`)

  type Q = (text: string, params?: unknown[]) => Promise<unknown>
  let k = 0
  const statements = async (q: Q, id: number) => {
    await q('select id, data from rows where id = $1 for update', [id])
    await q('update rows set data = $2::jsonb where id = $1 returning id', [id, JSON.stringify({ label: `u${++k}` })])
    await q('insert into outbox (id, payload) values ($1, $2::jsonb) returning seq', [id, JSON.stringify({ label: `u${k}` })])
  }
  const ways: Record<string, (id: number) => Promise<unknown>> = {
    "postgres.js's begin": (id) =>
      sql.begin(async (t) => {
        await statements((text, params = []) => t.unsafe(text, params as never[], { prepare: true }), id)
        void t.unsafe('select pg_notify($1, $2)', ['arbor_tx_bench', String(id)]).catch(() => {})
      }),
    'reserved, BEGIN with the first statement': async (id) => {
      const conn = await sql.reserve()
      try {
        conn.unsafe('begin').catch(() => {})
        await statements((text, params = []) => conn.unsafe(text, params as never[], { prepare: true }), id)
        const notified = conn.unsafe('select pg_notify($1, $2)', ['arbor_tx_bench', String(id)])
        await conn.unsafe('commit')
        await notified
      } finally {
        conn.release()
      }
    },
  }
  const rate: Record<string, number[]> = {}
  const cpu: Record<string, number[]> = {}
  for (let r = 0; r < ROUNDS + 1; r++)
    for (const [way, tx] of r % 2 ? Object.entries(ways).reverse() : Object.entries(ways)) {
      let done = 0
      const end = performance.now() + SECONDS * 1000
      const before = process.cpuUsage()
      await Promise.all(
        Array.from({ length: WRITERS }, async (_, id) => {
          while (performance.now() < end) {
            await tx(id)
            done++
          }
        }),
      )
      const d = process.cpuUsage(before)
      if (r === 0) continue // untimed: statements prepared on every connection
      ;(rate[way] ??= []).push(done / SECONDS)
      ;(cpu[way] ??= []).push((d.user + d.system) / done)
    }
  console.log(
    `eight writers, ${ROUNDS} rounds of ${SECONDS} s a way\n\n| way | transactions a second (median) | this process's CPU µs a transaction (median) |\n|---|---|---|`,
  )
  for (const way of Object.keys(ways)) console.log(`| ${way} | ${median(rate[way]!).toFixed(0)} | ${median(cpu[way]!).toFixed(1)} |`)
  const [a, b] = Object.keys(ways) as [string, string]
  console.log(
    `\nreserved ÷ begin, transactions a second, round by round: median ${median(rate[b]!.map((x, i) => x / rate[a]![i]!)).toFixed(3)}×`,
  )
} finally {
  await sql.end()
  await admin.unsafe(`drop database ${name}`)
  await admin.end()
}
