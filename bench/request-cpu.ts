// Where a single write's CPU goes on PGlite: inside the request or after it (issue 51, 3; bench/writes.md,
// "Eleventh pass: a job's add on PGlite"). `npm run bench:writes` gives the CPU per write from a block's
// start until the process is idle again: the write and the background it leaves (the loops it wakes,
// the search's catch-up, the embedder's requests) in one figure. A write that spends more in its
// request and leaves less behind has the same figure and a slower answer; this splits the two.
//
//   bun bench/request-cpu.ts [--ops addJob,addTask] [--rounds 4] [--block 100] [--ref 26c0789] [--checkout <dir>]…
//
// Targets: head (`bun src/main.ts` of this checkout), the reference commit (checked out into a
// temporary `git worktree add --detach`, node_modules a symlink to ours, removed at the end) and any
// other checkout given, each on a fresh PGlite of its own, embedding through bench/lib/embed-stub.ts
// as `npm run bench:writes` does. The writes are the bench's: a goal, a job under one approach, a
// task. In each round, per op and target (the targets' order turning), 2 untimed writes and a block
// sent one after the other as one writer sends them; around each write the server's CPU (every
// thread of it, /proc/<pid>/task/*/schedstat, in ns) is read before the request is sent and after
// its answer has arrived: "in the request" is that window's CPU (what the request ran, plus whatever
// else the process ran in it); "outside" is the block's CPU from its start until the process is idle
// again (at most 1.5 ms of CPU in 50 ms), less its requests' windows, per write. Reading the threads
// takes the client a fraction of a millisecond between writes, so the answers come a little further
// apart than in `npm run bench:writes`: compare the targets, not these times with the bench's.

import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { ownDatabase, serverEnv, until } from './lib/harness'
import { cpuNs, settle } from './lib/proc-cpu'
import { startWritesServer } from './lib/writes-server'

const ROOT = join(import.meta.dir, '..')
const args = process.argv.slice(2)
const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback)
const OPS = opt('ops', 'addJob,addTask').split(',')
const ROUNDS = Number(opt('rounds', '4'))
const BLOCK = Number(opt('block', '100'))
const REF = opt('ref', '26c0789')
const others = args.flatMap((a, i) => (a === '--checkout' ? [args[i + 1]!] : []))
for (const op of OPS)
  if (!['addGoal', 'addJob', 'addTask'].includes(op)) throw new Error(`--ops: ${op} is none of addGoal, addJob, addTask`)

/** CPU ns the process's main thread (its tid is its pid: the JavaScript and PGlite) has run so far */
const mainNs = (pid: number) => Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0])

