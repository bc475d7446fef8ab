import { describe, expect, it } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, loadConfig, MODEL_BESIDE_CODE } from '../src/config'

// self-hosting.md, Environment variables: validated at start; a bad value stops the process
// with one line that names the variable and what it expected.

describe('where the sentence model is looked for', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-config-model-'))
  const inData = `${dataDir}/models/all-MiniLM-L6-v2`

  it('is models/ beside the code, whatever DATA_DIR is, when DATA_DIR holds no model', () => {
    expect(MODEL_BESIDE_CODE).toBe(join(import.meta.dir, '..', 'models', 'all-MiniLM-L6-v2'))
    expect(loadConfig({ DATA_DIR: dataDir }).embeddingsModelDir).toBe(MODEL_BESIDE_CODE)
    expect(loadConfig({ DATA_DIR: join(dataDir, 'elsewhere') }).embeddingsModelDir).toBe(MODEL_BESIDE_CODE)
  })

  it('is DATA_DIR/models/all-MiniLM-L6-v2 when an earlier model:fetch put a model there', () => {
    mkdirSync(inData, { recursive: true })
    writeFileSync(join(inData, 'model.onnx'), 'x')
    try {
      expect(loadConfig({ DATA_DIR: dataDir }).embeddingsModelDir).toBe(inData)
      // EMBEDDINGS_MODEL_DIR wins over both
      expect(loadConfig({ DATA_DIR: dataDir, EMBEDDINGS_MODEL_DIR: '/opt/m' }).embeddingsModelDir).toBe('/opt/m')
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

describe('loadConfig', () => {
  it('applies the documented defaults to an empty environment', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '0.0.0.0',
      dataDir: './data',
      // ./data/models where an earlier model:fetch put it (a checkout of before models/), else beside the code
      embeddingsModelDir: existsSync('./data/models/all-MiniLM-L6-v2/model.onnx') ? './data/models/all-MiniLM-L6-v2' : MODEL_BESIDE_CODE,
      cacheDir: './data/cache',
      databaseUrl: undefined,
      publicBaseUrl: 'http://localhost:3000',
      adminToken: undefined,
      rateLimitPerMinute: 100,
      trustProxy: false,
      freeTierNodeCap: 250,
      freeTierMaxProjects: 3,
      webhookAllowInsecure: false,
      webhookBackoffScale: 1,
      schedulerIntervalMs: 120_000,
      importLeaseMs: 60_000,
      meiliUrl: undefined,
      meiliApiKey: undefined,
      embeddingsUrl: undefined,
      embeddingsModel: undefined,
      embeddingsApiKey: undefined,
      maxBodyBytes: 1_048_576,
      bodyTimeoutMs: 20_000,
      readCacheBytes: 64 * 1024 * 1024,
      logLevel: 'info',
      historyDays: 365,
      recordHistory: true,
      pgliteWriteBudgetMs: 150,
    })
  })

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      DATA_DIR: '/var/lib/arbor',
      ARBOR_CACHE_DIR: '/var/cache/arbor',
      EMBEDDINGS_MODEL_DIR: '/opt/models/minilm',
      ARBOR_ONNX_RUNTIME: 'wasm',
      DATABASE_URL: 'postgres://arbor@db:5432/arbor',
      PUBLIC_BASE_URL: 'https://plan.example.com/',
      ADMIN_TOKEN: 's3cret-s3cret-s3cret-s3cret',
      REPLAY_SECRET: 'r3play-r3play-r3play-r3play',
      RATE_LIMIT_PER_MINUTE: '0',
      TRUST_PROXY: 'true',
      FREE_TIER_NODE_CAP: '10',
      FREE_TIER_MAX_PROJECTS: '0',
      WEBHOOK_ALLOW_INSECURE: '1',
      WEBHOOK_BACKOFF_SCALE: '0.001',
      SCHEDULER_INTERVAL_MS: '500',
      IMPORT_LEASE_SECONDS: '5',
      MEILI_URL: 'http://meili:7700',
      MEILI_API_KEY: 'mk',
      EMBEDDINGS_URL: 'http://ollama:11434/v1',
      EMBEDDINGS_MODEL: 'nomic-embed-text',
      EMBEDDINGS_API_KEY: 'ek',
      MAX_BODY_BYTES: '2048',
      BODY_TIMEOUT_SECONDS: '5',
      READ_CACHE_MB: '16',
      LOG_LEVEL: 'warn',
      HISTORY_DAYS: '0',
      ARBOR_BENCH_NO_HISTORY: '1',
      PGLITE_WRITE_BUDGET_MS: '0',
    })
    expect(config).toEqual({
      port: 8080,
      host: '127.0.0.1',
      dataDir: '/var/lib/arbor',
      embeddingsModelDir: '/opt/models/minilm',
      onnxRuntime: 'wasm',
      cacheDir: '/var/cache/arbor',
      databaseUrl: 'postgres://arbor@db:5432/arbor',
      publicBaseUrl: 'https://plan.example.com',
      adminToken: 's3cret-s3cret-s3cret-s3cret',
      replaySecret: 'r3play-r3play-r3play-r3play',
      rateLimitPerMinute: 0,
      trustProxy: true,
      freeTierNodeCap: 10,
      freeTierMaxProjects: 0,
      webhookAllowInsecure: true,
      webhookBackoffScale: 0.001,
      schedulerIntervalMs: 500,
      importLeaseMs: 5000,
      meiliUrl: 'http://meili:7700',
      meiliApiKey: 'mk',
      embeddingsUrl: 'http://ollama:11434/v1',
      embeddingsModel: 'nomic-embed-text',
      embeddingsApiKey: 'ek',
      maxBodyBytes: 2048,
      bodyTimeoutMs: 5000,
      readCacheBytes: 16 * 1024 * 1024,
      logLevel: 'warn',
      historyDays: 0,
      recordHistory: false,
      pgliteWriteBudgetMs: 0,
    })
  })

  it('defaults PUBLIC_BASE_URL to the configured port', () => {
    expect(loadConfig({ PORT: '4000' }).publicBaseUrl).toBe('http://localhost:4000')
  })

  it('takes memory:// for a throw-away embedded database', () => {
    expect(loadConfig({ DATABASE_URL: 'memory://' }).databaseUrl).toBe('memory://')
  })

  it('treats an empty value as unset', () => {
    expect(loadConfig({ PORT: '', ADMIN_TOKEN: '', TRUST_PROXY: '' })).toMatchObject({
      port: 3000,
      adminToken: undefined,
      trustProxy: false,
    })
  })

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['DATABASE_URL', 'mysql://db/arbor'],
    ['DATABASE_URL', 'not a url'],
    ['PUBLIC_BASE_URL', 'plan.example.com'],
    ['PUBLIC_BASE_URL', 'ftp://plan.example.com'],
    ['RATE_LIMIT_PER_MINUTE', '-5'],
    ['RATE_LIMIT_PER_MINUTE', 'lots'],
    ['TRUST_PROXY', 'maybe'],
    ['FREE_TIER_NODE_CAP', '1e3'],
    ['FREE_TIER_MAX_PROJECTS', 'three'],
    ['WEBHOOK_ALLOW_INSECURE', 'sure'],
    ['WEBHOOK_BACKOFF_SCALE', '0'],
    ['WEBHOOK_BACKOFF_SCALE', 'fast'],
    ['SCHEDULER_INTERVAL_MS', '5'],
    ['IMPORT_LEASE_SECONDS', '0'],
    ['MEILI_URL', 'meili:7700'],
    ['EMBEDDINGS_URL', 'file:///tmp/x'],
    ['ARBOR_ONNX_RUNTIME', 'gpu'],
    ['MAX_BODY_BYTES', '100'],
    ['LOG_LEVEL', 'loud'],
  ])('rejects %s=%j with a one-line ConfigError naming the variable', (name, value) => {
    let error: unknown
    try {
      loadConfig({ [name]: value, ...(name === 'EMBEDDINGS_URL' ? { EMBEDDINGS_MODEL: 'm' } : {}) })
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(ConfigError)
    const message = (error as Error).message
    expect(message).toStartWith(`${name}=`)
    expect(message).toContain('expected')
    expect(message).not.toContain('\n')
  })

  it('requires EMBEDDINGS_MODEL when EMBEDDINGS_URL is set', () => {
    expect(() => loadConfig({ EMBEDDINGS_URL: 'http://ollama:11434/v1' })).toThrow(
      new ConfigError('EMBEDDINGS_MODEL is missing: expected a model name when EMBEDDINGS_URL is set'),
    )
  })
})

