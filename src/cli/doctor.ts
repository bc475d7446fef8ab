import { accessSync, constants, existsSync, readFileSync, statfsSync } from 'node:fs'
import { createServer } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { appliedMigrations } from '../backup/service'
import { type Config, ConfigError, loadConfig } from '../config'
import { openDbAsIs } from '../db'
import { readAddress } from '../db/address-file'
import { migrationNames } from '../db/migrate'
import { checkMiniLm } from '../search/embedder/minilm'
import { chooseEmbedder } from '../search/embedder/runtime'
import { backfillProgress } from '../search/service'
import { parse } from './args'
import { isUp, serverUrl } from './server-api'

/**
 * `arbor doctor`: one line per check (ok / warn / FAIL), each FAIL with what to do. Exit 1 when
 * anything failed. It reads and probes; it never creates the data directory or a database.
 */
type Verdict = 'ok' | 'warn' | 'FAIL'
interface Check {
  verdict: Verdict
  what: string
  said: string
  fix?: string
}

const LOW_DISK = 1024 ** 3
const NO_DISK = 100 * 1024 ** 2

export async function doctorCommand(_config: Config, argv: string[]): Promise<number> {
  parse(argv, {}, { min: 0, max: 0 })
  return doctor(process.env)
}

export async function doctor(env: Record<string, string | undefined>): Promise<number> {
  const checks: Check[] = []
  const add = (verdict: Verdict, what: string, said: string, fix?: string) => {
    checks.push({ verdict, what, said, fix })
    console.log(`${verdict.padEnd(4)}  ${what.padEnd(10)} ${said}${fix ? `\n${' '.repeat(17)}→ ${fix}` : ''}`)
  }
  let config: Config
  try {
    config = loadConfig(env)
    add('ok', 'settings', 'every variable is valid')
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    add('FAIL', 'settings', err.message, 'correct that variable in the environment')
    return 1
  }
  const url = serverUrl(config)
  const running = await isUp(url)
  const lockPid = config.databaseUrl ? null : liveLock(config.dataDir)
  // the server of this data directory, when it listens elsewhere than this shell's PORT says
  const address = lockPid && !running ? readAddress(config.dataDir) : null
  const elsewhere = address?.pid === lockPid && address.url !== url && (await isUp(address.url)) ? address.url : null

  dataDir(config, lockPid, add)
  disk(config, add)
  await database(config, lockPid, add)
  model(config, add)
  await reembedding(config, running, lockPid, url, add)
  await port(config, running, add)
  if (running) {
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    )
    add(
      ready ? 'ok' : 'FAIL',
      'server',
      `Arbor answers at ${url}${ready ? ' and its database is ready' : ' but /readyz says its database is unreachable'}`,
      ready ? undefined : 'see the server log; check DATABASE_URL and that PostgreSQL runs',
    )
  } else if (elsewhere)
    add(
      'FAIL',
      'server',
      `the Arbor of this data directory (pid ${lockPid}) answers at ${elsewhere}, not at ${url} (PORT=${config.port}): arbor user, key and backup would not reach it`,
      `set PORT=${new URL(elsewhere).port} in this shell, as the server has it (or pass --url ${elsewhere})`,
    )
  else if (lockPid)
    add(
      'FAIL',
      'server',
      `an Arbor (pid ${lockPid}) holds the data directory but does not answer at ${url} (PORT=${config.port})${address ? ` nor at ${address.url}` : ''}`,
      'set PORT and HOST to where it listens (see its log), or wait for it to finish starting',
    )
  else add('ok', 'server', `no Arbor answers at ${url} (PORT=${config.port}); no running server to check`)
  if (!config.adminToken)
    add(
      'warn',
      'admin',
      'ADMIN_TOKEN is not set: no admin API, so arbor user/key and a backup while running are off',
      'set ADMIN_TOKEN (openssl rand -hex 24) for the server and these commands',
    )
  else add('ok', 'admin', 'ADMIN_TOKEN is set')
  const failed = checks.filter((c) => c.verdict === 'FAIL').length
  // "All good." only when the running server was checked too
  const verdict = failed
    ? `${failed} problem${failed > 1 ? 's' : ''} to fix.`
    : running
      ? 'All good.'
      : `No problem found; no running Arbor was checked (none answers at ${url}).`
  console.log(`\n${verdict}`)
  return failed ? 1 : 0
}

