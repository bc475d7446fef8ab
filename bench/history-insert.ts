/**
 * bun bench/history-insert.ts — what recording one change adds to a write's statements
 * (history.md, 7), each in its own transaction, the four interleaved (3,000 rounds, the first
 * 200 dropped): the events of an update alone; the events, then the change in its own
 * statement (as before 2026-11-27); the change and the events in one statement
 * (bench/lib/one-statement-saving.ts `insertWithChangesSql`); the same with the change in plain parameters
 * (bench/lib/one-statement-saving.ts `insertWithChangeSql`, a write's only change from the eleventh pass to the
 * thirteenth); the change (sql/history/insert-one.sql) and the events sent together, the
 * saving step since the fourteenth pass. PGlite: CPU time of this process (the database runs in
 * it); PostgreSQL (BENCH_DATABASE_URL): wall clock, and the mean of this process's CPU beside it. Medians and means in ms.
 */
import { insertMany as insertEvents } from '../src/events/queries'
import { insertChunk, insertOne } from '../src/history/queries'
import { changeParams, oneChangeParams } from '../src/history/record'
import { startBenchServer } from './lib/app'
import { insertWithChangeSql, insertWithChangesSql } from './lib/one-statement-saving'
import { oneUpdate } from './lib/one-update'

const ROUNDS = Number(process.env.ROUNDS ?? 3000)

async function run(label: string, postgresUrl?: string) {
  const server = await startBenchServer(postgresUrl)
  try {
    const db = server.deps.db
    const { actor, draft, event } = await oneUpdate(server)
    const cpu = () => {
      const u = process.cpuUsage()
      return (u.user + u.system) / 1000
    }
    const clock = postgresUrl ? () => performance.now() : cpu
    const ways: Record<string, () => Promise<unknown>> = {
      'events alone': () => db.tx((tx) => insertEvents(tx, 'bench', [event])),
      'events, then the change': () =>
        db.tx(async (tx) => {
          await insertEvents(tx, 'bench', [event])
          await insertChunk(tx, 'bench', changeParams(actor, 'r', [draft]))
        }),
      'one statement': () =>
        db.tx((tx) => tx.query(insertWithChangesSql, ['bench', ...changeParams(actor, 'r', [draft]), JSON.stringify([event])])),
      // from the eleventh pass to the thirteenth, a write's only change (bench/lib/one-statement-saving.ts `insertWithChangeSql`)
      'one statement, the change in plain parameters': () =>
        db.tx((tx) => tx.query(insertWithChangeSql, ['bench', ...oneChangeParams(actor, 'r', draft), JSON.stringify([event])])),
      // since the fourteenth pass: history's statement and the events', sent together (src/events/outbox.ts save)
      'the change and the events, sent together': () =>
        db.tx((tx) => Promise.all([insertOne(tx, 'bench', oneChangeParams(actor, 'r', draft)), insertEvents(tx, 'bench', [event])])),
    }
    const names = Object.keys(ways)
    const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]))
    // on PostgreSQL also this process's CPU (the client's share: the protocol, postgres.js)
    const cpus: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]))
    for (let i = 0; i < ROUNDS; i++)
      for (const name of i % 2 ? [...names].reverse() : names) {
        const t = clock()
        const c = cpu()
        await ways[name]!()
        if (i >= 200) times[name]!.push(clock() - t)
        if (i >= 200) cpus[name]!.push(cpu() - c)
      }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
    for (const name of names)
      console.log(
        `| ${name} | ${label} | ${median(times[name]!).toFixed(3)} ms | ${mean(times[name]!).toFixed(3)} ms |${postgresUrl ? ` this process's CPU ${mean(cpus[name]!).toFixed(3)} ms (mean) |` : ''}`,
      )
  } finally {
    await server.close()
  }
}

console.log('| statements | database | median | mean |\n|---|---|---|---|')
await run('PGlite')
if (process.env.BENCH_DATABASE_URL) await run('PostgreSQL', process.env.BENCH_DATABASE_URL)
