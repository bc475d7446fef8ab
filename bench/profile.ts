/**
 * npm run bench:profile — where one read spends the server's JavaScript time under load:
 *
 *   npm run bench:profile -- tree            (or healthz, projects; PGlite)
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:profile -- tree postgres
 *
 * Starts the real server (`bun --cpu-prof src/main.ts`, default settings, request logs on to a
 * file, rate limit off) on a database of its own, makes the 25-node goal of `npm run bench`,
 * warms the read up, drives it with wrk (its own process, -t2 -c32, PROFILE_SECONDS, 10 by
 * default), stops the server with SIGINT and reads the profile Bun wrote on exit. Only the
 * samples taken while wrk ran are counted: start-up, migrations and set-up are left out.
 *
 * Prints the functions with the most samples of their own (self) and in their stack (total),
 * each as a share of the load window's samples. Bun's sampler sees the JavaScript thread only
 * while it runs JavaScript or a native function called from it (a Response built, a write, a
 * collection); the time uWebSockets and the kernel spend on the socket is not in it, so the
 * shares say what our code and the calls it makes cost, not the whole request.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { listening, ownDatabase, quiet, serverEnv } from './lib/harness'
import { benchGoal } from './lib/synthetic-tree'
import { type WrkResult, wrk } from './lib/wrk'

const ROOT = join(import.meta.dir, '..')
const READS = ['healthz', 'projects', 'tree'] as const
type Read = (typeof READS)[number]
const read = (process.argv[2] ?? 'tree') as Read
const kind = (process.argv[3] ?? 'pglite') as 'pglite' | 'postgres'
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 10)
const TOP = 25

/** The part of a .cpuprofile (Chrome's format, as Bun writes it) read here. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[]
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

/**
 * Samples per function (self, and anywhere in the stack) among those taken in the last
 * `fromEndUs`…`untilEndUs` microseconds before the profile ends.
 */
export function sampleShares(profile: CpuProfile, fromEndUs: number, untilEndUs: number) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const name = (id: number) => {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame
    const where = url ? `${url.replace(`file://${ROOT}/`, '')}:${lineNumber + 1}` : 'native'
    return `\`${functionName || '(anonymous)'}\` ${where}`
  }
  const times: number[] = []
  let t = profile.startTime
  for (const d of profile.timeDeltas) times.push((t += d))
  const end = times.at(-1) ?? t
  const self = new Map<string, number>()
  const total = new Map<string, number>()
  let samples = 0
  profile.samples.forEach((id, i) => {
    const at = times[i]!
    if (at < end - fromEndUs || at > end - untilEndUs) return
    samples++
    self.set(name(id), (self.get(name(id)) ?? 0) + 1)
    const seen = new Set<string>()
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const k = name(n)
      if (!seen.has(k)) total.set(k, (total.get(k) ?? 0) + 1)
      seen.add(k)
    }
  })
  return { samples, self, total }
}

async function main() {
  if (!READS.includes(read) || (kind !== 'pglite' && kind !== 'postgres')) {
    console.error(`usage: npm run bench:profile -- [${READS.join('|')}] [pglite|postgres]`)
    process.exit(2)
  }
  if (kind === 'postgres' && !process.env.BENCH_DATABASE_URL) {
    console.error('postgres needs BENCH_DATABASE_URL (a server on which we may CREATE DATABASE)')
    process.exit(2)
  }
  if (Bun.which('wrk') === null) {
    console.error('npm run bench:profile needs wrk (apt-get install -y wrk)')
    process.exit(2)
  }
  const tmp = mkdtempSync(join(tmpdir(), 'arbor-profile-'))
  const db = await ownDatabase(kind, tmp, process.env.BENCH_DATABASE_URL)
  const logFile = join(tmp, 'server.log')
  const server = Bun.spawn([process.execPath, '--cpu-prof', `--cpu-prof-dir=${tmp}`, 'src/main.ts'], {
    cwd: ROOT,
    env: serverEnv({ ADMIN_TOKEN: `profile-${crypto.randomUUID()}`, ...db.env }),
    stdout: Bun.file(logFile),
    stderr: 'inherit',
  })
  try {
    const { base, key } = await listening(logFile)
    const call = async (body: unknown) => {
      const res = await fetch(`${base}/api/v1/mutate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      const json: any = await res.json()
      if (res.status >= 300) throw new Error(`mutate: ${res.status} ${JSON.stringify(json).slice(0, 300)}`)
      return json
    }
    await call({ action: 'addProject', project: { name: 'tree', id: 'tree' } })
    const goal = (await call({ action: 'batch', projectId: 'tree', mutations: benchGoal().map((node) => ({ action: 'add', node })) }))
      .idMap['draft-g']
    const path = { healthz: '/healthz', projects: '/api/v1/projects', tree: `/api/v1/tree?projectId=tree&nodeId=${goal}&direction=down` }[
      read
    ]
    const opts = { threads: 2, connections: 32, ...(read === 'healthz' ? {} : { key }) }
    await quiet(server.pid, 'after setup')
    await wrk(base + path, opts, 2, tmp) // warm-up: the kept answer made, the code compiled
    const started = performance.now()
    const result: WrkResult = await wrk(base + path, opts, SECONDS, tmp)
    const ended = performance.now()
    server.kill('SIGINT')
    await server.exited
    const exited = performance.now()
    const file = readdirSync(tmp).find((f) => f.endsWith('.cpuprofile'))
    if (!file) throw new Error('the server wrote no .cpuprofile')
    const profile: CpuProfile = JSON.parse(readFileSync(join(tmp, file), 'utf8'))
    // the window, from the profile's end (the exit): wrk's start and end, by this process's clock
    const { samples, self, total } = sampleShares(profile, (exited - started) * 1000, (exited - ended) * 1000)
    const rows = (m: Map<string, number>) =>
      [...m]
        .sort((a, b) => b[1] - a[1])
        .slice(0, TOP)
        .map(([f, n]) => `| ${((100 * n) / samples).toFixed(1)}% | ${f} |`)
        .join('\n')
    const head = `GET ${path.replace(/nodeId=[^&]+/, 'nodeId=<goal>')} on ${kind === 'pglite' ? 'PGlite' : 'PostgreSQL'}`
    console.log(
      `## ${head}: ${(result.rps / 1000).toFixed(1)}k req/s (p99 ${result.p99.toFixed(1)} ms), ${samples} samples in ${SECONDS} s of load\n`,
    )
    console.log(`| self | function |\n|---|---|\n${rows(self)}\n`)
    console.log(`| total | function |\n|---|---|\n${rows(total)}`)
  } finally {
    if (server.exitCode === null) {
      server.kill('SIGKILL')
      await server.exited
    }
    await db.drop()
    rmSync(tmp, { recursive: true, force: true })
  }
}

if (import.meta.main) await main()