type Add = (verdict: Verdict, what: string, said: string, fix?: string) => void

/** The pid in DATA_DIR/arbor.lock when that process is alive (a running server), else null. */
function liveLock(dataDir: string): number | null {
  const lock = join(dataDir, 'arbor.lock')
  if (!existsSync(lock)) return null
  const pid = Number(readFileSync(lock, 'utf8').trim())
  try {
    process.kill(pid, 0)
    return pid
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : null
  }
}

/** The directory itself, or the nearest parent that exists (where it would be created). */
function existing(path: string): string {
  let at = resolve(path)
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at)
  return at
}

function dataDir(config: Config, lockPid: number | null, add: Add) {
  const dir = resolve(config.dataDir)
  const at = existing(dir)
  try {
    accessSync(at, constants.W_OK)
  } catch {
    return add('FAIL', 'data dir', `${at} is not writable by this user`, `chown it to the user that runs Arbor, or set DATA_DIR elsewhere`)
  }
  if (at !== dir) return add('ok', 'data dir', `${dir} does not exist yet; the first start creates it`)
  if (lockPid) return add('ok', 'data dir', `${dir} is in use by a running Arbor (pid ${lockPid})`)
  add('ok', 'data dir', `${dir} is writable and not in use`)
}

function disk(config: Config, add: Add) {
  const at = existing(config.dataDir)
  const s = statfsSync(at)
  const free = s.bavail * s.bsize
  const gb = (free / 1024 ** 3).toFixed(1)
  if (free < NO_DISK)
    add('FAIL', 'disk', `${gb} GB free under ${at}`, 'free space: the database stops accepting writes when the disk is full')
  else if (free < LOW_DISK) add('warn', 'disk', `${gb} GB free under ${at}`, 'free some space soon')
  else add('ok', 'disk', `${gb} GB free under ${at}`)
}

async function database(config: Config, lockPid: number | null, add: Add) {
  const kind = config.databaseUrl ? 'PostgreSQL database' : 'embedded database'
  if (!config.databaseUrl) {
    if (lockPid) return add('ok', 'database', `the embedded database is held by the running server (pid ${lockPid}); see the server line`)
    if (!existsSync(join(config.dataDir, 'pgdata', 'PG_VERSION')))
      return add('ok', 'database', `no embedded database in ${resolve(config.dataDir)} yet; the first start creates it`)
  }
  let applied: string[]
  try {
    const db = await openDbAsIs(config)
    try {
      applied = await appliedMigrations(db)
    } finally {
      await db.close()
    }
  } catch (err) {
    return add(
      'FAIL',
      'database',
      `cannot open the ${kind}: ${(err as Error).message}`,
      config.databaseUrl
        ? 'check DATABASE_URL (host, port, user, password, database name) and that PostgreSQL runs'
        : 'see the message; restore from a backup if the files are damaged (docs/backup.md)',
    )
  }
  const names = new Set(migrationNames)
  const unknown = applied.filter((n) => !names.has(n))
  if (unknown.length)
    return add(
      'FAIL',
      'database',
      `the schema has migration ${unknown[0]}, which this Arbor does not know`,
      'a newer Arbor used this database: run that version (or newer)',
    )
  const pending = migrationNames.length - applied.length
  add(
    'ok',
    'database',
    `${kind} answers; schema at ${applied.at(-1) ?? 'nothing yet'}${pending ? ` (${pending} migration${pending > 1 ? 's' : ''} to apply at the next start)` : ' (up to date)'}`,
  )
}

