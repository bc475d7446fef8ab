// npm run bench:writes (issue 51, 3): single writes and a 100-add batch, from outside over HTTP,
// against two references measured in the same run, on PGlite and (with BENCH_DATABASE_URL) on
// PostgreSQL:
//
//   npm run bench:writes                        (PGlite; 2-3 minutes a database under load)
//   npm run bench:writes -- --full              (1,500 samples a write, 12 eight-writer rounds of 2 s)
//   npm run bench:writes -- --only pglite|postgres --samples 600 --block 100 --windows 5 --seconds 1
//   npm run bench:writes -- --ops batch100,update (only these single writes)
//   npm run bench:writes -- --ops batch100 --batch-block 5   (5 timed batches a block instead of 15)
//   npm run bench:writes -- --only pglite --eight --windows 30   (the eight writers alone: no single writes, no ifRev)
//   npm run bench:writes -- --wake              (also: streams of writes back to back, and writes after a pause, head and ref)
//   npm run bench:writes -- --builtin-embedder  (the servers embed with USE-lite + GloVe, not the stub)
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:writes
//   BENCH_REF=<commit> npm run bench:writes     (another reference than 26c0789: a before/after)
//   npm run bench:writes -- --history --samples 800 --block 20   (history's share alone, 40 rounds: head, no history
//                                                  and a control, interleaved write by write; see --history below)
//
// Four real processes per database, started at once, each on a fresh database of its own,
// requests over HTTP from this process:
// - head: `bun src/main.ts` of this checkout;
// - nohist: the same with ARBOR_BENCH_NO_HISTORY=1 (src/config.ts recordHistory: no changes rows);
// - ref: commit 26c0789 (main before the history work), checked out by this bench into a temporary
//   worktree (`git worktree add --detach`, node_modules a symlink to this checkout's; removed at the end);
// - floor: bench/lib/write-floor.ts, a bare Bun process running the SQL statements the write needs
//   (id, node, change and event, in one transaction; the database's triggers as for the app).
//   Its database is its own on PostgreSQL too (it once shared head's, and with it head's project
//   `bench`: head's project grew twice as fast, and head's loops embedded the floor's nodes).
// The three servers embed new labels through bench/lib/embed-stub.ts (EMBEDDINGS_URL, a process of
// its own answering at once): their search loop still follows the outbox and stores vectors after
// each write, without the model-less built-in embedder's CPU (an add of a goal cost the server
// 11-13 ms of CPU with it, about 3 with the stub; a 100-add batch 250-290 against 30-45), the same
// in every version, which kept the two cores busy long after each write.
//
// Every target gets the same writes in the same order (same bodies, same labels), so the projects
// grow alike. Set-up, untimed: a goal > need > approach for the job adds, another approach for the
// batches, a goal per writer, and a goal for every delete to come (in batches of 100); then the
// processes are let go quiet.
//
// Single writes (add a goal, a job, a task; update a label; delete a goal; a batch of 100 job
// adds), measured as one writer sends them (wrk -c1), back to back: in ROUNDS (6) rounds, each op
// on each target is one block of WARM (2) untimed writes and BLOCK (100; the batch 15, --batch-block) timed ones,
// one after the other, each timed from the client. A block lasts about 100 ms or more, so the loops
// the writes wake (search at most every 100 ms, classify every 250 ms) run in it as they do under
// a steady writer; blocks of 8 still caught the process waking up (p50 1.5-2 ms where a 1 s
// stream of the same adds gave 0.7). After a block the bench waits until the target's
// process is idle again (at most 1.5 ms of CPU in 50 ms: the loops its writes woke are done), so
// the next block, another target's, starts on a machine it no longer works on; what a target's
// background does to its own next write is in its own figure. The ops and the targets take turns
// block by block in an order that changes every turn (ORDERS: head's block next to 26c0789's and
// no history's in every turn, each of a pair first in every other turn), so each sees the same moments
// of a shared machine. Each round gives each target's p50 per write; a ratio (head ÷ ref, ÷ floor, ÷ no
// history) is the median of the rounds' ratios, printed with their min–max. Beside the time, the
// CPU each block cost: the target's process (all threads, /proc/<pid>/task/*/schedstat, in ns)
// and, on PostgreSQL, the backends of its database (pg_stat_activity), from the block's start
// until it was idle again, ÷ its writes: the write with its background work, which a loaded
// machine's waits do not move.
//
// Eight writers: label updates, each writer its own node, a window of SECONDS (1) per target, the
// targets taking turns in a turning order, WINDOWS (5) rounds after an untimed one, each target let
// go idle after its window; throughput per window, ratio = median of the rounds' ratios (min–max),
// and CPU per update; beside them the target's main thread in its window alone (the thread that
// runs the HTTP server, the app and PGlite; /proc/<pid>/task/<pid>/schedstat): its CPU per update,
// and the shares of the window it ran and it waited, runnable, for a core. When those two add up
// to about 1 the thread was never idle: the throughput is its CPU per update and the share of a
// core the machine gave it, and the main thread's CPU head ÷ ref is the steadier reading of the
// two (bench/writes.md, "Sixteenth pass: eight writers on PGlite"). ifRev: head's update with
// ifRev ÷ the same without, pair by pair, in ROUNDS rounds of BLOCK pairs (live.md 7: ≤ 1.10×).
// --wake: on head and ref, an add of a goal, of a task
// and an update, as a stream back to back for STREAM_MS (1 s: the loops, put off to at most one run
// every 100 or 250 ms, run in it as under a steady writer), with the time each loop ran per write,
// and PAUSED (8) writes each after a pause of PAUSE_MS (300 ms), 3 rounds.
// /metrics gives the time each loop ran per single write. Prints the tables and writes
// bench/results/writes.json (gitignored). The machine is shared: only ratios within one run mean
// anything, and the load average belongs beside them.
//
// --history (history's share, history.md 7; bench/writes.md, "Fifteenth pass: history's share"):
// three processes, head, no history and a control (head again, history on: an A/A comparison in
// the same run, which says how far this bench reads two identical sides apart). In each round each
// op's block is interleaved write by write across the three (HISTORY_ORDERS), not given to one
// target after another, so both sides of a ratio meet the same moment of the machine; the eight
// writers' windows run for the three at once. Three readings a write, each the median of the rounds'
// ratios with a 90% confidence interval (bootstrap over the rounds): the time from the client;
// the CPU of the process and its backends while the write was answered (each write's, read from
// /proc around it); and the CPU with the background (the round's block until all three were idle,
// ÷ its writes: the loops the writes woke included, more of them per write than in back-to-back
// blocks, so it reads a share smaller). Judged against history.md 7's goal by the interval (1.15x;
// a batch of 1,000 adds, --ops batch1000, 1.25x): "yes" when all of it is within, "no" when none is.

