import http from 'node:http'
import { bootstrapOwner } from './accounts/service'
import { createApp } from './app'
import { type Config, loadConfigOrExit } from './config'
import { createDeps } from './create-deps'
import { openDb } from './db'
import { removeAddress, writeAddress } from './db/address-file'
import { DataDirLockedError } from './db/data-dir-lock'
import type { Db } from './db/port'
import type { Deps } from './deps'
import { MAX_WAIT_SECONDS } from './events/service'
import { createLogger, type Logger } from './log'
import { startScheduler } from './scheduler'
import { POLL_WAIT_MS } from './view/model'

/** What Bun's parser reads of a request's line and headers; beyond it Bun still answers an empty 431. */
const PARSER_HEADER_BYTES = 256 * 1024

/** config → database → app → listen; start the loops; SIGTERM → drain, stop, close. */
async function main() {
  const config = loadConfigOrExit()
  const log = createLogger(config.logLevel)
  let db: Db
  try {
    db = await openDb(config)
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      console.error(`arbor: ${err.message}`)
      process.exit(3)
    }
    throw err
  }
  const deps: Deps = createDeps({ config, db, log })

  const { choice } = deps.search
  if (choice.fallback) log.warn('search: the built-in sentence model is missing or not the pinned file', { fallback: choice.fallback })
  log.info('search', { backend: deps.search.name, embedder: choice.embedder.id })

  // signal handlers before listening: a SIGTERM that arrives as soon as we listen must still stop us cleanly
  let server: ReturnType<typeof Bun.serve> | undefined
  let scheduler: ReturnType<typeof startScheduler> | undefined
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info('stopping', { signal })
    deps.waiters.close() // held long polls answer now rather than hold the drain for up to a minute
    await server?.stop(false) // stop accepting; let in-flight requests finish
    await scheduler?.stop()
    await deps.replicas?.stop()
    await db.close()
    if (!config.databaseUrl) removeAddress(config.dataDir)
    log.info('stopped')
    process.exit(0)
  }
  // postgres.js (3.4) schedules a socket write with setImmediate; when PostgreSQL restarts under
  // load, the socket can be gone by then and the write throws outside any promise. The query it
  // belonged to has already failed with CONNECTION_CLOSED (answered 503 with Retry-After) and the
  // driver reconnects: that one error must not end the process. Anything else still does.
  process.on('uncaughtException', (err) => {
    if (err instanceof TypeError && /socket\.write/.test(err.message) && /postgres[\\/]src[\\/]connection\.js/.test(err.stack ?? '')) {
      log.warn('database connection closed under a pending write; the driver reconnects', { error: err.message })
      return
    }
    log.error('uncaught exception', { error: err.stack ?? String(err) })
    log.flush()
    process.exit(1)
  })
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))

  const { handle } = createApp(deps)
  // Bun answers a request line and headers over its limit (16 KiB) itself, with an empty 431; read
  // up to PARSER_HEADER_BYTES so our handler answers JSON 414/431 past MAX_URL_BYTES/MAX_HEADER_BYTES
  Object.assign(http, { maxHeaderSize: PARSER_HEADER_BYTES })
  try {
    server = serve(config, log, handle)
  } catch (err) {
    // the port is taken (or not ours to bind): one line that says so, no stack, and nothing created
    const code = (err as { code?: string }).code
    const why =
      code === 'EADDRINUSE'
        ? `port ${config.port} on ${config.host} is in use by another program: stop it, or set PORT to a free port`
        : `cannot listen on ${config.host}:${config.port} (${code ?? (err as Error).message}): set HOST and PORT to an address this machine may serve`
    console.error(`arbor: ${why}`)
    await db.close()
    process.exit(1)
  }
  // the owner is created only once the server listens: a start that cannot listen creates nobody,
  // so the first start that does prints the key (docs/operations.md: printed once)
  // another shell's `arbor doctor` or `arbor restore` finds this server even when its PORT differs
  const reach = ['0.0.0.0', '::', ''].includes(config.host) ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host
  if (!config.databaseUrl) writeAddress(config.dataDir, `http://${reach}:${server.port}`)
  const firstKey = await bootstrapOwner(db)
  if (firstKey) console.log(`Arbor API key for owner: ${firstKey}`)

  // PostgreSQL: from now on writes wait to be heard here, and kept reads are answered from memory
  await deps.replicas?.start()
  scheduler = startScheduler(deps)
  // where a person goes next, beside the owner key; the key itself is printed once only (docs/operations.md)
  const base = `http://${config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host}:${server.port}`
  console.log(`Arbor app: ${base}/app${firstKey ? ' (sign in with the owner key above)' : ''}`)
  console.log(`Arbor API docs: ${base}/docs`)
  log.info('listening', {
    url: `http://${config.host}:${server.port}`,
    database: config.databaseUrl?.startsWith('postgres')
      ? 'postgres'
      : config.databaseUrl === 'memory://'
        ? 'pglite (memory)'
        : `pglite (${config.dataDir})`,
  })
}

/** Listen with the app's handler; throws (EADDRINUSE…) when the address cannot be served. */
function serve(config: Config, log: Logger, handle: ReturnType<typeof createApp>['handle']) {
  return Bun.serve({
    port: config.port,
    hostname: config.host,
    // our handler enforces MAX_BODY_BYTES with a JSON 413; Bun's own limit would answer with an empty body
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    // Bun closes a connection silent for 10 s by default, even while its response is pending:
    // the long polls (GET /view/commands up to POLL_WAIT_MS, GET /events?wait up to MAX_WAIT_SECONDS) must outlive their wait
    idleTimeout: Math.max(Math.ceil(POLL_WAIT_MS / 1000), MAX_WAIT_SECONDS) + 10,
    // the socket's address is asked for only when it is used (not behind a proxy: see client-ip.ts), and once
    fetch: (req, srv) => {
      let asked = false
      let ip: string | undefined
      return handle(req, () => {
        if (!asked) {
          asked = true
          ip = srv.requestIP(req)?.address
        }
        return ip
      })
    },
    // the handler answers every error itself; this is the last word if it ever throws anyway
    error: (err) => {
      log.error('unhandled error', { error: String(err?.stack ?? err).slice(0, 2000) })
      return new Response(JSON.stringify({ error: 'internal_error', message: 'Something went wrong on our side' }), {
        status: 500,
        headers: { 'content-type': 'application/json' },
      })
    },
  })
}

await main()
