/**
 * The whole scaled-out set on one machine, as an operator runs it (docs/scaling-out.md):
 * one PostgreSQL, one Meilisearch, three Arbor replicas and HAProxy in front of them.
 *
 *   bun examples/scale-out/stack.ts up      # start everything; prints the URL and the owner key
 *   bun examples/scale-out/stack.ts down    # stop everything (replicas drain, HAProxy soft-stops)
 *   bun examples/scale-out/stack.ts status
 *
 * Everything lives under STACK_DIR (default ./scale-out-data): the database cluster, the search
 * index, each replica's DATA_DIR, the logs and `stack.json` (ports and process ids). Programs:
 * PG_BIN (default /usr/lib/postgresql/15/bin), HAPROXY (default haproxy), MEILISEARCH (default
 * ../shared/tools/meilisearch; without it the replicas use their built-in search). As root,
 * PostgreSQL runs as the `postgres` user (it refuses root).
 *
 * examples/agents-swarm.ts --scale-out starts the same set through `startStack` and kills and
 * restarts its parts mid-run.
 */

import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { type Subprocess, spawn, spawnSync } from 'bun'

const ROOT = resolve(import.meta.dir, '..', '..')
const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin'
const HAPROXY = process.env.HAPROXY ?? 'haproxy'
const MEILISEARCH = process.env.MEILISEARCH ?? resolve(ROOT, '..', 'shared', 'tools', 'meilisearch')

export interface StackOptions {
  dir: string
  /** the first of 6 consecutive free ports: HAProxy, PostgreSQL, Meilisearch, the three replicas */
  basePort: number
  replicas?: number
  /** environment added to every replica's (e.g. a rate limit) */
  replicaEnv?: Record<string, string>
  meili?: boolean
}

const asRoot = process.getuid?.() === 0
/** argv run as the postgres user when we are root (PostgreSQL refuses to run as root) */
const asPostgres = (argv: string[]) => (asRoot ? ['runuser', '-u', 'postgres', '--', ...argv] : argv)

async function waitFor(what: string, ok: () => Promise<boolean> | boolean, ms = 60_000) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (
      await Promise.resolve()
        .then(ok)
        .catch(() => false)
    )
      return
    await Bun.sleep(100)
  }
  throw new Error(`${what}: not ready within ${ms / 1000} s`)
}
const answers = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(1000) })).ok

