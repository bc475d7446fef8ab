// npm run bench:writes (issue 51, 3): single writes and a 100-add batch, from outside over HTTP,
// against two references measured in the same run, on PGlite and (with BENCH_DATABASE_URL) on
// PostgreSQL:
//
//   npm run bench:writes                        (short: a few minutes)
//   npm run bench:writes -- --full              (more samples, longer 8-writer windows)
//   npm run bench:writes -- --only pglite|postgres --samples 40 --seconds 3
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:writes
//   BENCH_REF=<commit> npm run bench:writes     (another reference than 26c0789: a before/after)
//
// Four real processes per database, each on a fresh database of its own, requests over HTTP:
// - head: `bun src/main.ts` of this checkout;
// - nohist: the same with ARBOR_BENCH_NO_HISTORY=1 (src/config.ts recordHistory: no changes rows);
// - ref: commit 26c0789 (main before the history work), checked out by this bench into a temporary
//   worktree (`git worktree add --detach`, node_modules a symlink to this checkout's; removed at the end);
// - floor: bench/lib/write-floor.ts, a bare Bun process running the SQL statements the write needs
//   (id, node, change and event, in one transaction; the database's triggers as for the app), on a
//   database of its own like the others (on PostgreSQL it once shared head's: the same project
//   `bench`, so head's project grew twice as fast, and head's search and classify loops did the
//   floor's nodes too).
// Single writes: add a goal, a job (under an approach), a task; update a label; delete a goal (made
// untimed just before); a batch of 100 adds (jobs); with one writer, the targets taking turns
// request by request, so each sees the same moments of a shared machine. Eight writers: updates
// of labels (each writer its own node) for `seconds`, the targets taking turns window by window,
// twice. ifRev: head's update of a label with and without ifRev, taking turns (live.md 7: ≤ 1.10×).
// Prints p50s, ratios and throughputs, and writes bench/results/writes.json (gitignored).
// The machine is shared: only ratios within one run mean anything.

import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { ownDatabase } from './lib/harness'
import { freePort } from './lib/spawn'

const args = process.argv.slice(2)
const FULL = args.includes('--full')
const num = (name: string, fallback: number) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : fallback)
const SAMPLES = num('samples', FULL ? 150 : 25)
const SECONDS = num('seconds', FULL ? 10 : 2)
const WRITERS = 8
const REF = process.env.BENCH_REF ?? '26c0789'
const PG_URL = process.env.BENCH_DATABASE_URL
const ROOT = join(import.meta.dir, '..')
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined

type Kind = 'pglite' | 'postgres'
type Target = 'head' | 'nohist' | 'ref' | 'floor'
const TARGETS: Target[] = ['head', 'nohist', 'ref', 'floor']
const OPS = ['addGoal', 'addJob', 'addTask', 'update', 'delete', 'batch100'] as const
type Op = (typeof OPS)[number]

interface Proc {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  url: string
  out: string[]
}

