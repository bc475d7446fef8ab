/**
 * What a server start costs: CPU and wall time from spawn to the first 200 of `/healthz`, the CPU
 * of the second after it, and the whole process's CPU once SIGTERM has stopped it:
 *
 *   bun bench/startup.ts [--runs 10] [--ref main] [--only pglite|postgres] [--data fresh|template] [--profile]
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/startup.ts
 *
 * Targets: head (`bun src/main.ts` of this checkout) and the reference commit (checked out into a
 * temporary `git worktree add --detach`, node_modules a symlink to ours, removed at the end), the
 * starts alternating between them. Each start is on a database of its own, in two kinds: `fresh`
 * (an empty DATA_DIR or database: initdb on PGlite and every migration) and `template` (a copy of
 * a migrated PGlite cluster, or a database created from a migrated template: what the tests start
 * on under scripts/test.ts, and what an operator's every start after the first finds). PostgreSQL
 * only with BENCH_DATABASE_URL.
 *
 * CPU at `/healthz`: the kernel's schedstat of the server's threads then running (ns), read as
 * soon as `/healthz` answers 200 (polled every 10 ms). CPU in all: the process's rusage once it
 * exited (user + system, every thread, as `/usr/bin/time -v` reports it). Medians of `--runs`
 * starts a target and kind, and head ÷ ref of each median.
 *
 * `--profile`: one more start of head a kind with `bun --cpu-prof`, stopped 1 s after `/healthz`;
 * prints the functions with the most samples of their own and the source files (a package counted
 * as one) whose code took the most samples.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { migrate } from '../src/db/migrate'
import { openPglite } from '../src/db/pglite'
import { openPostgres } from '../src/db/postgres'
import { serverEnv } from './lib/harness'
import { cpuNs } from './lib/proc-cpu'

const ROOT = join(import.meta.dir, '..')
const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1]! : fallback
}
const RUNS = Number(opt('runs', '10'))
const REF = opt('ref', 'main')
const ONLY = opt('only', '')
const DATA = opt('data', '')
const PROFILE = args.includes('--profile')
const PG_URL = process.env.BENCH_DATABASE_URL

type Kind = { db: 'pglite' | 'postgres'; data: 'fresh' | 'template' }
const KINDS: Kind[] = (['pglite', 'postgres'] as const)
  .filter((db) => (!ONLY || ONLY === db) && (db === 'pglite' || PG_URL))
  .flatMap((db) => (['fresh', 'template'] as const).filter((data) => !DATA || DATA === data).map((data) => ({ db, data })))

const tmp = mkdtempSync(join(tmpdir(), 'arbor-startup-'))
const git = (...a: string[]) => {
  const r = Bun.spawnSync(['git', ...a], { cwd: ROOT, stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`git ${a.join(' ')}: ${r.stderr.toString()}`)
}
const refDir = join(tmp, 'ref')
const admin = PG_URL ? postgres(PG_URL, { max: 1, onnotice: () => {} }) : undefined
const PG_TEMPLATE = `arbor_startup_tpl_${process.pid}`
const made: string[] = []

/** The migrated PGlite cluster and PostgreSQL template every `template` start copies (made once, by head's migrations). */
async function templates() {
  const dir = join(tmp, 'pglite-template')
  const db = await openPglite(dir)
  await migrate(db)
  await db.close()
  if (admin) {
    await admin.unsafe(`create database ${PG_TEMPLATE}`)
    const url = new URL(PG_URL!)
    url.pathname = `/${PG_TEMPLATE}`
    const pg = await openPostgres(url.toString())
    await migrate(pg)
    await pg.close()
  }
  return join(dir, 'pgdata')
}

/** A database of its own for one start, as `kind` says. */
async function database(kind: Kind, cluster: string): Promise<Record<string, string>> {
  const dataDir = mkdtempSync(join(tmp, 'data-'))
  if (kind.db === 'pglite') {
    if (kind.data === 'template') cpSync(cluster, join(dataDir, 'pgdata'), { recursive: true })
    return { DATA_DIR: dataDir }
  }
  const name = `arbor_startup_${process.pid}_${made.length}`
  made.push(name)
  await admin!.unsafe(`create database ${name}${kind.data === 'template' ? ` template ${PG_TEMPLATE}` : ''}`)
  const url = new URL(PG_URL!)
  url.pathname = `/${name}`
  return { DATABASE_URL: url.toString(), DATA_DIR: dataDir }
}

interface Start {
  wallMs: number
  cpuMs: number
  afterMs: number
  totalMs: number
}

