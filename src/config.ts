import { existsSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The environment, parsed once and validated. Nothing else in the server reads `process.env`
 * (the MCP stdio client, a separate program, reads its own: src/mcp/config.ts).
 * A bad value throws a ConfigError whose message is one line naming the variable
 * and what it expected; `main.ts` prints it and exits.
 */
export interface Config {
  port: number
  host: string
  dataDir: string
  /** derived files that can be rebuilt (the offline word-vector cache); default DATA_DIR/cache */
  cacheDir: string
  /** undefined → embedded PGlite under dataDir; 'memory://' → throw-away PGlite; else postgres:// */
  databaseUrl?: string
  publicBaseUrl: string
  adminToken?: string
  /** seals stored answers that carry secrets (src/http/seal.ts); unset: derived from adminToken */
  replaySecret?: string
  /** when set, GET /metrics asks for `Authorization: Bearer <METRICS_TOKEN>` */
  metricsToken?: string
  rateLimitPerMinute: number
  trustProxy: boolean
  freeTierNodeCap: number
  freeTierMaxProjects: number
  webhookAllowInsecure: boolean
  webhookBackoffScale: number
  schedulerIntervalMs: number
  /** how long an import's project stays its own without a chunk moving the lease on (IMPORT_LEASE_SECONDS, default 60; src/projects/importing.ts) */
  importLeaseMs: number
  meiliUrl?: string
  meiliApiKey?: string
  embeddingsUrl?: string
  embeddingsModel?: string
  embeddingsApiKey?: string
  /** the built-in sentence model's files: EMBEDDINGS_MODEL_DIR, else DATA_DIR/models/all-MiniLM-L6-v2 if it holds one, else MODEL_BESIDE_CODE */
  embeddingsModelDir: string
  /** 'wasm': the sentence model on onnxruntime-web even where the native build loads (ARBOR_ONNX_RUNTIME) */
  onnxRuntime?: 'wasm'
  /** largest accepted request body, in bytes */
  maxBodyBytes: number
  /** how long a request's body may take to arrive once its headers have (BODY_TIMEOUT_SECONDS, default 20); then 408 */
  bodyTimeoutMs: number
  /** bytes the cached answers of project reads may hold (READ_CACHE_MB; 0 keeps none) */
  readCacheBytes: number
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent'
  /** days changes are kept (HISTORY_DAYS, default 365; 0 keeps them for ever) */
  historyDays: number
  /** false only for bench/history.ts, which measures what recording changes costs (ARBOR_BENCH_NO_HISTORY=1) */
  recordHistory: boolean
  /** on PGlite, the estimated database time one batch or revert may hold (PGLITE_WRITE_BUDGET_MS, default 150; 0: no limit; src/mutate/cost-limit.ts) */
  pgliteWriteBudgetMs: number
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>

const set = (v: string | undefined): v is string => v !== undefined && v !== ''

/**
 * Where `npm install` puts the sentence model: beside the code (gitignored), found from this
 * file's location rather than the working directory, so a server started with any DATA_DIR or
 * from any directory finds it. (In the single executable the model is embedded and wins.)
 */
export const MODEL_BESIDE_CODE = join(import.meta.dir, '..', 'models', 'all-MiniLM-L6-v2')

/** EMBEDDINGS_MODEL_DIR; else DATA_DIR/models/… where an earlier `model:fetch` put it; else beside the code. */
function modelDir(env: Env): string {
  if (set(env.EMBEDDINGS_MODEL_DIR)) return env.EMBEDDINGS_MODEL_DIR
  const inData = `${set(env.DATA_DIR) ? env.DATA_DIR : './data'}/models/all-MiniLM-L6-v2`
  return existsSync(join(inData, 'model.onnx')) ? inData : MODEL_BESIDE_CODE
}

function int(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name]
  if (!set(raw)) return fallback
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max)
    throw new ConfigError(`${name}=${raw} is invalid: expected an integer from ${min} to ${max}`)
  return Number(raw)
}

function positiveNumber(env: Env, name: string, fallback: number): number {
  const raw = env[name]
  if (!set(raw)) return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n <= 0) throw new ConfigError(`${name}=${raw} is invalid: expected a number greater than 0`)
  return n
}

function flag(env: Env, name: string): boolean {
  const raw = env[name]
  if (!set(raw)) return false
  if (/^(1|true|yes|on)$/i.test(raw)) return true
  if (/^(0|false|no|off)$/i.test(raw)) return false
  throw new ConfigError(`${name}=${raw} is invalid: expected true/false, 1/0, yes/no or on/off`)
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name]
  if (!set(raw)) return undefined
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(`${name}=${raw} is invalid: expected a URL starting with ${protocols.join(' or ')}`)
  }
  if (!protocols.includes(parsed.protocol))
    throw new ConfigError(`${name}=${raw} is invalid: expected a URL starting with ${protocols.join(' or ')}`)
  return raw.replace(/\/+$/, '')
}

