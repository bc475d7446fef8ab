import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import postgres from 'postgres'

const ROOT = join(import.meta.dir, '..', '..')

/** A process that prints JSON lines; `last` is the latest one, `first` the first line holding each key. */
export function spawnJsonLines(cmd: string[], env: Record<string, string>) {
  const proc = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'inherit' })
  const state = { last: {} as any, first: new Map<string, any>() }
  void (async () => {
    let rest = ''
    for await (const chunk of proc.stdout) {
      rest += new TextDecoder().decode(chunk)
      const lines = rest.split('\n')
      rest = lines.pop()!
      for (const line of lines) {
        try {
          const o = JSON.parse(line)
          state.last = o
          for (const k of Object.keys(o)) if (!state.first.has(k)) state.first.set(k, o)
        } catch {} // a line that is not JSON is not ours to read
      }
    }
  })()
  return { proc, state }
}

export async function until<T>(fn: () => T | undefined | Promise<T | undefined>, what: string, ms = 60_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`${what}: not within ${ms / 1000} s`)
    await Bun.sleep(20)
  }
}

/** CPU seconds (user + system) the process has used so far. */
const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** Wait until the process uses under 5% of a core over a second (setup's background work done: search indexing). */
export async function quiet(pid: number, what: string, minutes = 15) {
  const started = Date.now()
  for (;;) {
    const before = cpuSeconds(pid)
    await Bun.sleep(1000)
    if (cpuSeconds(pid) - before < 0.05) return (Date.now() - started) / 1000
    if (Date.now() - started > minutes * 60_000) throw new Error(`${what}: still busy after ${minutes} minutes`)
  }
}

/** A database of our own: a fresh DATA_DIR, or a database created on `pgUrl`'s server (dropped by `drop`). */
export async function ownDatabase(kind: 'pglite' | 'postgres', tmp: string, pgUrl?: string) {
  const dataDir = mkdtempSync(join(tmp, 'data-'))
  if (kind === 'pglite') return { env: { DATA_DIR: dataDir }, drop: async () => rmSync(dataDir, { recursive: true, force: true }) }
  const name = `arbor_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const admin = postgres(pgUrl!, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  const url = new URL(pgUrl!)
  url.pathname = `/${name}`
  return {
    env: { DATABASE_URL: url.toString(), DATA_DIR: dataDir },
    drop: async () => {
      await admin.unsafe(`drop database if exists ${name} with (force)`)
      await admin.end()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * The environment a benchmark starts `bun src/main.ts` with: of ours only PATH and HOME, any free
 * port on 127.0.0.1, no rate limit (wrk would get 429s), and `env` (the database's, the model's).
 */
export const serverEnv = (env: Record<string, string | undefined>): Record<string, string | undefined> => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '/tmp',
  HOST: '127.0.0.1',
  PORT: '0',
  RATE_LIMIT_PER_MINUTE: '0',
  ...env,
})

/** The URL a server started with serverEnv logs once listening (its stdout going to `logFile`), and the owner key it prints on an empty database. */
export async function listening(logFile: string): Promise<{ base: string; key: string }> {
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(0, 200_000) : '')
  const base = await until(() => /"msg":"listening".*?"url":"(http:\/\/[^"]+)"/.exec(log())?.[1], 'server listening')
  const key = /Arbor API key for owner: (arb_[0-9A-Za-z]+)/.exec(log())?.[1]
  if (!key) throw new Error(`no owner key in ${logFile}: the server needs an empty database`)
  return { base, key }
}