/** One start of `dir`'s server: spawn → /healthz 200 → 1 s → SIGTERM → exit. */
async function start(dir: string, env: Record<string, string>, flags: string[] = []): Promise<Start> {
  const port = 20000 + Math.floor(Math.random() * 20000)
  const t0 = performance.now()
  const proc = Bun.spawn([process.execPath, ...flags, 'src/main.ts'], {
    cwd: dir,
    env: serverEnv({ ...env, PORT: String(port), ADMIN_TOKEN: `startup-${crypto.randomUUID()}` }),
    stdout: 'ignore',
    stderr: 'pipe',
  })
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`the server exited (${proc.exitCode}): ${await new Response(proc.stderr).text()}`)
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`)
      .then((r) => r.status === 200)
      .catch(() => false)
    if (ok) break
    if (performance.now() - t0 > 120_000) throw new Error('no /healthz in 120 s')
    await Bun.sleep(10)
  }
  const wallMs = performance.now() - t0
  const cpuMs = cpuNs(proc.pid) / 1e6
  await Bun.sleep(1000)
  const afterMs = cpuNs(proc.pid) / 1e6 - cpuMs
  proc.kill('SIGTERM')
  await proc.exited
  const usage = proc.resourceUsage()!
  const totalMs = Number(usage.cpuTime.user + usage.cpuTime.system) / 1000
  return { wallMs, cpuMs, afterMs, totalMs }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

/** The part of a .cpuprofile (Chrome's format, as Bun writes it) read here. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[]
  samples: number[]
}

function profileTable(profile: CpuProfile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]))
  const fn = new Map<string, number>()
  const file = new Map<string, number>()
  for (const id of profile.samples) {
    const { functionName, url, lineNumber } = byId.get(id)!
    const where = url.replace(`file://`, '').replace(`${ROOT}/`, '')
    const f = `\`${functionName || '(anonymous)'}\` ${where ? `${where}:${lineNumber + 1}` : 'native'}`
    fn.set(f, (fn.get(f) ?? 0) + 1)
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where)?.[1]
    const k = pkg ? `node_modules/${pkg}` : where || '(native, idle or GC)'
    file.set(k, (file.get(k) ?? 0) + 1)
  }
  const n = profile.samples.length
  const rows = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20)
      .map(([k, c]) => `| ${((100 * c) / n).toFixed(1)}% | ${k} |`)
      .join('\n')
  return `${n} samples\n\n| self | function |\n|---|---|\n${rows(fn)}\n\n| self | file or package |\n|---|---|\n${rows(file)}`
}

try {
  git('worktree', 'add', '--detach', refDir, REF)
  symlinkSync(join(ROOT, 'node_modules'), join(refDir, 'node_modules'))
  const cluster = await templates()
  const targets: [string, string][] = [
    ['head', ROOT],
    [REF, refDir],
  ]
  console.log(
    `${RUNS} starts a target and kind, alternating; medians (ms). CPU: the server's threads at the first 200 of /healthz; after: the next second; in all: rusage at exit (SIGTERM 1 s after /healthz)\n`,
  )
  console.log(
    '| database | data | target | wall to /healthz | CPU to /healthz | CPU the second after | CPU in all |\n|---|---|---|---|---|---|---|',
  )
  for (const kind of KINDS) {
    const got = new Map<string, Start[]>(targets.map(([name]) => [name, []]))
    for (let r = 0; r < RUNS; r++)
      for (const [name, dir] of r % 2 ? [...targets].reverse() : targets)
        got.get(name)!.push(await start(dir, await database(kind, cluster)))
    const med = (name: string, k: keyof Start) => median(got.get(name)!.map((s) => s[k]))
    for (const [name] of targets)
      console.log(
        `| ${kind.db} | ${kind.data} | ${name} | ${med(name, 'wallMs').toFixed(0)} | ${med(name, 'cpuMs').toFixed(0)} | ${med(name, 'afterMs').toFixed(0)} | ${med(name, 'totalMs').toFixed(0)} |`,
      )
    const ratio = (k: keyof Start) => (med('head', k) / med(REF, k)).toFixed(2)
    console.log(
      `| ${kind.db} | ${kind.data} | head ÷ ${REF} | ${ratio('wallMs')} | ${ratio('cpuMs')} | ${ratio('afterMs')} | ${ratio('totalMs')} |`,
    )
  }
  if (PROFILE)
    for (const kind of KINDS) {
      const dir = mkdtempSync(join(tmp, 'prof-'))
      await start(ROOT, await database(kind, cluster), ['--cpu-prof', `--cpu-prof-dir=${dir}`])
      const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
      if (!file) throw new Error('the server wrote no .cpuprofile')
      console.log(`\n## head, ${kind.db}, ${kind.data}: spawn → /healthz → 1 s → SIGTERM\n`)
      console.log(profileTable(JSON.parse(readFileSync(join(dir, file), 'utf8'))))
    }
} finally {
  if (existsSync(refDir)) git('worktree', 'remove', '--force', refDir)
  if (admin) {
    for (const name of [...made, PG_TEMPLATE]) await admin.unsafe(`drop database if exists ${name} with (force)`)
    await admin.end()
  }
  rmSync(tmp, { recursive: true, force: true })
}
process.exit(0)
