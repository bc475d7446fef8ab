// A label update's transaction on PGlite two ways (issue 51, 3): through PGlite's own
// transaction() (BEGIN and COMMIT each a simple query and a Sync, what src/db/pglite.ts used until
// the eighth pass) and through src/db/pglite-prepared.ts's (BEGIN prepared and sent with the first
// statement, COMMIT prepared), with the same statements inside: the node locked with its edit
// intent (sql/nodes/lock-with-intent.sql), the update (sql/nodes/update.sql) and its change and
// event (bench/lib/one-statement-saving.ts `insertWithChangesSql`), triggers and the commit's deferred triggers included.
// Two copies of one database (the app's schema, a project and a goal, made through the app), each
// on its own PGlite, in this process; timed by this process's CPU time, the two ways taking turns
// round by round; the ratio of the two in each round, and its median, is the figure to read.
//
//   bun bench/write-tx-pglite.ts [--rounds 10] [--writes 1000]

import { PGlite } from '@electric-sql/pglite'
import lockSql from '../sql/nodes/lock-with-intent.sql' with { type: 'text' }
import updateSql from '../sql/nodes/update.sql' with { type: 'text' }
import type { PgliteDb } from '../src/db/pglite'
import { pgliteAssets } from '../src/db/pglite-assets'
import { preparedRunner } from '../src/db/pglite-prepared'
import { startBenchServer } from './lib/app'
import { insertWithChangesSql as changesSql } from './lib/one-statement-saving'
import { median, mutate } from './lib/sql-cpu'

const args = process.argv.slice(2)
const opt = (name: string, fallback: number) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : fallback)
const ROUNDS = opt('rounds', 10)
const WRITES = opt('writes', 1000)

const s = await startBenchServer()
const call = mutate(s)
await call({ action: 'addProject', project: { id: 'ww', name: 'ww' } })
const target = (await call({ action: 'add', projectId: 'ww', node: { type: 'goal', data: { label: 'g' } } })).node!.id
const copy = await (s.deps.db as PgliteDb).dump()
await s.close()

type Run = (text: string, params: unknown[]) => Promise<Record<string, any>[]>
let k = 0
async function labelUpdate(run: Run) {
  const node = (await run(lockSql, ['ww', target, ['label'], new Date().toISOString()]))[0]!
  const data = { ...node.data, label: `u${++k}` }
  const after = (await run(updateSql, ['ww', target, node.parent_id, JSON.stringify(data), false, 'label']))[0]!
  await run(changesSql, [
    'ww',
    'u',
    'u',
    null,
    null,
    'api',
    'bench',
    JSON.stringify([{ action: 'update', kind: 'node', id: target, type: 'goal', before: node, after, fields: ['label'] }]),
    JSON.stringify([{ type: 'node.updated', payload: { node: after, fields: ['label'] } }]),
  ])
}

const open = async () => {
  const pg = await PGlite.create({ ...(await pgliteAssets({ initdb: false })), loadDataDir: copy })
  return { pg, runner: preparedRunner(pg) }
}
const theirs = await open()
const ours = await open()
const ways: Record<string, () => Promise<unknown>> = {
  "PGlite's transaction()": () => theirs.pg.transaction(() => labelUpdate((t, p) => theirs.runner.run(t, p, true))),
  'src/db/pglite-prepared.ts transaction': () => ours.runner.transaction(() => labelUpdate((t, p) => ours.runner.run(t, p, true))),
}
const us: Record<string, number[]> = {}
try {
  for (let r = 0; r < ROUNDS; r++)
    for (const [name, write] of r % 2 ? Object.entries(ways).reverse() : Object.entries(ways)) {
      for (let i = 0; i < 50; i++) await write() // untimed: plans made, caches warm
      const cpu = process.cpuUsage()
      for (let i = 0; i < WRITES; i++) await write()
      const d = process.cpuUsage(cpu)
      ;(us[name] ??= []).push((d.user + d.system) / WRITES)
    }
} finally {
  await theirs.pg.close()
  await ours.pg.close()
}
console.log(
  `a goal's label update in a transaction, ${ROUNDS} rounds of ${WRITES}\n\n| transaction | CPU µs a write (median of the rounds) | each round |\n|---|---|---|`,
)
for (const [name, xs] of Object.entries(us))
  console.log(`| ${name} | ${median(xs).toFixed(1)} | ${xs.map((x) => x.toFixed(0)).join(' ')} |`)
// the two ways of one round ran within seconds of each other: their ratio round by round is
// steadier on a loaded machine than either median
const [theirsUs, oursUs] = Object.values(us) as [number[], number[]]
console.log(`\nours ÷ PGlite's, round by round: median ${median(oursUs.map((x, i) => x / theirsUs[i]!)).toFixed(3)}×`)