import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import postgres from 'postgres'
import { ownDatabase, quiet } from './lib/harness'
import { cpuMeter, mainThread, settle, threadNs } from './lib/proc-cpu'
import { freePort } from './lib/spawn'

const args = process.argv.slice(2)
const FULL = args.includes('--full')
const num = (name: string, fallback: number) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : fallback)
/** timed writes in one block: one op on one target, back to back */
const BLOCK = num('block', 100)
/** timed writes of each op on each target, in blocks of BLOCK (the 100-add batch: a twentieth as many) */
const SAMPLES = num('samples', FULL ? 1500 : 600)
const ROUNDS = Math.max(2, Math.ceil(SAMPLES / BLOCK))
/** --history: at least 5, so a round's p50 of the batch is not the lower of two */
/**
 * timed 100-add batches in one block (--batch-block N). 15 by default: the p50 of a block of 5 moved
 * by up to 1.8x from block to block in one stream of batches (bench/writes.md, "Eighteenth pass"),
 * as the loops a batch wakes land on one batch or on two of the five; --history: at least 5
 */
const BATCH_BLOCK = num('batch-block', Math.max(args.includes('--history') ? 5 : 15, Math.ceil(BLOCK / 20)))
/** untimed writes of the op at the start of each block */
const WARM = 2
/** one 8-writer window per target per round, the targets taking turns, WINDOWS rounds */
const SECONDS = num('seconds', FULL ? 2 : 1)
const WINDOWS = num('windows', FULL ? 12 : 5)
/** the part of item 3's question: each write back to back and after a pause, head and REF */
const WAKE = args.includes('--wake')
const PAUSE_MS = num('pause', 300)
/** --wake: writes after a pause, per write, target and round */
const PAUSED = 8
const STREAM_MS = num('stream', 1000)
const WAKE_ROUNDS = num('wake-rounds', 3)
/** the servers embed with the model-less built-in embedder (USE-lite + GloVe), not the stub */
const BUILTIN_EMBEDDER = args.includes('--builtin-embedder')
const WRITERS = 8
const REF = process.env.BENCH_REF ?? '26c0789'
const PG_URL = process.env.BENCH_DATABASE_URL
const ROOT = join(import.meta.dir, '..')
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined

type Kind = 'pglite' | 'postgres'
type Target = 'head' | 'nohist' | 'control' | 'ref' | 'floor'
/**
 * --history: history's share alone (history.md 7): head, its no-history process and a control, a
 * second process of head recording history as head does (an A/A comparison in the same run: what
 * the bench reads of two identical sides); no 26c0789 worktree, no floor. The three get each single
 * write interleaved, not in blocks (see HISTORY_ORDERS), and every ratio is printed with a 90%
 * confidence interval (bootstrapped over the rounds).
 */
const HISTORY_ONLY = args.includes('--history')
const ALL_TARGETS: Target[] = ['head', 'ref', 'nohist', 'control', 'floor']
const TARGETS: Target[] = HISTORY_ONLY ? ['head', 'nohist', 'control'] : ['head', 'ref', 'nohist', 'floor']
/**
 * --history's orders: the six permutations of the three, taken in turn write by write. Each pair is
 * next to each other as often, and head before no history as often as after, exactly as head
 * before the control: whatever the order does to head ÷ no history it does to head ÷ control.
 */
const HISTORY_ORDERS: Target[][] = [
  ['head', 'nohist', 'control'],
  ['nohist', 'control', 'head'],
  ['control', 'head', 'nohist'],
  ['head', 'control', 'nohist'],
  ['control', 'nohist', 'head'],
  ['nohist', 'head', 'control'],
]
/**
 * The targets' order in turn `k` (round + op): head's block next to both of its comparisons'
 * (26c0789's and no history's) in every turn, and each pair's two sides first in every other turn
 * (so in any two turns that follow each other: the default 6 rounds are balanced for every op).
 * (Until the thirteenth pass the four were turned as a ring, head, ref, nohist, floor: head's and
 * no history's blocks were never next to each other, no history's always right after 26c0789's
 * and head's after the floor's.)
 */
const ORDERS: Target[][] = HISTORY_ONLY
  ? HISTORY_ORDERS
  : [
      ['ref', 'head', 'nohist', 'floor'],
      ['nohist', 'head', 'ref', 'floor'],
      ['floor', 'ref', 'head', 'nohist'],
      ['floor', 'nohist', 'head', 'ref'],
    ]
const orderOf = (k: number) => ORDERS[k % ORDERS.length]!
const ALL_OPS = ['addGoal', 'addJob', 'addTask', 'update', 'delete', 'batch100'] as const
/**
 * run only when `--ops` names it: a batch of 1,000 job adds, the batch history.md 7 sets its goal
 * for (history's share at most 1.25×; a single write's 1.15×). Each adds 1,000 nodes to the
 * project of each target, so a run of it is a run of its own (`--ops batch1000 --samples 200`)
 */
const NAMED_OPS = ['batch1000'] as const
type Op = (typeof ALL_OPS)[number] | (typeof NAMED_OPS)[number]
const isBatch = (op: Op) => op === 'batch100' || op === 'batch1000'
/** history's share at most (history.md 7): a batch of 1,000 adds 1.25×, any other write 1.15× */
const historyGoal = (op: Op) => (op === 'batch1000' ? 1.25 : 1.15)
/** `--eight`: the eight writers alone (no single writes, no ifRev): more windows in the same minutes */
const EIGHT_ONLY = args.includes('--eight')
/** `--ops batch100,update`: only these single writes (the eight writers and ifRev still run) */
const OPS: readonly Op[] = EIGHT_ONLY
  ? []
  : args.includes('--ops')
    ? [...ALL_OPS, ...NAMED_OPS].filter((op) => args[args.indexOf('--ops') + 1]!.split(',').includes(op))
    : ALL_OPS

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
  // a fresh PGlite's initdb, three servers at once: over 120 s at load 20 on two cores
  for (const end = Date.now() + 300_000; Date.now() < end; ) {
    if (proc.exitCode !== null) throw new Error(`${cmd.join(' ')} exited: ${out.join('').slice(-2000)}`)
    if (ready.test(out.join(''))) return p
    await Bun.sleep(50)
  }
  proc.kill('SIGKILL')
  throw new Error(`${cmd.join(' ')}: not ready within 300 s: ${out.join('').slice(-2000)}`)
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

