/**
 * What survives a kill -9 on the embedded database (PGlite), or of the server before a PostgreSQL.
 *
 *   bun run bench:crash                       # 30 kills, 4 writers
 *   ROUNDS=5 WRITERS=8 MAX_KILL_MS=4000 bun run bench:crash
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun run bench:crash
 *
 * Starts the real server (`bun src/main.ts`, as `npm start` does) on a temporary DATA_DIR,
 * streams writes from WRITERS concurrent clients (each an `addProject` with a new id through
 * POST /api/v1/mutate; a 200 means acknowledged), and SIGKILLs the server at a random moment
 * between MIN_KILL_MS and MAX_KILL_MS after it answered /healthz. Then restarts it on the same
 * DATA_DIR (the lock file left by the dead process must be taken over) and checks that every
 * acknowledged write so far is listed by GET /api/v1/projects. ROUNDS times; a final start
 * checks the last round. Prints the restarts that failed and the acknowledged writes missing.
 * Exit status 1 when either count is not zero.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ownDatabase } from './lib/harness'
import { freePort, type Spawned, StartError, spawnServer } from './lib/spawn'

const num = (name: string, fallback: number) => {
  const n = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer`)
  return n
}
const ROUNDS = num('ROUNDS', 30)
const WRITERS = num('WRITERS', 4)
const MIN_KILL_MS = num('MIN_KILL_MS', 100)
const MAX_KILL_MS = num('MAX_KILL_MS', 2_000)
/** a restart that fails is retried this many times before the run gives up on the DATA_DIR */
const START_ATTEMPTS = 3

