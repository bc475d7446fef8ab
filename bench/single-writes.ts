// Single writes back to back (issue 51, 3): one writer, the targets taking turns in blocks of
// requests, so that each target's block sees the same minutes of a shared machine, and a ratio
// is read per round (head's block p50 ÷ the other's block p50 in the same round) and its median
// over the rounds given. Steadier than one request each in turn, whose p50 over 25 samples moves
// by 2–3× between runs on this machine.
//
//   bun bench/single-writes.ts [pglite|postgres] [--ref <commit>]… [--rounds 12] [--block 25] [--ops goal,job,task,update,delete]
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/single-writes.ts postgres --ref 26c0789
//
// Targets: head (`bun src/main.ts` of this checkout), each `--ref` commit (checked out into a
// temporary `git worktree add --detach`, node_modules a symlink to ours, removed at the end) and
// the floor (bench/lib/write-floor.ts: the write's SQL statements in one transaction and nothing
// else). Each on a fresh database of its own (the floor on PostgreSQL on head's, as
// `npm run bench:writes` does). Writes as `npm run bench:writes` makes them: a goal, a job under
// one approach, a task (no parent), a goal's label updated, a goal deleted (added untimed just before).

import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ownDatabase, serverEnv, until } from './lib/harness'
import { freePort } from './lib/spawn'

const ROOT = join(import.meta.dir, '..')
const args = process.argv.slice(2)
const kind = (args[0] === 'postgres' ? 'postgres' : 'pglite') as 'pglite' | 'postgres'
const num = (name: string, fallback: number) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : fallback)
const ROUNDS = num('rounds', 12)
const BLOCK = num('block', 25)
const refs = args.flatMap((a, i) => (a === '--ref' ? [args[i + 1]!] : []))
const OPS = (args.includes('--ops') ? args[args.indexOf('--ops') + 1]! : 'goal,job,task,update,delete').split(',')
const PG_URL = process.env.BENCH_DATABASE_URL
if (kind === 'postgres' && !PG_URL) throw new Error('postgres needs BENCH_DATABASE_URL')

type Call = (body: unknown) => Promise<Record<string, any>>
interface Target {
  name: string
  proc: ReturnType<typeof Bun.spawn>
  call: Call
  floor: boolean
}

const tmp = mkdtempSync(join(tmpdir(), 'arbor-single-writes-'))
const git = (...a: string[]) => {
  const r = Bun.spawnSync(['git', ...a], { cwd: ROOT, stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`git ${a.join(' ')}: ${r.stderr.toString()}`)
}
const worktrees: string[] = []
const targets: Target[] = []
const dbs: { drop: () => Promise<void> }[] = []

async function start(name: string, dir: string | null, env: Record<string, string | undefined>): Promise<Target> {
  const port = freePort()
  let out = ''
  const floor = dir === null
  const proc = Bun.spawn([process.execPath, floor ? 'bench/lib/write-floor.ts' : 'src/main.ts'], {
    cwd: dir ?? ROOT,
    env: serverEnv({ ...env, PORT: String(port), LOG_LEVEL: 'warn', EMBEDDINGS_MODEL_DIR: join(tmp, 'no-model') }),
    stdout: 'pipe',
    stderr: 'ignore',
  })
  void (async () => {
    for await (const c of proc.stdout) out += new TextDecoder().decode(c)
  })()
  const base = `http://127.0.0.1:${port}`
  const key = floor ? null : await until(() => /Arbor API key for owner: (arb_[0-9A-Za-z]+)/.exec(out)?.[1], `${name}: owner key`, 120_000)
  if (floor) await until(() => (/listening/.test(out) ? true : undefined), `${name}: listening`, 60_000)
  else await until(async () => ((await fetch(`${base}/healthz`).catch(() => null))?.ok ? true : undefined), `${name}: healthz`)
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) }
  const call: Call = async (body) => {
    const res = await fetch(floor ? `${base}/` : `${base}/api/v1/mutate`, { method: 'POST', headers, body: JSON.stringify(body) })
    const text = await res.text()
    if (res.status !== 200) throw new Error(`${name}: ${res.status} ${text.slice(0, 300)}`)
    return JSON.parse(text)
  }
  return { name, proc, call, floor }
}

/** The ops of one target: each returns the timed request (after any untimed step it needs). */
async function driver(t: Target) {
  const P = 'bench'
  let k = 0
  const add = async (type: string, parentId?: string): Promise<string> =>
    t.floor
      ? (await t.call({ op: 'add', projectId: P, type, parentId, label: `x${++k}` })).ids[0]
      : (await t.call({ action: 'add', projectId: P, node: { type, ...(parentId ? { parentId } : {}), data: { label: `x${++k}` } } })).node
          .id
  if (t.floor) await t.call({ op: 'project', projectId: P })
  else await t.call({ action: 'addProject', project: { id: P, name: P } })
  const goal = await add('goal')
  const approach = await add('approach', await add('need', goal))
  const target = await add('goal')
  return async (op: string): Promise<() => Promise<unknown>> => {
    if (op === 'goal') return () => add('goal')
    if (op === 'job') return () => add('job', approach)
    if (op === 'task') return () => add('task')
    if (op === 'update')
      return () =>
        t.floor
          ? t.call({ op: 'update', projectId: P, nodeId: target, label: `u${++k}` })
          : t.call({ action: 'update', projectId: P, nodeId: target, data: { label: `u${++k}` } })
    const victim = await add('goal')
    return () =>
      t.floor ? t.call({ op: 'delete', projectId: P, nodeId: victim }) : t.call({ action: 'delete', projectId: P, nodeId: victim })
  }
}

