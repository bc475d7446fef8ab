// The search loop alone after label updates (bench/writes.md, "Ninth pass: the search loop after
// an update"), in this process: the app of a checkout (bench/lib/app.ts) on a fresh database, its
// search loop not scheduled; N label updates of one goal (with children), then one run of the
// loop (src/search/loop.ts tick), timed, with the statements it sent; ROUNDS rounds. Then the
// same with writes and runs at once: a writer sends updates back to back for a second while the
// loop runs every 100 ms (as woken in a server), its time per run and per update.
//
//   bun bench/search-update.ts                      (this checkout, PGlite)
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/search-update.ts
//   bun bench/search-update.ts <checkout>           (another checkout, e.g. a worktree of 26c0789:
//                                                    git worktree add --detach <dir> 26c0789)
//   N=50 ROUNDS=5 NODES=700 …
//
// The servers embed through bench/lib/embed-stub.ts (started here). One process, one machine
// shared with whatever else runs: read the two checkouts' figures side by side, run in turn, and
// say the load average beside them.

import { join, resolve } from 'node:path'

const root = resolve(process.argv[2] ?? join(import.meta.dir, '..'))
const N = Number(process.env.N ?? 50)
const ROUNDS = Number(process.env.ROUNDS ?? 5)
const NODES = Number(process.env.NODES ?? 700)

const stub = Bun.spawn([process.execPath, join(import.meta.dir, 'lib/embed-stub.ts')], { env: { PORT: '0' }, stdout: 'pipe' })
const reader = stub.stdout.getReader()
let first = ''
while (!/listening (\S+)/.test(first)) first += new TextDecoder().decode((await reader.read()).value)
const embeddings = first.match(/listening (\S+)/)![1]!

const { startBenchServer } = await import(join(root, 'bench/lib/app.ts'))
const srv = await startBenchServer(process.env.BENCH_DATABASE_URL, { EMBEDDINGS_URL: embeddings, EMBEDDINGS_MODEL: 'stub' })
try {
  const call = async (body: unknown) => {
    const res = await fetch(`${srv.url}/api/v1/mutate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${srv.ownerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    const json = (await res.json()) as Record<string, any>
    if (!res.ok) throw new Error(JSON.stringify(json))
    return json
  }
  const P = 'bench'
  await call({ action: 'addProject', project: { id: P, name: P } })
  const add = async (type: string, label: string, parentId?: string) =>
    (await call({ action: 'add', projectId: P, node: { type, ...(parentId ? { parentId } : {}), data: { label } } })).node.id as string
  const goal = await add('goal', 'g0')
  for (let i = 0; i < 5; i++) await add('need', `n${i}`, goal)
  for (let left = NODES; left > 0; left -= 100)
    await call({
      action: 'batch',
      projectId: P,
      mutations: Array.from({ length: Math.min(100, left) }, (_, i) => ({
        action: 'add',
        node: { type: 'goal', data: { label: `v${left} ${i}` } },
      })),
    })

  // every statement the app sends, by its first line of SQL, while `counting`
  const db = srv.deps.db as { query: (text: string, params?: unknown[]) => Promise<unknown> }
  const query = db.query.bind(db)
  const sent = new Map<string, number>()
  let counting = false
  db.query = (text, params) => {
    if (counting) {
      const line = (text.split('\n').find((l) => !l.startsWith('--')) ?? text).slice(0, 70)
      sent.set(line, (sent.get(line) ?? 0) + 1)
    }
    return query(text, params)
  }
  const tick = () => srv.deps.search.tick(new Date())
  await tick() // the first run starts following from now
  await fetch(`${srv.url}/api/v1/search?projectId=${P}&q=g0`, { headers: { authorization: `Bearer ${srv.ownerKey}` } })
  while ((await tick()).embedded);

  let k = 0
  const runs: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < N; i++) await call({ action: 'update', projectId: P, nodeId: goal, data: { label: `u${++k}` } })
    counting = r === ROUNDS - 1
    const t0 = performance.now()
    await tick()
    runs.push(performance.now() - t0)
    counting = false
  }
  const statements = [...sent.values()].reduce((a, b) => a + b, 0)
  console.log(`${root}: ${N} updates, then one run of the search loop; ${ROUNDS} rounds`)
  console.log(`  ms per run: ${runs.map((x) => x.toFixed(1)).join(' ')}; statements in the last run: ${statements}`)
  for (const [line, n] of sent) console.log(`    ${n}  ${line}`)

  let writes = 0
  let ticks = 0
  let tickMs = 0
  let stop = false
  const writer = (async () => {
    while (!stop) {
      await call({ action: 'update', projectId: P, nodeId: goal, data: { label: `u${++k}` } })
      writes++
    }
  })()
  const looper = (async () => {
    while (!stop) {
      await Bun.sleep(100)
      const t0 = performance.now()
      await tick()
      tickMs += performance.now() - t0
      ticks++
    }
  })()
  await Bun.sleep(1000)
  stop = true
  await Promise.all([writer, looper])
  console.log(
    `  a 1 s stream: ${writes} updates, ${ticks} runs, ${(tickMs / ticks).toFixed(2)} ms per run, ${(tickMs / writes).toFixed(3)} ms of the loop per update`,
  )
} finally {
  await srv.close()
  stub.kill()
}
process.exit(0)