const dataDir = mkdtempSync(join(tmpdir(), 'arbor-crash-'))
const port = freePort()
// with BENCH_DATABASE_URL the server writes to a database created on that PostgreSQL (dropped after)
const pgUrl = process.env.BENCH_DATABASE_URL
const db = pgUrl ? await ownDatabase('postgres', dataDir, pgUrl) : null
const env: Record<string, string> = { DATA_DIR: dataDir, PORT: String(port), RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn' }
if (db) env.DATABASE_URL = db.env.DATABASE_URL as string

const acknowledged = new Set<string>()
let sent = 0
let failedRestarts = 0
let missingTotal = 0
const missingIds = new Set<string>()
let ownerKey = ''

async function start(round: number): Promise<Spawned> {
  for (let attempt = 1; ; attempt++) {
    const t0 = performance.now()
    try {
      const s = await spawnServer(env)
      if (round > 0)
        console.log(
          `  ${round > ROUNDS ? 'start after a clean SIGTERM stop' : `restart ${round}`}: up in ${Math.round(performance.now() - t0)} ms`,
        )
      return s
    } catch (err) {
      if (!(err instanceof StartError)) throw err
      failedRestarts++
      console.log(`  restart ${round} attempt ${attempt} FAILED: ${err.message}\n${indent(err.output)}`)
      if (attempt >= START_ATTEMPTS) throw new Error(`the server does not start any more on ${dataDir}; giving up`)
    }
  }
}

const indent = (text: string) =>
  text
    .trim()
    .split('\n')
    .slice(-20)
    .map((l) => `    | ${l}`)
    .join('\n')

/** Every acknowledged write must be listed; returns how many are not. */
async function verify(server: Spawned, round: number): Promise<number> {
  const res = await fetch(`${server.url}/api/v1/projects?includeArchived=true`, { headers: { authorization: `Bearer ${ownerKey}` } })
  if (res.status !== 200) throw new Error(`GET /projects after restart ${round}: ${res.status} ${await res.text()}`)
  const present = new Set(((await res.json()) as { projects: { id: string }[] }).projects.map((p) => p.id))
  let missing = 0
  for (const id of acknowledged) {
    if (!present.has(id) && !missingIds.has(id)) {
      missing++
      missingIds.add(id)
    }
  }
  return missing
}

/** Write until `stop` is set or the server dies; record each write answered 200. */
async function writer(server: Spawned, round: number, w: number, stop: { now: boolean }) {
  for (let i = 0; !stop.now; i++) {
    const id = `r${round}-w${w}-${i}`
    sent++
    try {
      const res = await fetch(`${server.url}/api/v1/mutate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ownerKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'addProject', project: { name: `Crash ${id}`, id } }),
      })
      if (res.status === 200) acknowledged.add(id)
      else if (res.status !== 503) throw new Error(`addProject ${id}: ${res.status} ${await res.text()}`)
    } catch (err: any) {
      if (err.message?.startsWith('addProject')) throw err
      return // the connection died with the server: this write is unacknowledged
    }
  }
}

console.log(
  `bench:crash: ${ROUNDS} SIGKILLs of bun src/main.ts on ${db ? 'PostgreSQL' : dataDir}, ${WRITERS} writers, kill after ${MIN_KILL_MS}-${MAX_KILL_MS} ms`,
)
let server = await start(0)
// the key is printed once the server listens, maybe a moment after /healthz first answers
for (const end = Date.now() + 60_000; !ownerKey && Date.now() < end; await Bun.sleep(50))
  ownerKey = /Arbor API key for owner: (arb_\S+)/.exec(server.output())?.[1] ?? ''
if (!ownerKey) {
  server.proc.kill('SIGKILL')
  throw new Error(`no owner key on first start:\n${server.output()}`)
}

try {
  for (let round = 1; round <= ROUNDS; round++) {
    const stop = { now: false }
    const before = acknowledged.size
    const writers = Array.from({ length: WRITERS }, (_, w) => writer(server, round, w, stop))
    const delay = MIN_KILL_MS + Math.floor(Math.random() * (MAX_KILL_MS - MIN_KILL_MS + 1))
    await Bun.sleep(delay)
    server.proc.kill('SIGKILL')
    await server.proc.exited
    stop.now = true
    await Promise.all(writers)
    const lock = db ? null : readFileSync(join(dataDir, 'arbor.lock'), 'utf8').trim()
    console.log(
      `round ${round}: SIGKILL after ${delay} ms (${acknowledged.size - before} writes acknowledged this round, ${acknowledged.size} in all${lock ? `; stale lock of pid ${lock} left` : ''})`,
    )
    server = await start(round)
    const missing = await verify(server, round)
    missingTotal += missing
    if (missing) console.log(`  MISSING after restart ${round}: ${missing} acknowledged writes`)
  }
  // a clean stop must also keep everything
  server.proc.kill('SIGTERM')
  const code = await server.proc.exited
  if (code !== 0) console.log(`  clean stop exited ${code}:\n${indent(server.output())}`)
  server = await start(ROUNDS + 1)
  missingTotal += await verify(server, ROUNDS + 1)
  server.proc.kill('SIGTERM')
  await server.proc.exited
} finally {
  if (server.proc.exitCode === null && server.proc.signalCode === null) server.proc.kill('SIGKILL')
  console.log('')
  console.log(`SIGKILLs:                      ${ROUNDS}`)
  console.log(`writes sent:                   ${sent}`)
  console.log(`writes acknowledged (200):     ${acknowledged.size}`)
  console.log(`failed restarts:               ${failedRestarts}`)
  console.log(`acknowledged writes missing:   ${missingTotal}`)
  if (missingIds.size) console.log(`missing ids: ${[...missingIds].slice(0, 20).join(', ')}${missingIds.size > 20 ? ' …' : ''}`)
  if (failedRestarts === 0 && missingTotal === 0) {
    await db?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  } else console.log(`DATA_DIR kept for inspection: ${dataDir}${db ? ` (and the database of ${db.env.DATABASE_URL})` : ''}`)
}
process.exit(failedRestarts === 0 && missingTotal === 0 ? 0 : 1)