describe('the server process', () => {
  it('stops with exit code 2 and one line naming the variable when a value is bad', async () => {
    const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
      cwd: `${import.meta.dir}/..`,
      env: { PATH: process.env.PATH ?? '', PORT: 'eighty', DATABASE_URL: 'memory://' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()])
    expect({ code, out, err }).toEqual({ code: 2, out: '', err: 'arbor: PORT=eighty is invalid: expected an integer from 0 to 65535\n' })
  })

  /** Start the server and collect its stdout until it says it listens; returns its port. */
  async function start(dataDir: string) {
    const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
      cwd: `${import.meta.dir}/..`,
      env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const reader = proc.stdout.getReader()
    let out = ''
    while (!out.includes('"msg":"listening"')) {
      const { done, value } = await reader.read()
      if (done) throw new Error(`server exited early: ${out} ${await new Response(proc.stderr).text()}`)
      out += new TextDecoder().decode(value)
    }
    void (async () => {
      while (!(await reader.read()).done); // keep draining, so the server never blocks on a full pipe
    })()
    const port = Number(/"url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(out)![1])
    return { proc, out, port }
  }

  // an embedded database in a new DATA_DIR whatever TEST_DATABASE_URL says (start() passes no
  // DATABASE_URL): CI's PostgreSQL pass would run the very same two starts again, so only the
  // PGlite pass runs them (test/process.first-start holds the first start on PostgreSQL)
  const once = process.env.TEST_DATABASE_URL ? it.skip : it
  once(
    'prints the owner key once on first start, serves /healthz, and exits cleanly on SIGTERM',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'arbor-first-start-'))
      try {
        const first = await start(dataDir)
        const keyLines = first.out.split('\n').filter((l) => l.startsWith('Arbor API key for owner:'))
        expect(keyLines).toHaveLength(1)
        const key = keyLines[0]!.slice('Arbor API key for owner:'.length).trim()
        expect(key).toMatch(/^arb_[0-9A-Za-z]{32,}$/)
        expect(await (await fetch(`http://127.0.0.1:${first.port}/healthz`)).json()).toEqual({ status: 'ok' })
        const status = await fetch(`http://127.0.0.1:${first.port}/api/v1/tier-status`, { headers: { authorization: `Bearer ${key}` } })
        expect(((await status.json()) as { tier: string }).tier).toBe('team')
        first.proc.kill('SIGTERM')
        expect(await first.proc.exited).toBe(0)

        const second = await start(dataDir)
        expect(second.out).not.toContain('Arbor API key for owner:')
        second.proc.kill('SIGTERM')
        expect(await second.proc.exited).toBe(0)
      } finally {
        rmSync(dataDir, { recursive: true, force: true })
      }
    },
    120_000,
  )
})