/** CPU ms the process's main thread has used (Linux /proc, 10 ms ticks: read it over many requests); NaN elsewhere. */
function threadCpuMs(pid: number): number {
  const file = `/proc/${pid}/task/${pid}/stat`
  if (!existsSync(file)) return Number.NaN
  const f = readFileSync(file, 'utf8').split(') ')[1]!.split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const loadavg = () => (existsSync('/proc/loadavg') ? (Bun.file('/proc/loadavg').text() as Promise<string>) : Promise.resolve('?'))

try {
  let headEnv: Record<string, string | undefined> = {}
  for (const name of ['head', ...refs, 'floor']) {
    let dir: string | null = ROOT
    if (name === 'floor') dir = null
    else if (name !== 'head') {
      dir = join(tmp, `ref-${name}`)
      git('worktree', 'add', '--detach', dir, name)
      worktrees.push(dir)
      symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
    }
    const db = name === 'floor' && kind === 'postgres' ? { env: headEnv, drop: async () => {} } : await ownDatabase(kind, tmp, PG_URL)
    dbs.push(db)
    if (name === 'head') headEnv = db.env
    targets.push(await start(name, dir, db.env))
  }
  const drivers: Awaited<ReturnType<typeof driver>>[] = []
  for (const t of targets) drivers.push(await driver(t)) // one after another: the floor on PostgreSQL uses head's project
  const before = (await loadavg()).split(' ').slice(0, 3).join(' ')
  // warm-up: one block of each op a target, untimed
  for (const op of OPS) for (const d of drivers) for (let i = 0; i < BLOCK; i++) await (await d(op))()
  const blocks = new Map<string, number[][]>() // op/target → each round's times
  const cpus = new Map<string, number>() // op/target → the server's main-thread CPU ms over its timed blocks
  for (let round = 0; round < ROUNDS; round++)
    for (const op of OPS)
      for (let j = 0; j < targets.length; j++) {
        const i = (round + j) % targets.length
        const times: number[] = []
        const cpu = threadCpuMs(targets[i]!.proc.pid)
        for (let n = 0; n < BLOCK; n++) {
          const fn = await drivers[i]!(op)
          const s = performance.now()
          await fn()
          times.push(performance.now() - s)
        }
        const key = `${op}/${targets[i]!.name}`
        blocks.set(key, [...(blocks.get(key) ?? []), times])
        cpus.set(key, (cpus.get(key) ?? 0) + threadCpuMs(targets[i]!.proc.pid) - cpu)
      }
  const after = (await loadavg()).split(' ').slice(0, 3).join(' ')
  const others = targets.slice(1)
  console.log(
    `\n${kind}, ${ROUNDS} rounds of blocks of ${BLOCK} requests a write a target, load average ${before} → ${after}\n\n` +
      `| write | ${targets.map((t) => `${t.name} p50`).join(' | ')} | ${others.map((t) => `head ÷ ${t.name} (median of rounds; range)`).join(' | ')} | ${targets.map((t) => `${t.name} CPU a write`).join(' | ')} |\n` +
      `|---|${targets.map(() => '---').join('|')}|${others.map(() => '---').join('|')}|${targets.map(() => '---').join('|')}|`,
  )
  for (const op of OPS) {
    const p50s = targets.map((t) => median(blocks.get(`${op}/${t.name}`)!.flat()))
    const ratios = others.map((t) => {
      const head = blocks.get(`${op}/head`)!.map(median)
      const r = blocks.get(`${op}/${t.name}`)!.map((b, i) => head[i]! / median(b))
      return `${median(r).toFixed(2)}× (${Math.min(...r).toFixed(2)}–${Math.max(...r).toFixed(2)})`
    })
    const cpu = targets.map((t) => `${((cpus.get(`${op}/${t.name}`) ?? 0) / (ROUNDS * BLOCK)).toFixed(2)} ms`)
    console.log(`| ${op} | ${p50s.map((p) => `${p.toFixed(2)} ms`).join(' | ')} | ${ratios.join(' | ')} | ${cpu.join(' | ')} |`)
  }
} finally {
  for (const t of targets) {
    t.proc.kill('SIGTERM')
    await t.proc.exited
  }
  for (const d of dbs) await d.drop().catch(() => {})
  for (const w of worktrees) git('worktree', 'remove', '--force', w)
  rmSync(tmp, { recursive: true, force: true })
}