/**
 * What each op sends to a target, and the untimed set-up it needs. Every target gets the same
 * writes in the same order (the same body shapes, the same labels), so their projects grow alike:
 * the update and the adds land in a project of the same size in all four.
 */
function driver(target: Target, call: (b: unknown) => Promise<Record<string, any>>) {
  const P = 'bench'
  const floor = target === 'floor'
  let k = 0
  const ids = { approach: '', batchApproach: '', nodes: [] as string[], victims: [] as string[] }
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
              node: { type, ...(parentId ? { parentId } : {}), data: { label: `x${++k} ${i}` } },
            })),
          })
        ).results,
      ).map((r: any) => r.node?.id as string)
    return [
      (await call({ action: 'add', projectId: P, node: { type, ...(parentId ? { parentId } : {}), data: { label: `x${++k}` } } })).node.id,
    ]
  }
  const update = (nodeId: string, extra: Record<string, unknown> = {}) =>
    floor
      ? call({ op: 'update', projectId: P, nodeId, label: `u${++k}` })
      : call({ action: 'update', projectId: P, nodeId, data: { label: `u${++k}` }, ...extra })
  const remove = (nodeId: string) =>
    floor ? call({ op: 'delete', projectId: P, nodeId }) : call({ action: 'delete', projectId: P, nodeId })
  return {
    /** the project, a goal > need > approach for the single job adds, another approach for the batches, a goal per writer, and `victims` goals to delete */
    async setup(victims: number) {
      if (floor) await call({ op: 'project', projectId: P })
      else await call({ action: 'addProject', project: { id: P, name: P } })
      const [g] = await add('goal')
      const [n] = await add('need', g)
      ;[ids.approach] = (await add('approach', n)) as [string]
      ;[ids.batchApproach] = (await add('approach', n)) as [string]
      for (let w = 0; w < WRITERS; w++) ids.nodes.push(...(await add('goal')))
      for (let left = victims; left > 0; left -= 100) ids.victims.push(...(await add('goal', undefined, Math.min(100, left))))
    },
    /** one write of `op`, ready to run (a delete takes the next victim now, untimed) */
    next(op: Op): () => Promise<unknown> {
      if (op === 'addGoal') return () => add('goal')
      if (op === 'addJob') return () => add('job', ids.approach)
      if (op === 'addTask') return () => add('task')
      if (op === 'update') return () => update(ids.nodes[0]!)
      if (op === 'batch100') return () => add('job', ids.batchApproach, 100)
      if (op === 'batch1000') return () => add('job', ids.batchApproach, 1000)
      const victim = ids.victims.pop()
      if (!victim) throw new Error(`${target}: no goal left to delete`)
      return () => remove(victim)
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
/** `xs` turned left by `k`: the order of the targets (or ops) in round `k` */
const turn = <T>(xs: readonly T[], k: number) => xs.map((_, i) => xs[(i + k) % xs.length]!)
/** --wake's figures for one write on one target */
interface WakeFigures {
  p50: number
  mean: number
  p90: number
  writes: number
  loopMs: Record<string, number>
  /** runs of each loop over the streams (/metrics): loop ms per write is runs x ms per run / writes */
  loopRuns: Record<string, number>
  paused: number
}
/** the median of per-round ratios and their range (none: a target this run left out, --history) */
const spread = (ratios: number[]) =>
  ratios.length ? { median: r2(p50(ratios)), min: r2(Math.min(...ratios)), max: r2(Math.max(...ratios)), ...ci90(ratios) } : null
/**
 * A 90% confidence interval of the median of per-round ratios: the median of 2,000 resamples of
 * the rounds (drawn with replacement, by a generator of fixed seed, so the same figures give the
 * same interval), their 5th and 95th percentiles. The rounds are taken as independent: with the
 * targets interleaved write by write (--history) the load moves both sides of a round alike.
 */
function ci90(ratios: number[], stat: (xs: number[]) => number = p50): { lo: number; hi: number } {
  let seed = 0x9e3779b9
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = seed
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const medians = Array.from({ length: 2000 }, () => stat(Array.from(ratios, () => ratios[Math.floor(random() * ratios.length)]!))).sort(
    (a, b) => a - b,
  )
  return { lo: r2(medians[Math.floor(0.05 * medians.length)]!), hi: r2(medians[Math.floor(0.95 * medians.length) - 1]!) }
}
type Spread = ReturnType<typeof spread>
const geometricMean = (xs: number[]) => Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length)
/**
 * The geometric mean of per-round ratios with its 90% interval (bootstrapped as `ci90`): eight
 * writers' throughput ratios are skewed (a 1 s window's share of a core moved them 0.1–4.4× at
 * load 16), and their median sat at 0.92 in two runs whose windows' means were 0.97 and 1.00
 */
const geometric = (ratios: number[]) => (ratios.length ? { mean: r2(geometricMean(ratios)), ...ci90(ratios, geometricMean) } : null)
/** per-round ratios a ÷ b of the rounds' own figures (p50s or throughputs); none when b was not run */
const ratios = (a: number[], b: number[]) => (b.length ? a.map((x, i) => x / b[i]!) : [])
/** the whole run's mean a ÷ b's (CPU per write: a loop's tick that lands in one round of several counts, as it costs) */
const meanRatio = (a: number[], b: number[]) => (b.length ? r2(a.reduce((s, x) => s + x, 0) / b.reduce((s, x) => s + x, 0)) : null)

/** seconds spent in each scheduled loop so far (the server's /metrics) */
async function loopSeconds(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const out: Record<string, number> = {}
  for (const m of text.matchAll(/^arbor_loop_run_duration_seconds_(sum|count)\{loop="([^"]+)"\} ([0-9.e+-]+)$/gm))
    out[m[1] === 'sum' ? m[2]! : `${m[2]} runs`] = Number(m[3])
  return out
}

async function run(kind: Kind, refDir: string) {
  const runStart = performance.now()
  const tmp = mkdtempSync(join(tmpdir(), 'arbor-bench-writes-'))
  const procs: Proc[] = []
  const dbs: { drop: () => Promise<void> }[] = []
  const closers: (() => Promise<unknown>)[] = []
  /** each target's database name on PostgreSQL */
  const names: Partial<Record<Target, string>> = {}
  try {
    const started = {} as Record<Target, { p: Proc; call: (b: unknown) => Promise<Record<string, any>> }>
    const embedder = BUILTIN_EMBEDDER
      ? { EMBEDDINGS_MODEL_DIR: join(tmp, 'no-model') }
      : await (async () => {
          const port = String(freePort())
          procs.push(await start([process.execPath, 'bench/lib/embed-stub.ts'], ROOT, { PORT: port }, /listening/))
          return { EMBEDDINGS_URL: `http://127.0.0.1:${port}`, EMBEDDINGS_MODEL: 'stub' }
        })()
    // the four start at once (each migrates its own database)
    await Promise.all(
      TARGETS.map(async (t) => {
        const db = await ownDatabase(kind, tmp, PG_URL)
        dbs.push(db)
        if ('DATABASE_URL' in db.env) names[t] = new URL(db.env.DATABASE_URL!).pathname.slice(1)
        const env = Object.fromEntries(Object.entries(db.env).flatMap(([k, v]) => (v === undefined ? [] : [[k, v]]))) as Record<
          string,
          string
        >
        const port = String(freePort())
        if (t === 'floor') {
          const p = await start([process.execPath, 'bench/lib/write-floor.ts'], ROOT, { ...env, PORT: port }, /listening/)
          procs.push(p)
          started[t] = { p, call: client(p, null) }
          return
        }
        const p = await start(
          [process.execPath, 'src/main.ts'],
          t === 'ref' ? refDir : ROOT,
          {
            ...env,
            PORT: port,
            RATE_LIMIT_PER_MINUTE: '0',
            LOG_LEVEL: 'warn',
            ...embedder,
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
      }),
    )
    const pid = (t: Target) => started[t].p.proc.pid
    const admin = kind === 'postgres' ? postgres(PG_URL!, { max: 1, onnotice: () => {} }) : null
    closers.push(async () => await admin?.end())
    const meter = Object.fromEntries(
      TARGETS.map((t) => [
        t,
        cpuMeter(pid(t), async () =>
          admin ? (await admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${names[t]!}`).map((r) => r.pid) : [],
        ),
      ]),
    ) as Record<Target, () => Promise<number>>
    const drivers = Object.fromEntries(TARGETS.map((t) => [t, driver(t, started[t].call)])) as Record<Target, ReturnType<typeof driver>>
    const victims = OPS.includes('delete') ? ROUNDS * (BLOCK + WARM) : 0
    await Promise.all(TARGETS.map((t) => drivers[t].setup(victims)))
    // the set-up's adds are embedded by the search loop: wait for that before anything is timed
    await Promise.all(TARGETS.map((t) => quiet(pid(t), `${t} after set-up`, 5)))
    const phase = (() => {
      let at = runStart
      return (what: string) => {
        console.error(`${kind}: ${what} in ${((performance.now() - at) / 1000).toFixed(1)} s`)
        at = performance.now()
      }
    })()
    phase('started and set up')

    // --wake: does the background a write wakes (search outbox, webhooks, classifier) slow the
    // next write sent at once? The loops run at most every 100 ms (search) and 250 ms (classify):
    // a block of 10 writes meets them about once, a stream of writes every 100 ms. So: on head and
    // REF, a stream of writes back to back for STREAM_MS (each timed; the time each loop ran,
    // from /metrics, ÷ its writes, the runs put off until after it included), and PAUSED writes each
    // after a pause of PAUSE_MS (every loop done, the process idle: what the old method measured).
    const wake: Record<string, Record<string, WakeFigures>> = {}
    if (WAKE) {
      const wakeOps: Op[] = ['addGoal', 'addTask', 'update']
      const wakeTargets: Target[] = ['head', 'ref']
      const got = Object.fromEntries(
        wakeOps.map((op) => [
          op,
          Object.fromEntries(
            wakeTargets.map((t) => [t, { stream: [] as number[], paused: [] as number[], loops: {} as Record<string, number> }]),
          ),
        ]),
      ) as Record<Op, Record<Target, { stream: number[]; paused: number[]; loops: Record<string, number> }>>
      for (let r = 0; r < WAKE_ROUNDS; r++)
        for (const [j, op] of turn(wakeOps, r).entries())
          for (const t of turn(wakeTargets, r + j)) {
            const d = drivers[t]
            const g = got[op][t]
            for (let w = 0; w < WARM; w++) await d.next(op)()
            const before = await loopSeconds(started[t].p.url)
            for (const end = performance.now() + STREAM_MS; performance.now() < end; ) g.stream.push(await timed(d.next(op)))
            await Bun.sleep(300)
            await settle(pid(t), 3000)
            const after = await loopSeconds(started[t].p.url)
            for (const l of Object.keys(after))
              g.loops[l] = (g.loops[l] ?? 0) + (after[l]! - (before[l] ?? 0)) * (l.endsWith(' runs') ? 1 : 1000)
            for (let i = 0; i < PAUSED; i++) {
              await Bun.sleep(PAUSE_MS)
              g.paused.push(await timed(d.next(op)))
            }
            await settle(pid(t), 3000)
          }
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
      const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]!
      for (const op of wakeOps)
        wake[op] = Object.fromEntries(
          wakeTargets.map((t) => {
            const g = got[op][t]
            return [
              t,
              {
                p50: r2(p50(g.stream)),
                mean: r2(mean(g.stream)),
                p90: r2(p90(g.stream)),
                writes: g.stream.length,
                loopRuns: Object.fromEntries(Object.entries(g.loops).filter(([l, v]) => l.endsWith(' runs') && v > 0)),
                loopMs: Object.fromEntries(
                  Object.entries(g.loops)
                    .filter(([l, v]) => !l.endsWith(' runs') && v > 0)
                    .map(([l, v]) => [l, r2(v / g.stream.length)]),
                ),
                paused: r2(p50(g.paused)),
              },
            ]
          }),
        )
      const out = { db: kind, wake, pauseMs: PAUSE_MS, streamMs: STREAM_MS, wakeRounds: WAKE_ROUNDS }
      console.log(JSON.stringify(out))
      return out
    }

    // Single writes, back to back in blocks: a block is WARM untimed writes of one op on one
    // target, then BLOCK timed ones, one after the other as one writer sends them (wrk -c1); then
    // the target's own background work (loops woken by the writes) is let finish. Round by round
    // the ops and the targets take turns in a turning order.
    const blocks = Object.fromEntries(OPS.map((op) => [op, Object.fromEntries(ALL_TARGETS.map((t) => [t, [] as number[][]]))])) as Record<
      Op,
      Record<Target, number[][]>
    >
    /** per round, CPU ms per write of the block, warm-ups and the background work until settled included */
    const cpu = Object.fromEntries(OPS.map((op) => [op, Object.fromEntries(ALL_TARGETS.map((t) => [t, [] as number[]]))])) as Record<
      Op,
      Record<Target, number[]>
    >
    /** --history: per round, the p50 of each write's CPU while it was answered (the process and its backends, no background after) */
    const requestCpu = Object.fromEntries(OPS.map((op) => [op, Object.fromEntries(ALL_TARGETS.map((t) => [t, [] as number[]]))])) as Record<
      Op,
      Record<Target, number[]>
    >
    /**
     * A meter of the CPU (ns) of a target's process and of its database's backends of now, read
     * from /proc alone (no query while a write is timed): a write's own CPU, from its send to its
     * answer, is the meter after ÷ before.
     */
    const requestMeter = async (t: Target) => {
      const backends = admin
        ? (await admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${names[t]!}`).map((r) => r.pid)
        : []
      // a thread or backend that ended keeps its last reading (as cpuMeter does)
      const last = new Map<string, number>()
      return () => {
        threadNs(pid(t), last)
        for (const b of backends) threadNs(b, last)
        let ns = 0
        for (const v of last.values()) ns += v
        return ns
      }
    }
    const apps = TARGETS.filter((t) => t !== 'floor')
    const loopsBefore = Object.fromEntries(await Promise.all(apps.map(async (t) => [t, await loopSeconds(started[t].p.url)])))
    const singleStart = performance.now()
    // --history: the three targets get each write of a round's block interleaved, write by write
    // (head, no history, control in the order of HISTORY_ORDERS, turned at every write), so a
    // pair's writes are milliseconds apart, not a block (a second or more) apart: what the
    // machine's load does to one side it does to the other. Each target's p50 of its writes in the
    // round, and its CPU from the block's start until all three are idle again.
    if (HISTORY_ONLY)
      for (let r = 0; r < ROUNDS; r++)
        for (const [j, op] of turn(OPS, r).entries()) {
          const n = isBatch(op) ? BATCH_BLOCK : BLOCK
          const c0 = {} as Record<Target, number>
          for (const t of TARGETS) c0[t] = await meter[t]()
          for (let w = 0; w < WARM; w++) for (const t of TARGETS) await drivers[t].next(op)()
          const xs = Object.fromEntries(TARGETS.map((t) => [t, [] as number[]])) as Record<Target, number[]>
          const own = Object.fromEntries(TARGETS.map((t) => [t, [] as number[]])) as Record<Target, number[]>
          const during = Object.fromEntries(await Promise.all(TARGETS.map(async (t) => [t, await requestMeter(t)])))
          for (let i = 0; i < n; i++)
            for (const t of HISTORY_ORDERS[(r * n + i + j) % HISTORY_ORDERS.length]!) {
              const fn = drivers[t].next(op)
              const a = during[t]()
              xs[t].push(await timed(fn))
              own[t].push((during[t]() - a) / 1e6)
            }
          for (const t of TARGETS) await settle(pid(t), 3000)
          for (const t of TARGETS) {
            blocks[op][t].push(xs[t])
            requestCpu[op][t].push(p50(own[t]))
            cpu[op][t].push(((await meter[t]()) - c0[t]) / 1e6 / (WARM + n))
          }
        }
    else
      for (let r = 0; r < ROUNDS; r++)
        for (const [j, op] of turn(OPS, r).entries())
          for (const t of orderOf(r + j)) {
            const d = drivers[t]
            const n = isBatch(op) ? BATCH_BLOCK : BLOCK
            const c0 = await meter[t]()
            for (let w = 0; w < WARM; w++) await d.next(op)()
            const xs: number[] = []
            for (let i = 0; i < n; i++) {
              const fn = d.next(op)
              xs.push(await timed(fn))
            }
            blocks[op][t].push(xs)
            if (t !== 'floor') await settle(pid(t), 3000)
            cpu[op][t].push(((await meter[t]()) - c0) / 1e6 / (WARM + n))
          }
    const singleSeconds = (performance.now() - singleStart) / 1000
    phase('single writes')
    const loopsAfter = Object.fromEntries(await Promise.all(apps.map(async (t) => [t, await loopSeconds(started[t].p.url)])))
    const singleWrites = OPS.reduce((s, op) => s + cpu[op].head.length * (WARM + (isBatch(op) ? BATCH_BLOCK : BLOCK)), 0)

    // Eight writers, each on its own node: a window of SECONDS per target, the targets taking turns
    // in a turning order, WINDOWS rounds (and an untimed round first), each target let finish its
    // background work before the next one's window.
    const windows = Object.fromEntries(ALL_TARGETS.map((t) => [t, [] as number[]])) as Record<Target, number[]>
    /** per round, CPU ms per update of the window, the background until settled included */
    const windowCpu = Object.fromEntries(ALL_TARGETS.map((t) => [t, [] as number[]])) as Record<Target, number[]>
    /**
     * per round (not --history), the target's main thread in its window alone (the thread that runs
     * the HTTP server, the app and PGlite): its CPU ms per update, and the shares of the window it
     * ran and it waited for a core (runnable, another process on it): what is left of 1 it was idle,
     * with nothing to do, so its throughput was not bound by its own CPU
     */
    const main = Object.fromEntries(ALL_TARGETS.map((t) => [t, [] as { cpuMs: number; running: number; waiting: number }[]])) as Record<
      Target,
      { cpuMs: number; running: number; waiting: number }[]
    >
    // --history: the three targets' windows at once (8 writers each, 24 in all), so the machine's
    // load of the moment is the same for all three (windows in turns read an A/A of 0.61x at load
    // 20). Still no steady reading at load 15-25: 24 writers on two cores split them unevenly, and
    // the windows spread 0.2-8.7x (bench/writes.md, "Fifteenth pass: history's share").
    if (HISTORY_ONLY)
      for (let round = -1; round < WINDOWS; round++) {
        const c0 = {} as Record<Target, number>
        for (const t of TARGETS) c0[t] = await meter[t]()
        const s = performance.now()
        const end = s + SECONDS * 1000
        const writes = Object.fromEntries(TARGETS.map((t) => [t, 0])) as Record<Target, number>
        await Promise.all(
          TARGETS.flatMap((t) =>
            drivers[t].nodes.map(async (id) => {
              while (performance.now() < end) {
                await drivers[t].update(id)
                writes[t]++
              }
            }),
          ),
        )
        const ms = performance.now() - s
        for (const t of TARGETS) await settle(pid(t), 5000)
        for (const t of TARGETS) {
          const c1 = await meter[t]()
          if (round < 0) continue
          windows[t].push((writes[t] * 1000) / ms)
          windowCpu[t].push((c1 - c0[t]) / 1e6 / writes[t])
        }
      }
    else
      for (let round = -1; round < WINDOWS; round++)
        for (const t of orderOf(round + 1)) {
          const d = drivers[t]
          const c0 = await meter[t]()
          const m0 = mainThread(pid(t))
          const s = performance.now()
          const end = s + SECONDS * 1000
          let writes = 0
          await Promise.all(
            d.nodes.map(async (id) => {
              while (performance.now() < end) {
                await d.update(id)
                writes++
              }
            }),
          )
          const ms = performance.now() - s
          const m1 = mainThread(pid(t))
          if (t !== 'floor') await settle(pid(t), 5000)
          const c1 = await meter[t]()
          if (round < 0) continue
          windows[t].push((writes * 1000) / ms)
          windowCpu[t].push((c1 - c0) / 1e6 / writes)
          main[t].push({
            cpuMs: (m1.runNs - m0.runNs) / 1e6 / writes,
            running: (m1.runNs - m0.runNs) / 1e6 / ms,
            waiting: (m1.waitNs - m0.waitNs) / 1e6 / ms,
          })
        }

    phase('eight writers')
    // ifRev: head's update with the rev the last update returned, and without, pair by pair, in rounds
    const head = drivers.head
    const rev = { value: (await head.update(head.nodes[1]!)).node.rev as string }
    const withRev: number[][] = []
    const without: number[][] = []
    for (let r = 0; r < (EIGHT_ONLY ? 0 : ROUNDS); r++) {
      const a: number[] = []
      const b: number[] = []
      for (let i = 0; i < BLOCK; i++) {
        const withIt = async () => (rev.value = (await head.update(head.nodes[1]!, { ifRev: rev.value })).node.rev)
        const plain = () => head.update(head.nodes[1]!)
        if (i % 2) {
          a.push(await timed(withIt))
          b.push(await timed(plain))
          rev.value = (await head.update(head.nodes[1]!)).node.rev
        } else {
          b.push(await timed(plain))
          rev.value = (await head.update(head.nodes[1]!)).node.rev
          a.push(await timed(withIt))
        }
      }
      withRev.push(a)
      without.push(b)
    }

    phase('ifRev')
    const rows = OPS.map((op) => {
      const b = blocks[op]
      const perRound = (t: Target) => b[t].map(p50)
      return {
        op,
        p50: Object.fromEntries(TARGETS.map((t) => [t, r2(p50(b[t].flat()))])) as Record<Target, number>,
        headOverRef: spread(ratios(perRound('head'), perRound('ref'))),
        headOverFloor: spread(ratios(perRound('head'), perRound('floor'))),
        headOverNoHistory: spread(ratios(perRound('head'), perRound('nohist'))),
        /** --history: head ÷ its control (history on in both: an A/A comparison) */
        headOverControl: spread(ratios(perRound('head'), perRound('control'))),
        /** CPU ms per write (median of the rounds), the target's process and its database's backends, background included */
        cpuMs: Object.fromEntries(TARGETS.map((t) => [t, r2(p50(cpu[op][t]))])) as Record<Target, number>,
        cpuHeadOverRef: spread(ratios(cpu[op].head, cpu[op].ref)),
        cpuHeadOverFloor: spread(ratios(cpu[op].head, cpu[op].floor)),
        cpuHeadOverNoHistory: spread(ratios(cpu[op].head, cpu[op].nohist)),
        cpuHeadOverControl: spread(ratios(cpu[op].head, cpu[op].control)),
        /** CPU per write over the whole run, head's mean ÷ no history's */
        cpuMeanHeadOverNoHistory: meanRatio(cpu[op].head, cpu[op].nohist),
        /** --history: CPU ms of each write while it was answered (the median of the rounds' p50s), and the ratios of the rounds' p50s */
        requestCpuMs: Object.fromEntries(TARGETS.map((t) => [t, Number(p50(requestCpu[op][t]).toFixed(3))])) as Record<Target, number>,
        requestCpuHeadOverNoHistory: spread(ratios(requestCpu[op].head, requestCpu[op].nohist)),
        requestCpuHeadOverControl: spread(ratios(requestCpu[op].head, requestCpu[op].control)),
      }
    })
    const total = (t: Target) => r2(windows[t].reduce((s, x) => s + x, 0) / windows[t].length)
    const out = {
      db: kind,
      block: BLOCK,
      rounds: ROUNDS,
      samples: ROUNDS * BLOCK,
      singleSeconds: r2(singleSeconds),
      seconds: SECONDS,
      windows: WINDOWS,
      single: rows,
      /** seconds in each loop per single write (all ops, warm-ups included), from /metrics */
      loopMsPerWrite: Object.fromEntries(
        apps.map((t) => [
          t,
          Object.fromEntries(
            Object.keys(loopsAfter[t])
              .filter((l) => !l.endsWith(' runs'))
              .map((l) => [l, r2(((loopsAfter[t][l] - (loopsBefore[t][l] ?? 0)) * 1000) / singleWrites)]),
          ),
        ]),
      ),
      eightWriters: {
        writesPerSecond: Object.fromEntries(TARGETS.map((t) => [t, Math.round(total(t))])) as Record<Target, number>,
        headOverRef: spread(ratios(windows.head, windows.ref)),
        headOverNoHistory: spread(ratios(windows.head, windows.nohist)),
        cpuMsPerUpdate: Object.fromEntries(TARGETS.map((t) => [t, r2(p50(windowCpu[t]))])) as Record<Target, number>,
        cpuHeadOverRef: spread(ratios(windowCpu.head, windowCpu.ref)),
        cpuHeadOverNoHistory: spread(ratios(windowCpu.head, windowCpu.nohist)),
        cpuHeadOverControl: spread(ratios(windowCpu.head, windowCpu.control)),
        /** the main thread in the windows (not --history), medians of the rounds: CPU ms per update, shares of the window running and waiting for a core */
        mainThread: Object.fromEntries(
          TARGETS.map((t) => [
            t,
            main[t].length
              ? {
                  cpuMsPerUpdate: Number(p50(main[t].map((m) => m.cpuMs)).toFixed(3)),
                  running: r2(p50(main[t].map((m) => m.running))),
                  waiting: r2(p50(main[t].map((m) => m.waiting))),
                }
              : null,
          ]),
        ),
        /** throughput head ÷ ref, the geometric mean of the rounds' ratios [90% interval] */
        headOverRefGeometric: geometric(ratios(windows.head, windows.ref)),
        mainCpuHeadOverRef: spread(
          ratios(
            main.head.map((m) => m.cpuMs),
            main.ref.map((m) => m.cpuMs),
          ),
        ),
        /** each round's writes a second, by target */
        perRound: windows,
      },
      ifRev: {
        withP50: r2(p50(withRev.flat())),
        withoutP50: r2(p50(without.flat())),
        ratio: spread(ratios(withRev.map(p50), without.map(p50))),
      },
    }
    console.log(JSON.stringify(out))
    return out
  } finally {
    for (const c of closers) await c().catch(() => {})
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
if (HISTORY_ONLY && WAKE) throw new Error('--wake runs head and the reference: not with --history')
if (!HISTORY_ONLY) {
  git('worktree', 'add', '--detach', refDir, REF)
  symlinkSync(join(ROOT, 'node_modules'), join(refDir, 'node_modules'))
}
/** each database's figures (the --wake run's are only its own) */
const results: any[] = []
try {
  if (only !== 'postgres') results.push(await run('pglite', refDir))
  if (PG_URL && only !== 'pglite') results.push(await run('postgres', refDir))
} finally {
  if (existsSync(refDir)) git('worktree', 'remove', '--force', refDir)
}

const x = (s: Spread) => (s ? `${s.median}× (${s.min}–${s.max})` : '–')
/** met by the median; "(not every round)" when the rounds' range crosses the goal */
const met = (s: Spread, goal: number, atLeast = false) => {
  if (!s) return '–'
  const ok = (v: number) => (atLeast ? v >= goal : v <= goal)
  const all = ok(s.min) && ok(s.max)
  const none = !ok(s.min) && !ok(s.max)
  return all ? 'yes' : none ? '**no**' : ok(s.median) ? 'yes (not every round)' : '**no** (not every round)'
}
if (HISTORY_ONLY) {
  const first = results[0]
  /** with a 90% confidence interval of the median */
  const xc = (s: Spread) => (s ? `${s.median}× [${s.lo}–${s.hi}] (${s.min}–${s.max})` : '–')
  /** judged by the interval: met when all of it is within the goal, missed when none is */
  const judged = (s: Spread, goal: number) => (!s ? '–' : s.hi <= goal ? 'yes' : s.lo > goal ? '**no**' : 'not told apart')
  if (first)
    console.log(
      `\nhistory's share: ${first.rounds} rounds; in each, per write, ${WARM} untimed + ${BLOCK} timed writes (the batch ${BATCH_BLOCK}) on head, on its no-history process and on its control (a second head, history on: the A/A), interleaved write by write, their order turned at each write; ratio = median of the rounds' ratios [90% confidence interval of it, 2,000 resamples of the rounds] (min–max); a p50 = of every sample; CPU: the process and (PostgreSQL) its database's backends from the round's block until all three were idle, ÷ the block's writes. Judge by the interval beside the A/A's (see bench/README.md). A shared machine: say the load beside it.\n`,
    )
  const table = (title: string, ms: (s: any) => string, ratio: (s: any) => Spread, aa: (s: any) => Spread, extra?: (s: any) => string) => {
    console.log(`${title}\n`)
    console.log(
      `| db | write | ms: head / no history / control | head ÷ no history | A/A: head ÷ control | within history.md 7 (1.15×; batch1000 1.25×)? |${extra ? " the run's means |" : ''}`,
    )
    console.log(`|---|---|---|---|---|---|${extra ? '---|' : ''}`)
    for (const r of results)
      for (const s of r.single)
        console.log(
          `| ${r.db} | ${s.op} | ${ms(s)} | ${xc(ratio(s))} | ${xc(aa(s))} | ${judged(ratio(s), historyGoal(s.op))} |${extra ? ` ${extra(s)} |` : ''}`,
        )
    console.log('')
  }
  const three = (o: Record<string, number>) => `${o.head} / ${o.nohist} / ${o.control}`
  table(
    "time (wall, from the client): each round's p50",
    (s) => three(s.p50),
    (s) => s.headOverNoHistory,
    (s) => s.headOverControl,
  )
  table(
    "CPU of each write while it was answered (the process and its backends, from the send to the answer): each round's p50",
    (s) => three(s.requestCpuMs),
    (s) => s.requestCpuHeadOverNoHistory,
    (s) => s.requestCpuHeadOverControl,
  )
  table(
    "CPU with the background: the round's block, until the three were idle, ÷ its writes",
    (s) => three(s.cpuMs),
    (s) => s.cpuHeadOverNoHistory,
    (s) => s.cpuHeadOverControl,
    (s) => `${s.cpuMeanHeadOverNoHistory}×`,
  )
  console.log(
    `\n8 writers (label updates, each its own node): ${first?.windows} rounds of a ${SECONDS} s window, the three targets at once\n`,
  )
  console.log(
    '| db | w/s: head / no history / control | no history ÷ head | A/A: control ÷ head | ≤ 1.15×? | CPU ms per update: head / no history / control | CPU head ÷ no history | CPU A/A | CPU ≤ 1.15×? |',
  )
  console.log('|---|---|---|---|---|---|---|---|---|')
  for (const r of results) {
    const w = r.eightWriters
    const turned = spread(ratios(w.perRound.nohist, w.perRound.head))
    const aa = spread(ratios(w.perRound.control, w.perRound.head))
    console.log(
      `| ${r.db} | ${w.writesPerSecond.head} / ${w.writesPerSecond.nohist} / ${w.writesPerSecond.control} | ${xc(turned)} | ${xc(aa)} | ${judged(turned, 1.15)} | ${w.cpuMsPerUpdate.head} / ${w.cpuMsPerUpdate.nohist} / ${w.cpuMsPerUpdate.control} | ${xc(w.cpuHeadOverNoHistory)} | ${xc(w.cpuHeadOverControl)} | ${judged(w.cpuHeadOverNoHistory, 1.15)} |`,
    )
  }
} else if (!WAKE) {
  const first = results[0]
  // --eight: no single writes, no tables of them
  if (OPS.length) {
    if (first)
      console.log(
        `\n${first.rounds} rounds; in each, per write and target, a block of ${WARM} untimed + ${BLOCK} timed writes back to back (the batch ${BATCH_BLOCK}), the targets and writes taking turns block by block; ratio = median of the rounds' ratios (min–max); a p50 = of every sample. A shared machine: say the load beside it.\n`,
      )
    console.log(`time (wall, from the client)\n`)
    console.log(
      `| db | write | head p50 | ${REF} p50 | no history p50 | floor p50 | head ÷ ${REF} | ≤ 1.15×? | head ÷ floor | ≤ 2×? | head ÷ no history | within history.md 7? |`,
    )
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|')
    for (const r of results)
      for (const s of r.single)
        console.log(
          `| ${r.db} | ${s.op} | ${s.p50.head} ms | ${s.p50.ref} ms | ${s.p50.nohist} ms | ${s.p50.floor} ms | ${x(s.headOverRef)} | ${met(s.headOverRef, 1.15)} | ${x(s.headOverFloor)} | ${met(s.headOverFloor, 2)} | ${x(s.headOverNoHistory)} | ${met(s.headOverNoHistory, historyGoal(s.op))} |`,
        )
    console.log(
      `\nCPU per write: the target's process and (PostgreSQL) its database's backends, from the block's start until its background work was done, ÷ the block's writes (median of the rounds)\n`,
    )
    console.log(`| db | write | head ms | ${REF} ms | no history ms | floor ms | head ÷ ${REF} | head ÷ floor | head ÷ no history |`)
    console.log('|---|---|---|---|---|---|---|---|---|')
    for (const r of results)
      for (const s of r.single) {
        const c = s.cpuMs
        console.log(
          `| ${r.db} | ${s.op} | ${c.head} | ${c.ref} | ${c.nohist} | ${c.floor} | ${x(s.cpuHeadOverRef)} | ${x(s.cpuHeadOverFloor)} | ${x(s.cpuHeadOverNoHistory)} |`,
        )
      }
  }
  console.log(
    `\n8 writers (label updates, each its own node): ${first?.windows} rounds of a ${SECONDS} s window per target; ifRev: head's update with ifRev ÷ without, pair by pair, ${first?.rounds} rounds of ${BLOCK} pairs\n`,
  )
  console.log(
    `| db | w/s: head | ${REF} | no history | floor | head ÷ ${REF} | ≥ 1×? | head ÷ no history | CPU ms per update: head / ${REF} | CPU head ÷ ${REF} | ifRev p50 with / without | ifRev ÷ without | ≤ 1.10×? |`,
  )
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|')
  for (const r of results) {
    const w = r.eightWriters
    console.log(
      `| ${r.db} | ${w.writesPerSecond.head} | ${w.writesPerSecond.ref} | ${w.writesPerSecond.nohist} | ${w.writesPerSecond.floor} | ${x(w.headOverRef)} | ${met(w.headOverRef, 1, true)} | ${x(w.headOverNoHistory)} | ${w.cpuMsPerUpdate.head} / ${w.cpuMsPerUpdate.ref} | ${x(w.cpuHeadOverRef)} | ${EIGHT_ONLY ? '– | – | –' : `${r.ifRev.withP50} / ${r.ifRev.withoutP50} ms | ${x(r.ifRev.ratio)} | ${met(r.ifRev.ratio, 1.1)}`} |`,
    )
  }
  console.log(
    `\nThe main thread in the 8 writers' windows (median of the rounds): CPU ms per update / share of the window running / share waiting for a core; what is left of 1 it was idle\n`,
  )
  console.log(
    `| db | head | ${REF} | no history | floor | main-thread CPU head ÷ ${REF} [90%] | throughput head ÷ ${REF}: geometric mean of the rounds' ratios [90%] |`,
  )
  console.log('|---|---|---|---|---|---|---|')
  for (const r of results) {
    const w = r.eightWriters
    const m = (t: Target) => {
      const v = w.mainThread[t]
      return v ? `${v.cpuMsPerUpdate} / ${v.running} / ${v.waiting}` : '–'
    }
    const g = w.headOverRefGeometric
    const c = w.mainCpuHeadOverRef
    console.log(
      `| ${r.db} | ${m('head')} | ${m('ref')} | ${m('nohist')} | ${m('floor')} | ${c ? `${x(c)} [${c.lo}–${c.hi}]` : '–'} | ${g ? `${g.mean}× [${g.lo}–${g.hi}]` : '–'} |`,
    )
  }
  for (const r of OPS.length ? results : [])
    console.log(
      `${r.db}: loop ms per single write (/metrics): ${Object.entries(r.loopMsPerWrite)
        .map(
          ([t, l]) =>
            `${t} ${Object.entries(l as Record<string, number>)
              .filter(([, v]) => v > 0)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')}`,
        )
        .join('; ')}`,
    )
}
for (const r of results)
  if ('wake' in r && r.wake) {
    console.log(
      `\n${r.db}, --wake: ${WAKE_ROUNDS} rounds of a ${r.streamMs} ms stream of writes back to back (each timed) and ${PAUSED} writes each after a pause of ${r.pauseMs} ms; loop ms per write of the stream from /metrics\n`,
    )
    console.log('| write | target | stream p50 | mean | p90 | writes | loop ms per write | after a pause, p50 |')
    console.log('|---|---|---|---|---|---|---|---|')
    for (const [op, w] of Object.entries(r.wake as Record<string, Record<string, WakeFigures>>))
      for (const [t, v] of Object.entries(w))
        console.log(
          `| ${op} | ${t === 'ref' ? REF : t} | ${v.p50} ms | ${v.mean} ms | ${v.p90} ms | ${v.writes} | ${Object.entries(v.loopMs)
            .map(([l, ms]) => `${l} ${ms}${v.loopRuns[`${l} runs`] ? ` (${v.loopRuns[`${l} runs`]} runs)` : ''}`)
            .join(', ')} | ${v.paused} ms |`,
        )
  }
mkdirSync(join(ROOT, 'bench/results'), { recursive: true })
writeFileSync(join(ROOT, 'bench/results/writes.json'), JSON.stringify(results, null, 2))