/** The admin token guards every user's keys: a short one could be guessed. */
export const MIN_ADMIN_TOKEN_LENGTH = 24
/**
 * ADMIN_TOKEN, and REPLAY_SECRET (which guards the same kind of thing, the stored answers that
 * carry secrets) by the same rules: at least MIN_ADMIN_TOKEN_LENGTH characters, none of them
 * blank or a control character (the admin token travels as a Bearer token, which holds none; 30
 * spaces were a secret anyone could guess).
 */
function secret(env: Env, name: 'ADMIN_TOKEN' | 'REPLAY_SECRET'): string | undefined {
  const value = env[name]
  if (!set(value)) return undefined
  const example = 'e.g. the output of openssl rand -hex 24'
  if (/[\s\p{Cc}]/u.test(value))
    throw new ConfigError(
      `${name} holds spaces or control characters: expected at least ${MIN_ADMIN_TOKEN_LENGTH} visible characters, ${example}`,
    )
  if (value.length < MIN_ADMIN_TOKEN_LENGTH)
    throw new ConfigError(`${name} is too short (${value.length} characters): expected at least ${MIN_ADMIN_TOKEN_LENGTH}, ${example}`)
  return value
}

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 3000, 0, 65535)
  const databaseUrl = env.DATABASE_URL === 'memory://' ? 'memory://' : url(env, 'DATABASE_URL', ['postgres:', 'postgresql:'])
  const logLevel = (env.LOG_LEVEL || 'info') as Config['logLevel']
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(logLevel))
    throw new ConfigError(`LOG_LEVEL=${env.LOG_LEVEL} is invalid: expected one of debug, info, warn, error, silent`)
  const embeddingsUrl = url(env, 'EMBEDDINGS_URL', ['http:', 'https:'])
  if (embeddingsUrl && !set(env.EMBEDDINGS_MODEL))
    throw new ConfigError('EMBEDDINGS_MODEL is missing: expected a model name when EMBEDDINGS_URL is set')
  if (set(env.ARBOR_ONNX_RUNTIME) && env.ARBOR_ONNX_RUNTIME !== 'wasm')
    throw new ConfigError(`ARBOR_ONNX_RUNTIME=${env.ARBOR_ONNX_RUNTIME} is invalid: expected wasm (or unset)`)
  return {
    port,
    host: set(env.HOST) ? env.HOST : '0.0.0.0',
    dataDir: set(env.DATA_DIR) ? env.DATA_DIR : './data',
    embeddingsModelDir: modelDir(env),
    onnxRuntime: set(env.ARBOR_ONNX_RUNTIME) ? 'wasm' : undefined,
    cacheDir: set(env.ARBOR_CACHE_DIR) ? env.ARBOR_CACHE_DIR : `${set(env.DATA_DIR) ? env.DATA_DIR : './data'}/cache`,
    databaseUrl,
    publicBaseUrl: url(env, 'PUBLIC_BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`,
    adminToken: secret(env, 'ADMIN_TOKEN'),
    replaySecret: secret(env, 'REPLAY_SECRET'),
    metricsToken: set(env.METRICS_TOKEN) ? env.METRICS_TOKEN : undefined,
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 100, 0),
    trustProxy: flag(env, 'TRUST_PROXY'),
    freeTierNodeCap: int(env, 'FREE_TIER_NODE_CAP', 250, 0),
    freeTierMaxProjects: int(env, 'FREE_TIER_MAX_PROJECTS', 3, 0),
    webhookAllowInsecure: flag(env, 'WEBHOOK_ALLOW_INSECURE'),
    webhookBackoffScale: positiveNumber(env, 'WEBHOOK_BACKOFF_SCALE', 1),
    schedulerIntervalMs: int(env, 'SCHEDULER_INTERVAL_MS', 120_000, 10),
    importLeaseMs: int(env, 'IMPORT_LEASE_SECONDS', 60, 1, 86_400) * 1000,
    meiliUrl: url(env, 'MEILI_URL', ['http:', 'https:']),
    meiliApiKey: set(env.MEILI_API_KEY) ? env.MEILI_API_KEY : undefined,
    embeddingsUrl,
    embeddingsModel: set(env.EMBEDDINGS_MODEL) ? env.EMBEDDINGS_MODEL : undefined,
    embeddingsApiKey: set(env.EMBEDDINGS_API_KEY) ? env.EMBEDDINGS_API_KEY : undefined,
    maxBodyBytes: int(env, 'MAX_BODY_BYTES', 1_048_576, 1024),
    bodyTimeoutMs: int(env, 'BODY_TIMEOUT_SECONDS', 20, 1, 3600) * 1000,
    readCacheBytes: int(env, 'READ_CACHE_MB', 64, 0) * 1024 * 1024,
    logLevel,
    historyDays: int(env, 'HISTORY_DAYS', 365, 0),
    recordHistory: !flag(env, 'ARBOR_BENCH_NO_HISTORY'),
    pgliteWriteBudgetMs: int(env, 'PGLITE_WRITE_BUDGET_MS', 150, 0),
  }
}

/** For commands: the configuration, or one line on stderr naming the bad variable and exit 2. */
export function loadConfigOrExit(env: Env = process.env): Config {
  try {
    return loadConfig(env)
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    console.error(`arbor: ${err.message}`)
    process.exit(2)
  }
}