function model(config: Config, add: Add) {
  if (config.embeddingsUrl) return add('ok', 'model', `embeddings come from ${config.embeddingsUrl} (${config.embeddingsModel})`)
  const dir = config.embeddingsModelDir
  // the server's own check (minilm.ts): every file against its pinned SHA-256
  const check = checkMiniLm(dir)
  if ('missing' in check)
    return add(
      'warn',
      'model',
      `the sentence model is not in ${dir} (missing ${check.missing.join(', ')}): search uses the smaller fallback model`,
      'npm run model:fetch (or set EMBEDDINGS_MODEL_DIR to where it is)',
    )
  if ('mismatch' in check)
    return add(
      'FAIL',
      'model',
      `${check.mismatch} is not the pinned file (its SHA-256 differs): search uses the smaller fallback model`,
      `delete ${dir} and run npm run model:fetch`,
    )
  add('ok', 'model', `${check.model.id} in ${dir}, hash checked`)
}

type Progress = { embedder: string; projects: number; waiting: number; waitingNodes: number }

/**
 * How far the built-in index's background (re-)embedding is for the embedder in use (after a
 * first start or a change of model every project's nodes are embedded again; search answers
 * meanwhile, by keyword for the nodes still waiting). A running server says it on GET /metrics
 * (its own embedder, and the embedded database is its alone); otherwise the database is asked.
 */
async function reembedding(config: Config, running: boolean, lockPid: number | null, url: string, add: Add) {
  if (config.meiliUrl) return // Meilisearch keeps its own index: its rebuild is said in _meta.search
  let p: Progress | null = null
  try {
    if (running) p = await progressFromMetrics(url, config.metricsToken)
    else if (config.databaseUrl || (!lockPid && existsSync(join(config.dataDir, 'pgdata', 'PG_VERSION')))) {
      const embedder = chooseEmbedder(config).embedder.id
      const db = await openDbAsIs(config)
      try {
        // a database the first start has not migrated yet has nothing to embed
        if (!(await appliedMigrations(db)).some((name) => name.startsWith('0005-'))) return
        p = { embedder, ...(await backfillProgress(db, embedder)) }
      } finally {
        await db.close()
      }
    }
  } catch (err) {
    return add('warn', 'search', `cannot tell how far the background embedding is: ${(err as Error).message}`)
  }
  if (!p) return
  if (p.projects === 0) return add('ok', 'search', `no project to embed yet (embedder ${p.embedder})`)
  if (p.waiting === 0) return add('ok', 'search', `every project's nodes have vectors from ${p.embedder}`)
  const said = `${p.projects - p.waiting} of ${p.projects} project(s) have vectors from ${p.embedder}; ${p.waiting} (${p.waitingNodes} nodes) wait for the background embedding and match by keyword until then`
  if (running) add('ok', 'search', `${said} (under way; GET /metrics: arbor_search_reembed_*)`)
  else add('warn', 'search', said, 'start the server: it embeds them in the background while search answers')
}

/** The re-embedding gauges of a running server's GET /metrics, or null when it has none (Meilisearch, no access). */
async function progressFromMetrics(url: string, token: string | undefined): Promise<Progress | null> {
  const res = await fetch(`${url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} })
  if (!res.ok) return null
  const text = await res.text()
  const projects = [
    ...text.matchAll(/^arbor_search_reembed_projects\{(?=[^}]*state="(done|waiting)")(?=[^}]*embedder="([^"]*)")[^}]*\} (\S+)$/gm),
  ]
  if (projects.length === 0) return null
  const count = (state: string) => Number(projects.find((m) => m[1] === state)?.[3] ?? 0)
  const nodes = /^arbor_search_reembed_nodes_waiting (\S+)$/m.exec(text)
  const waiting = count('waiting')
  return { embedder: projects[0]![2]!, projects: count('done') + waiting, waiting, waitingNodes: Number(nodes?.[1] ?? 0) }
}

async function port(config: Config, running: boolean, add: Add) {
  if (running) return add('ok', 'port', `${config.host}:${config.port} is served by Arbor`)
  if (config.port === 0) return add('ok', 'port', 'PORT=0: a free port is picked at start')
  const free = await new Promise<boolean>((ok) => {
    const s = createServer()
    s.once('error', () => ok(false))
    s.listen(config.port, config.host, () => s.close(() => ok(true)))
  })
  if (free) add('ok', 'port', `${config.host}:${config.port} is free`)
  else add('FAIL', 'port', `${config.host}:${config.port} is taken by another program`, 'stop that program, or set PORT to a free port')
}