async function start(cmd: string[], cwd: string, env: Record<string, string>, ready: RegExp): Promise<Proc> {
  const proc = Bun.spawn(cmd, {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const out: string[] = []
  for (const s of [proc.stdout, proc.stderr])
    void (async () => {
      for await (const c of s) out.push(new TextDecoder().decode(c))
    })()
  const p: Proc = { proc, url: `http://127.0.0.1:${env.PORT}`, out }
  for (const end = Date.now() + 120_000; Date.now() < end; ) {
    if (proc.exitCode !== null) throw new Error(`${cmd.join(' ')} exited: ${out.join('').slice(-2000)}`)
    if (ready.test(out.join(''))) return p
    await Bun.sleep(50)
  }
  proc.kill('SIGKILL')
  throw new Error(`${cmd.join(' ')}: not ready within 120 s: ${out.join('').slice(-2000)}`)
}

/** A JSON POST to /api/v1/mutate (a server) or / (the floor); throws unless it succeeded. */
function client(p: Proc, key: string | null) {
  const path = key ? '/api/v1/mutate' : '/'
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (key) headers.authorization = `Bearer ${key}`
  return async (body: unknown) => {
    const res = await fetch(p.url + path, { method: 'POST', headers, body: JSON.stringify(body) })
    const text = await res.text()
    let json: Record<string, any>
    try {
      json = JSON.parse(text)
    } catch {
      throw new Error(`${p.url}${path}: ${res.status} ${text.slice(0, 200)}`)
    }
    if (res.status !== 200 || json.success === false) throw new Error(`${p.url}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`)
    return json
  }
}

/** What each op sends to a target, and the untimed set-up it needs. */
function driver(target: Target, call: (b: unknown) => Promise<Record<string, any>>) {
  const P = 'bench'
  const floor = target === 'floor'
  let k = 0
  const ids = { approach: '', nodes: [] as string[], label: '' }
  const add = async (type: string, parentId?: string, count?: number) => {
    if (floor) return (await call({ op: count ? 'batch' : 'add', projectId: P, type, parentId, label: `x${++k}`, count })).ids as string[]
    if (count)
      return Object.values(
        (
          await call({
            action: 'batch',
            projectId: P,
            mutations: Array.from({ length: count }, (_, i) => ({
              action: 'add',
              node: { type, parentId, data: { label: `b${++k} ${i}` } },
            })),
          })
        ).results,
      ).map((r: any) => r.node?.id)
    return [
      (await call({ action: 'add', projectId: P, node: { type, ...(parentId ? { parentId } : {}), data: { label: `x${++k}` } } })).node.id,
    ]
  }
  const update = (nodeId: string, extra: Record<string, unknown> = {}) =>
    floor
      ? call({ op: 'update', projectId: P, nodeId, label: `u${++k}` })
      : call({ action: 'update', projectId: P, nodeId, data: { label: `u${++k}` }, ...extra })
  return {
    async setup() {
      if (floor) await call({ op: 'project', projectId: P })
      else await call({ action: 'addProject', project: { id: P, name: P } })
      const [g] = await add('goal')
      const [n] = await add('need', g)
      ;[ids.approach] = (await add('approach', n)) as [string]
      for (let w = 0; w < WRITERS; w++) ids.nodes.push(...(await add('goal')))
    },
    /** the op, and the untimed step before it */
    async prepare(op: Op): Promise<() => Promise<unknown>> {
      if (op === 'addGoal') return () => add('goal')
      if (op === 'addJob') return () => add('job', ids.approach)
      if (op === 'addTask') return () => add('task')
      if (op === 'update') return () => update(ids.nodes[0]!)
      if (op === 'batch100') return () => add('job', ids.approach, 100)
      const [victim] = (await add('goal')) as [string]
      return () => (floor ? call({ op: 'delete', projectId: P, nodeId: victim }) : call({ action: 'delete', projectId: P, nodeId: victim }))
    },
    update,
    nodes: ids.nodes,
  }
}

const timed = async (fn: () => Promise<unknown>) => {
  const s = performance.now()
  await fn()
  return performance.now() - s
}
const p50 = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : Number.NaN
}
const r2 = (x: number) => Number(x.toFixed(2))

async function run(kind: Kind, refDir: string) {
  const tmp = mkdtempSync(join(tmpdir(), 'arbor-bench-writes-'))
  const procs: Proc[] = []
  const dbs: { drop: () => Promise<void> }[] = []
  try {
    const started = {} as Record<Target, { p: Proc; call: (b: unknown) => Promise<Record<string, any>> }>
    for (const t of TARGETS) {
      const db = await ownDatabase(kind, tmp, PG_URL)
      dbs.push(db)
      const env = Object.fromEntries(Object.entries(db.env).flatMap(([k, v]) => (v === undefined ? [] : [[k, v]]))) as Record<
        string,
        string
      >
      const port = String(freePort())
      if (t === 'floor') {
        const p = await start([process.execPath, 'bench/lib/write-floor.ts'], ROOT, { ...env, PORT: port }, /listening/)
        procs.push(p)
        started[t] = { p, call: client(p, null) }
        continue
      }
      const p = await start(
        [process.execPath, 'src/main.ts'],
        t === 'ref' ? refDir : ROOT,
        {
          ...env,
          PORT: port,
          RATE_LIMIT_PER_MINUTE: '0',
          LOG_LEVEL: 'warn',
          EMBEDDINGS_MODEL_DIR: join(tmp, 'no-model'),
          ...(t === 'nohist' ? { ARBOR_BENCH_NO_HISTORY: '1' } : {}),
        },
        /Arbor API key for owner: arb_[0-9A-Za-z]+/,
      )
      procs.push(p)
      for (let end = Date.now() + 60_000; Date.now() < end; ) {
        try {
          if ((await fetch(`${p.url}/healthz`)).status === 200) break
        } catch {}
        await Bun.sleep(50)
      }
      const key = /Arbor API key for owner: (arb_[0-9A-Za-z]+)/.exec(p.out.join(''))![1]!
      started[t] = { p, call: client(p, key) }
    }
    const drivers = Object.fromEntries(TARGETS.map((t) => [t, driver(t, started[t].call)])) as Record<Target, ReturnType<typeof driver>>
    for (const t of TARGETS) await drivers[t].setup()
    // warm-up: a few of each op per target, untimed
    for (const op of OPS) for (const t of TARGETS) for (let i = 0; i < 3; i++) await (await drivers[t].prepare(op))()

    const single = Object.fromEntries(OPS.map((op) => [op, Object.fromEntries(TARGETS.map((t) => [t, [] as number[]]))])) as Record<
      Op,
      Record<Target, number[]>
    >
    for (let i = 0; i < SAMPLES; i++)
      for (const op of OPS) {
        const order = TARGETS.map((_, j) => TARGETS[(i + j) % TARGETS.length]!)
        for (const t of order) {
          const fn = await drivers[t].prepare(op)
          single[op][t].push(await timed(fn))
        }
      }

    // eight writers, each on its own node, `SECONDS` per window, the targets taking turns, twice
    // and an untimed round first: the first timed window followed the single writes at once, while
    // every server still worked through their background (search index, webhooks), and it was
    // always head's; head against itself (BENCH_REF=<head>) came out 0.7x
    const done = Object.fromEntries(TARGETS.map((t) => [t, { writes: 0, ms: 0 }])) as Record<Target, { writes: number; ms: number }>
    for (let round = -1; round < 2; round++)
      for (const t of round === 1 ? [...TARGETS].reverse() : TARGETS) {
        const d = drivers[t]
        const end = performance.now() + SECONDS * 1000
        const s = performance.now()
        let writes = 0
        await Promise.all(
          d.nodes.map(async (id) => {
            while (performance.now() < end) {
              await d.update(id)
              writes++
            }
          }),
        )
        if (round < 0) continue
        done[t].writes += writes
        done[t].ms += performance.now() - s
      }

    // ifRev: head's update with the rev the last update returned, and without, taking turns
    const head = drivers.head
    const rev = { value: (await head.update(head.nodes[1]!)).node.rev as string }
    const withRev: number[] = []
    const without: number[] = []
    for (let i = 0; i < SAMPLES * 2; i++) {
      const a = async () => (rev.value = (await head.update(head.nodes[1]!, { ifRev: rev.value })).node.rev)
      const b = () => head.update(head.nodes[1]!)
      if (i % 2) {
        withRev.push(await timed(a))
        without.push(await timed(b))
        rev.value = (await head.update(head.nodes[1]!)).node.rev
      } else {
        without.push(await timed(b))
        rev.value = (await head.update(head.nodes[1]!)).node.rev
        withRev.push(await timed(a))
      }
    }

    const rows = OPS.map((op) => {
      const m = Object.fromEntries(TARGETS.map((t) => [t, r2(p50(single[op][t]))])) as Record<Target, number>
      return {
        op,
        p50: m,
        headOverRef: r2(m.head / m.ref),
        headOverFloor: r2(m.head / m.floor),
        headOverNoHistory: r2(m.head / m.nohist),
      }
    })
    const throughput = Object.fromEntries(TARGETS.map((t) => [t, Math.round((done[t].writes * 1000) / done[t].ms)])) as Record<
      Target,
      number
    >
    const out = {
      db: kind,
      samples: SAMPLES,
      seconds: SECONDS,
      single: rows,
      eightWriters: { writesPerSecond: throughput, headOverRef: r2(throughput.head / throughput.ref) },
      ifRev: { withP50: r2(p50(withRev)), withoutP50: r2(p50(without)), ratio: r2(p50(withRev) / p50(without)) },
    }
    console.log(JSON.stringify(out))
    return out
  } finally {
    for (const p of procs) {
      p.proc.kill('SIGTERM')
      await p.proc.exited
    }
    for (const d of dbs) await d.drop().catch(() => {})
    rmSync(tmp, { recursive: true, force: true })
  }
}

// REF (26c0789 unless BENCH_REF) in a temporary worktree of this repository, node_modules a symlink to ours
const refDir = mkdtempSync(join(tmpdir(), 'arbor-ref-'))
rmSync(refDir, { recursive: true, force: true })
const git = (...a: string[]) => {
  const r = Bun.spawnSync(['git', ...a], { cwd: ROOT, stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`git ${a.join(' ')}: ${r.stderr.toString()}`)
}
git('worktree', 'add', '--detach', refDir, REF)
symlinkSync(join(ROOT, 'node_modules'), join(refDir, 'node_modules'))
const results = []
try {
  if (only !== 'postgres') results.push(await run('pglite', refDir))
  if (PG_URL && only !== 'pglite') results.push(await run('postgres', refDir))
} finally {
  if (existsSync(refDir)) git('worktree', 'remove', '--force', refDir)
}

console.log(`\none run, ${SAMPLES} samples a write a target, a shared noisy machine: compare ratios, not times\n`)
console.log(`| db | write | head p50 | ${REF} p50 | no history p50 | floor p50 | head ÷ ${REF} | head ÷ floor | head ÷ no history |`)
console.log('|---|---|---|---|---|---|---|---|---|')
for (const r of results)
  for (const s of r.single)
    console.log(
      `| ${r.db} | ${s.op} | ${s.p50.head} ms | ${s.p50.ref} ms | ${s.p50.nohist} ms | ${s.p50.floor} ms | ${s.headOverRef}× | ${s.headOverFloor}× | ${s.headOverNoHistory}× |`,
    )
console.log(`\n| db | 8 writers, update w/s: head | ${REF} | no history | floor | head ÷ ${REF} | ifRev p50 with / without |`)
console.log('|---|---|---|---|---|---|---|')
for (const r of results) {
  const w = r.eightWriters.writesPerSecond
  console.log(
    `| ${r.db} | ${w.head} | ${w.ref} | ${w.nohist} | ${w.floor} | ${r.eightWriters.headOverRef}× | ${r.ifRev.withP50} / ${r.ifRev.withoutP50} ms = ${r.ifRev.ratio}× |`,
  )
}
mkdirSync(join(ROOT, 'bench/results'), { recursive: true })
writeFileSync(join(ROOT, 'bench/results/writes.json'), JSON.stringify(results, null, 2))
