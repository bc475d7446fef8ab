import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bootstrapOwner } from '../../src/accounts/service'
import { createApp } from '../../src/app'
import { loadConfig } from '../../src/config'
import { createDeps } from '../../src/create-deps'
import { openDb } from '../../src/db'
import { openPostgres } from '../../src/db/postgres'
import type { Deps } from '../../src/deps'
import { createLogger } from '../../src/log'

export interface BenchServer {
  url: string
  ownerKey: string
  deps: Deps
  /** createApp's request handler, for a caller in this process that wants no socket */
  handle: (req: Request, socketIp?: string) => Response | Promise<Response>
  close: () => Promise<void>
}

/**
 * The app on a real port, in this process, the way src/main.ts serves it (Bun.serve around
 * createApp's handle), on a fresh database: PGlite under a temporary DATA_DIR, or a new
 * database created on the PostgreSQL server of `postgresUrl` and dropped at close.
 * Rate limiting and request logs are off: both would measure something else. `env` adds to (or
 * overrides) the configuration's variables.
 */
export async function startBenchServer(postgresUrl?: string, env: Record<string, string> = {}): Promise<BenchServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-bench-'))
  let databaseUrl: string | undefined
  let dropDatabase = async () => {}
  if (postgresUrl) {
    const name = `arbor_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
    const admin = await openPostgres(postgresUrl)
    await admin.exec(`create database ${name}`)
    const url = new URL(postgresUrl)
    url.pathname = `/${name}`
    databaseUrl = url.toString()
    dropDatabase = async () => {
      await admin.exec(`drop database if exists ${name} with (force)`)
      await admin.close()
    }
  }
  const config = loadConfig({
    DATA_DIR: dataDir,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    HOST: '127.0.0.1',
    PORT: '0',
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'silent',
    ...env,
  })
  const db = await openDb(config)
  const deps: Deps = createDeps({ config, db, log: createLogger(config.logLevel) })
  const ownerKey = (await bootstrapOwner(db))!
  const { handle } = createApp(deps)
  const server = Bun.serve({
    port: 0,
    hostname: config.host,
    maxRequestBodySize: config.maxBodyBytes,
    fetch: (req, srv) => handle(req, srv.requestIP(req)?.address),
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    ownerKey,
    deps,
    handle,
    async close() {
      await server.stop(true)
      await db.close()
      await dropDatabase()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