/** seconds each scheduled loop has run so far (the server's /metrics; a loop's time includes its waits) */
async function loopSeconds(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const out: Record<string, number> = {}
  for (const m of text.matchAll(/^arbor_loop_run_duration_seconds_sum\{loop="([^"]+)"\} ([0-9.e+-]+)$/gm)) out[m[1]!] = Number(m[2])
  return out
}

/** the loops that ran, with their ms a write */
const loopsText = (loops: Record<string, number>) =>
  Object.entries(loops)
    .filter(([, ms]) => ms >= 0.005)
    .map(([loop, ms]) => `${loop} ${ms.toFixed(2)}`)
    .join(', ')

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length

async function startStub() {
  const proc = Bun.spawn([process.execPath, 'bench/lib/embed-stub.ts'], {
    cwd: ROOT,
    env: serverEnv({ PORT: '0' }),
    stdout: 'pipe',
    stderr: 'inherit',
  })
  let out = ''
  void (async () => {
    for await (const chunk of proc.stdout) out += new TextDecoder().decode(chunk)
  })()
  return { proc, url: await until(() => /listening (http:\/\/\S+)/.exec(out)?.[1], 'embed stub') }
}

const git = (...a: string[]) => {
  const r = Bun.spawnSync(['git', ...a], { cwd: ROOT, stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`git ${a.join(' ')}: ${r.stderr.toString()}`)
}
const refDir = join(mkdtempSync(join(tmpdir(), 'arbor-ref-')), 'ref')
const tmp = mkdtempSync(join(tmpdir(), 'arbor-request-cpu-'))
git('worktree', 'add', '--detach', refDir, REF)
symlinkSync(join(ROOT, 'node_modules'), join(refDir, 'node_modules'))
const stub = await startStub()
const targets: {
  name: string
  pid: number
  url: string
  stop: () => void
  next: (op: string) => () => Promise<unknown>
  figures: Record<string, { wall: number[]; inside: number[]; main: number[]; outside: number[]; loops: Record<string, number> }>
}[] = []
try {
  for (const [name, dir] of [['head', ROOT], [REF, refDir], ...others.map((d) => [basename(d), d])] as [string, string][]) {
    const db = await ownDatabase('pglite', tmp)
    const { server, call, url } = await startWritesServer(dir, { ...db.env, EMBEDDINGS_URL: stub.url, EMBEDDINGS_MODEL: 'stub' }, tmp)
    let k = 0
    const add = async (type: string, parentId?: string) =>
      (await call({ action: 'add', projectId: 'bench', node: { type, ...(parentId ? { parentId } : {}), data: { label: `x${++k}` } } }))
        .node.id as string
    await call({ action: 'addProject', project: { id: 'bench', name: 'bench' } })
    const approach = await add('approach', await add('need', await add('goal')))
    targets.push({
      name,
      pid: server.pid,
      url,
      stop: () => server.kill('SIGTERM'),
      next: (op) => (op === 'addJob' ? () => add('job', approach) : op === 'addTask' ? () => add('task') : () => add('goal')),
      figures: Object.fromEntries(OPS.map((op) => [op, { wall: [], inside: [], main: [], outside: [], loops: {} }])),
    })
  }
  for (const t of targets) await settle(t.pid, 60_000)
  for (let r = 0; r < ROUNDS; r++)
    for (const op of OPS)
      for (const t of targets.map((_, i) => targets[(i + r) % targets.length]!)) {
        const write = t.next(op)
        await write()
        await write()
        const f = t.figures[op]!
        const loopsBefore = await loopSeconds(t.url)
        const start = cpuNs(t.pid)
        let inside = 0
        for (let i = 0; i < BLOCK; i++) {
          const before = cpuNs(t.pid)
          const mainBefore = mainNs(t.pid)
          const sent = performance.now()
          await write()
          f.wall.push(performance.now() - sent)
          f.main.push((mainNs(t.pid) - mainBefore) / 1e6)
          const used = cpuNs(t.pid) - before
          f.inside.push(used / 1e6)
          inside += used
        }
        await settle(t.pid)
        f.outside.push((cpuNs(t.pid) - start - inside) / 1e6 / BLOCK)
        for (const [loop, s] of Object.entries(await loopSeconds(t.url)))
          f.loops[loop] = (f.loops[loop] ?? 0) + ((s - (loopsBefore[loop] ?? 0)) * 1000) / (BLOCK * ROUNDS)
      }
  console.log(
    `PGlite, ${ROUNDS} rounds of ${BLOCK} writes a target and op, one writer; CPU of the server's process (all threads), ms a write\n\n| write | target | wall p50 | CPU in the request p50 | mean | its main thread's p50 | CPU outside the requests, a write | CPU a write in all | loops' time a write (ms, /metrics) |\n|---|---|---|---|---|---|---|---|---|`,
  )
  for (const op of OPS)
    for (const t of targets) {
      const f = t.figures[op]!
      const all = mean(f.inside) + mean(f.outside)
      console.log(
        `| ${op} | ${t.name} | ${p50(f.wall).toFixed(3)} | ${p50(f.inside).toFixed(3)} | ${mean(f.inside).toFixed(3)} | ${p50(f.main).toFixed(3)} | ${mean(f.outside).toFixed(3)} | ${all.toFixed(3)} | ${loopsText(f.loops)} |`,
      )
    }
} finally {
  for (const t of targets) t.stop()
  stub.proc.kill()
  if (existsSync(refDir)) git('worktree', 'remove', '--force', refDir)
  rmSync(tmp, { recursive: true, force: true })
}
process.exit(0)