export async function startStack(opts: StackOptions) {
  const n = opts.replicas ?? 3
  const ports = {
    lb: opts.basePort,
    pg: opts.basePort + 1,
    meili: opts.basePort + 2,
    replicas: [0, 1, 2].map((i) => opts.basePort + 3 + i),
  }
  mkdirSync(join(opts.dir, 'logs'), { recursive: true })
  chmodSync(opts.dir, 0o755) // the postgres user reaches its cluster inside it
  const logFile = (name: string) => openSync(join(opts.dir, 'logs', `${name}.log`), 'a')
  const pgData = join(opts.dir, 'pg')
  const pgSocket = join(opts.dir, 'pg-socket')
  const databaseUrl = `postgres://postgres@127.0.0.1:${ports.pg}/arbor`

  // ---- PostgreSQL: a cluster of its own ----
  if (!existsSync(join(pgData, 'PG_VERSION'))) {
    mkdirSync(pgData, { recursive: true })
    mkdirSync(pgSocket, { recursive: true })
    chmodSync(pgData, 0o700)
    if (asRoot) spawnSync(['chown', '-R', 'postgres:postgres', pgData, pgSocket])
    const init = spawnSync(asPostgres([`${PG_BIN}/initdb`, '-D', pgData, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']), {
      cwd: '/', // the postgres user may not be allowed into the current directory
      stdout: 'ignore',
      stderr: 'pipe',
    })
    if (init.exitCode !== 0) throw new Error(`initdb: ${init.stderr.toString()}`)
  }
  const pgCtl = (...args: string[]) => {
    const r = spawnSync(
      asPostgres([
        `${PG_BIN}/pg_ctl`,
        '-D',
        pgData,
        '-l',
        join(pgData, 'server.log'),
        '-o',
        `-p ${ports.pg} -k ${pgSocket} -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=on`,
        '-w',
        '-t',
        '60',
        ...args,
      ]),
      { cwd: '/', stdout: 'pipe', stderr: 'pipe' },
    )
    if (r.exitCode !== 0) throw new Error(`pg_ctl ${args.join(' ')}: ${r.stderr.toString()}${r.stdout.toString()}`)
  }
  pgCtl('start')
  const psql = (sql: string) =>
    spawnSync([`${PG_BIN}/psql`, '-h', '127.0.0.1', '-p', String(ports.pg), '-U', 'postgres', '-d', 'postgres', '-Atc', sql], {
      stdout: 'pipe',
      stderr: 'pipe',
    })
  if (psql(`select 1 from pg_database where datname = 'arbor'`).stdout.toString().trim() !== '1') {
    const r = psql('create database arbor')
    if (r.exitCode !== 0) throw new Error(`create database: ${r.stderr.toString()}`)
  }

  // ---- Meilisearch ----
  const meiliKey = 'scale-out-master-key-0123456789'
  let meili: Subprocess | undefined
  const useMeili = (opts.meili ?? true) && existsSync(MEILISEARCH)
  if (useMeili) {
    meili = spawn(
      [
        MEILISEARCH,
        '--db-path',
        join(opts.dir, 'meili'),
        '--http-addr',
        `127.0.0.1:${ports.meili}`,
        '--master-key',
        meiliKey,
        '--no-analytics',
        '--env',
        'development',
      ],
      { stdout: logFile('meilisearch'), stderr: logFile('meilisearch') },
    )
    await waitFor('Meilisearch', () => answers(`http://127.0.0.1:${ports.meili}/health`))
  }

  // ---- the replicas ----
  const procs: (Subprocess | undefined)[] = []
  // one REPLAY_SECRET for every replica (docs/operations.md): a claim retried with its
  // Idempotency-Key on another replica, after the first answer was lost, is replayed, not refused
  const replaySecret = randomBytes(24).toString('hex')
  const replicaEnv = (i: number): Record<string, string> => ({
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    HOST: '127.0.0.1',
    PORT: String(ports.replicas[i]),
    DATABASE_URL: databaseUrl,
    DATA_DIR: join(opts.dir, `replica-${i + 1}`),
    TRUST_PROXY: 'true',
    PUBLIC_BASE_URL: `http://127.0.0.1:${ports.lb}`,
    REPLAY_SECRET: replaySecret,
    ...(useMeili ? { MEILI_URL: `http://127.0.0.1:${ports.meili}`, MEILI_API_KEY: meiliKey } : {}),
    ...opts.replicaEnv,
  })
  const startReplica = async (i: number) => {
    mkdirSync(join(opts.dir, `replica-${i + 1}`), { recursive: true })
    procs[i] = spawn([process.execPath, 'src/main.ts'], {
      cwd: ROOT,
      env: replicaEnv(i),
      stdout: logFile(`replica-${i + 1}`),
      stderr: logFile(`replica-${i + 1}`),
    })
    await waitFor(`replica ${i + 1}`, () => answers(`http://127.0.0.1:${ports.replicas[i]}/healthz`))
  }
  // the first start prints the owner key: one replica first, then the others
  await startReplica(0)
  for (let i = 1; i < n; i++) await startReplica(i)
  const log1 = readFileSync(join(opts.dir, 'logs', 'replica-1.log'), 'utf8')
  const keyFile = join(opts.dir, 'owner-key')
  const printed = /Arbor API key for owner: (arb_[0-9A-Za-z]+)/.exec(log1)?.[1]
  if (printed) writeFileSync(keyFile, printed)
  const ownerKey = existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : undefined

  // ---- HAProxy, in the foreground as our child (-db) ----
  const lbEnv = {
    ...process.env,
    ARBOR_LB_PORT: String(ports.lb),
    ...Object.fromEntries([0, 1, 2].map((i) => [`ARBOR_REPLICA_${i + 1}`, `127.0.0.1:${ports.replicas[i]}`])),
  }
  const haproxy = spawn([HAPROXY, '-db', '-f', join(import.meta.dir, 'haproxy.cfg')], {
    env: lbEnv,
    stdout: logFile('haproxy'),
    stderr: logFile('haproxy'),
  })
  await waitFor('HAProxy', () => answers(`http://127.0.0.1:${ports.lb}/healthz`))

  const state = {
    url: `http://127.0.0.1:${ports.lb}`,
    databaseUrl,
    ports,
    pids: { haproxy: haproxy.pid, meilisearch: meili?.pid, replicas: procs.map((p) => p?.pid) },
  }
  writeFileSync(join(opts.dir, 'stack.json'), JSON.stringify(state, null, 2))

  return {
    url: state.url,
    apiUrl: `${state.url}/api/v1`,
    ownerKey,
    databaseUrl,
    ports,
    replicaPid: (i: number) => procs[i]?.pid,
    /** kill -9 a replica: no drain, its connections drop */
    async killReplica(i: number) {
      procs[i]?.kill('SIGKILL')
      await procs[i]?.exited
    },
    startReplica,
    /** a fast restart of PostgreSQL: every connection of every replica is cut */
    async restartPostgres() {
      pgCtl('-m', 'fast', 'restart')
    },
    /** everything, in the order an operator stops it: HAProxy soft-stops, replicas drain, then the stores */
    async stop() {
      haproxy.kill('SIGUSR1')
      await Promise.race([haproxy.exited, Bun.sleep(5000)])
      if (haproxy.exitCode === null) haproxy.kill('SIGKILL')
      for (const p of procs) p?.kill('SIGTERM')
      await Promise.all(procs.map((p) => p?.exited))
      meili?.kill('SIGTERM')
      await meili?.exited
      pgCtl('-m', 'fast', 'stop')
    },
  }
}

// ---- the command line: up, down, status ----
if (import.meta.main) {
  const dir = resolve(process.env.STACK_DIR ?? 'scale-out-data')
  const command = process.argv[2]
  if (command === 'up') {
    const stack = await startStack({ dir, basePort: Number(process.env.STACK_PORT ?? 8080) })
    console.log(`Arbor behind HAProxy: ${stack.url}  (replicas on ${stack.ports.replicas.join(', ')}, PostgreSQL ${stack.ports.pg})`)
    if (stack.ownerKey) console.log(`owner key: ${stack.ownerKey}  (also in ${join(dir, 'owner-key')})`)
    console.log('Ctrl-C or `bun examples/scale-out/stack.ts down` (from another shell) stops everything.')
    let stopping = false
    const down = async () => {
      if (stopping) return
      stopping = true
      await stack.stop()
      process.exit(0)
    }
    process.on('SIGINT', () => void down())
    process.on('SIGTERM', () => void down())
    // `down` from another shell: it writes stop-requested
    for (;;) {
      if (existsSync(join(dir, 'stop-requested'))) {
        rmSync(join(dir, 'stop-requested'))
        await down()
      }
      await Bun.sleep(500)
    }
  } else if (command === 'down') {
    writeFileSync(join(dir, 'stop-requested'), '')
    const state = JSON.parse(readFileSync(join(dir, 'stack.json'), 'utf8'))
    await waitFor('the stack to stop', () => !existsSync(join(dir, 'stop-requested')), 30_000)
    await waitFor('HAProxy to stop', async () => !(await answers(`${state.url}/healthz`).catch(() => false)), 30_000)
    console.log('stopped')
  } else if (command === 'status') {
    const state = JSON.parse(readFileSync(join(dir, 'stack.json'), 'utf8'))
    for (const [name, url] of [
      ['haproxy', `${state.url}/healthz`],
      ...state.ports.replicas.map((p: number, i: number) => [`replica ${i + 1}`, `http://127.0.0.1:${p}/healthz`]),
      ['readyz (database through HAProxy)', `${state.url}/readyz`],
    ])
      console.log(`${name}: ${(await answers(url).catch(() => false)) ? 'up' : 'down'}`)
  } else {
    console.error('usage: bun examples/scale-out/stack.ts up|down|status')
    process.exit(2)
  }
}
