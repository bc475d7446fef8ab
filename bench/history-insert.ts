/**
 * bun bench/history-insert.ts — what recording one change adds to a write's statements
 * (history.md, 7), each in its own transaction, the four interleaved (3,000 rounds, the first
 * 200 dropped): the events of an update alone; the events, then the change in its own
 * statement (as before 2026-11-27); the change and the events in one statement
 * (sql/events/insert-with-changes.sql); the same with the change in plain parameters
 * (sql/events/insert-with-change.sql, a write's only change since the eleventh pass). PGlite: CPU time of this process (the database runs in
 * it); PostgreSQL (BENCH_DATABASE_URL): wall clock. Medians and means in ms.
 */
import { insertMany as insertEvents, insertWithChanges } from '../src/events/queries'
import type { ChangeDraft } from '../src/history/model'
import { insertChunk } from '../src/history/queries'
import { changeParams, oneChangeParams } from '../src/history/record'
import type { Actor } from '../src/ports/actor'
import { startBenchServer } from './lib/app'

const ROUNDS = Number(process.env.ROUNDS ?? 3000)

async function run(label: string, postgresUrl?: string) {
  const server = await startBenchServer(postgresUrl)
  try {
    const res = await fetch(`${server.url}/api/v1/mutate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.ownerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'addProject', project: { name: 'Bench', id: 'bench' } }),
    })
    if (res.status !== 200) throw new Error(`addProject: ${res.status}`)
    const db = server.deps.db
    const actor: Actor = { userId: null, userName: 'bench', keyId: null, via: 'api' }
    const state = (label: string) => ({ parentId: null, data: { label } })
    const draft: ChangeDraft = {
      action: 'update',
      kind: 'node',
      id: 'goal-1',
      type: 'goal',
      before: state('a'),
      after: state('b'),
      fields: ['label'],
    }
    const node = { id: 'goal-1', type: 'goal', ...state('b') }
    const event = {
      type: 'node.updated',
      payload: { event: 'node.updated', project_id: 'bench', timestamp: new Date().toISOString(), node, actor },
    }
    const clock = postgresUrl
      ? () => performance.now()
      : () => {
          const u = process.cpuUsage()
          return (u.user + u.system) / 1000
        }
    const ways: Record<string, () => Promise<unknown>> = {
      'events alone': () => db.tx((tx) => insertEvents(tx, 'bench', [event])),
      'events, then the change': () =>
        db.tx(async (tx) => {
          await insertEvents(tx, 'bench', [event])
          await insertChunk(tx, 'bench', changeParams(actor, 'r', [draft]))
        }),
      'one statement': () =>
        db.tx((tx) => insertWithChanges(tx, 'bench', { one: false, params: changeParams(actor, 'r', [draft]) }, [event])),
      // since the eleventh pass, a write's only change (sql/events/insert-with-change.sql)
      'one statement, the change in plain parameters': () =>
        db.tx((tx) => insertWithChanges(tx, 'bench', { one: true, params: oneChangeParams(actor, 'r', draft) }, [event])),
    }
    const names = Object.keys(ways)
    const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]))
    for (let i = 0; i < ROUNDS; i++)
      for (const name of i % 2 ? [...names].reverse() : names) {
        const t = clock()
        await ways[name]!()
        if (i >= 200) times[name]!.push(clock() - t)
      }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
    for (const name of names)
      console.log(`| ${name} | ${label} | ${median(times[name]!).toFixed(3)} ms | ${mean(times[name]!).toFixed(3)} ms |`)
  } finally {
    await server.close()
  }
}

console.log('| statements | database | median | mean |\n|---|---|---|---|')
await run('PGlite')
if (process.env.BENCH_DATABASE_URL) await run('PostgreSQL', process.env.BENCH_DATABASE_URL)
